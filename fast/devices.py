"""Which tinygrad device the fast path runs on: ``--device NAME`` (``CPU`` by default).

``open_device`` checks a name and opens the device once, so that a device that cannot run here is one line naming the
device and why (no GPU, no driver, no compiler) before any case starts; ``default_device`` makes it tinygrad's default
device for the graphs built inside the block (tinygrad's ``DEV`` context variable), so every input, kernel and output of a
case lives there. The names are tinygrad's target strings: ``CPU``, ``AMD`` (hardware), ``MOCK+AMD`` / ``MOCK+AMD::gfx950``
(tinygrad's mock GPU, the AMD backend on an ISA emulator), ``NV`` / ``CUDA`` (an NVIDIA GPU)."""
from __future__ import annotations
import contextlib
from tinygrad import Device
from tinygrad.helpers import Context
from uopcheck.spec.admission import check_device
from uopcheck.spec.errors import SpecError

def open_device(name:str) -> str:
  """the tinygrad device ``name`` makes tensors on (e.g. ``MOCK+AMD::gfx950`` -> ``AMD``), opened; else one SpecError"""
  check_device(name, "--device: ")
  try:
    with Context(DEV=name):
      dev = Device.DEFAULT
      Device[dev]
  except Exception as e:
    raise SpecError(f"--device {name}: cannot run here ({type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]})") from None
  return dev

@contextlib.contextmanager
def default_device(name:str):
  """``name`` as tinygrad's default device inside the block (opened first: a device that cannot run is a SpecError)"""
  open_device(name)
  with Context(DEV=name): yield Device.DEFAULT
