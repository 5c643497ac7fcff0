"""Which tinygrad device the fast path runs on: ``--device NAME`` (``CPU`` by default).

``open_device`` checks a name and opens the device once, so that a device that cannot run here is one line naming the
device and why (no GPU, no driver, no compiler) before any case starts; ``default_device`` makes it tinygrad's default
device for the graphs built inside the block (tinygrad's ``DEV`` context variable), so every input, kernel and output of a
case lives there. The names are tinygrad's target strings: ``CPU``, ``AMD`` (hardware), ``MOCK+AMD`` / ``MOCK+AMD::gfx950``
(tinygrad's mock GPU, the AMD backend on an ISA emulator), ``NV`` / ``CUDA`` (an NVIDIA GPU).

The mock GPU is tinygrad's (``test/mockgpu``, not in the PyPI wheel): ``mock_gpu_source`` finds it through
``TINYGRAD_SRC`` (a tinygrad checkout) or ``../shared/tinygrad-src`` beside this checkout and puts it on ``sys.path``; it is
never copied into uopcheck. A gfx950 (MI350X) target needs an LLVM that knows it: ``LLVM_PATH`` if set, else Debian's
``libllvm22`` (``llvm22_library``)."""
from __future__ import annotations
import contextlib, glob, os, pathlib, sys
from tinygrad import Device
from tinygrad.helpers import Context
from uopcheck.spec.admission import check_device
from uopcheck.spec.errors import SpecError

def mock_gpu_source() -> pathlib.Path|None:
  """the folder holding tinygrad's ``test/mockgpu`` (TINYGRAD_SRC, else ../shared/tinygrad-src beside this checkout), or None"""
  here = pathlib.Path(__file__).resolve().parents[1]
  for d in ([os.environ["TINYGRAD_SRC"]] if os.environ.get("TINYGRAD_SRC") else []) + [str(here.parent / "shared" / "tinygrad-src")]:
    if (pathlib.Path(d) / "test" / "mockgpu" / "mockgpu.py").is_file(): return pathlib.Path(d).resolve()
  return None

def llvm22_library() -> str|None:
  """Debian's libllvm22 (it knows gfx950), or None"""
  pats = ("/usr/lib/*/libLLVM-22.so", "/usr/lib/*/libLLVM.so.22*", "/usr/lib/llvm-22/lib/libLLVM*.so*")
  found = [f for pat in pats for f in sorted(glob.glob(pat))]
  return found[0] if found else None

def _prepare_mock(name:str) -> None:
  """tinygrad's mock GPU on the path, and for a gfx950 target an LLVM that compiles for it; else one SpecError saying what is missing"""
  if (src := mock_gpu_source()) is None:
    raise SpecError(f"--device {name}: tinygrad's mock GPU (test/mockgpu, not in the PyPI wheel) was not found: set TINYGRAD_SRC to a "
                    "tinygrad checkout, or put ../shared/tinygrad-src beside this checkout")
  if str(src) not in sys.path: sys.path.insert(0, str(src))
  if "gfx950" in name and not os.environ.get("LLVM_PATH"):
    if (lib := llvm22_library()) is None:
      raise SpecError(f"--device {name}: gfx950 (MI350X) needs LLVM >= 20 and no libllvm22 is installed (Debian package libllvm22; or set LLVM_PATH)")
    os.environ["LLVM_PATH"] = lib
  # tinygrad's hcq.py picks the mock's file interface when it is imported under DEV=MOCK+...; the CLI and the suite import
  # it earlier (the CPU device's HCQ2 path), so hand it the mock's the same way (DEV is already the mock here)
  hcq = sys.modules.get("tinygrad.runtime.support.hcq")
  if hcq is not None and hcq.FileIOInterface.__name__ != "MockFileIOInterface":
    if "tinygrad.runtime.ops_amd" in sys.modules:
      raise SpecError(f"--device {name}: tinygrad's AMD backend was loaded without the mock GPU in this process; start it with DEV={name}")
    from test.mockgpu.mockgpu import MockFileIOInterface
    setattr(hcq, "FileIOInterface", MockFileIOInterface)

def open_device(name:str, hcq2:bool|None=None) -> str:
  """the tinygrad device ``name`` makes tensors on (e.g. ``MOCK+AMD::gfx950`` -> ``AMD``), opened; else one SpecError. On AMD
  tinygrad chooses the HCQ2 driver (``extra.hcq2``) when the device opens, so ``hcq2`` (None: as the environment says) holds
  then; a device opened once keeps its driver for the process. The mock GPU always opens on the plain path: HCQ2 rings the
  AMD doorbell from native code the mock cannot see (README, "The production path in emulation")."""
  from uopcheck.fast.runner import hcq2_mode
  check_device(name, "--device: ")
  if name.startswith("MOCK+"): hcq2 = False
  try:
    with Context(DEV=name), (hcq2_mode(hcq2) if hcq2 is not None else contextlib.nullcontext()):
      if name.startswith("MOCK+"): _prepare_mock(name)
      dev = Device.DEFAULT
      Device[dev]
  except SpecError: raise
  except Exception as e:
    raise SpecError(f"--device {name}: cannot run here ({type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]})") from None
  return dev

@contextlib.contextmanager
def default_device(name:str, hcq2:bool|None=None):
  """``name`` as tinygrad's default device inside the block (opened first, under ``hcq2``: a device that cannot run is a
  SpecError). On the mock GPU HCQ2 is off inside the block too, whatever was asked (see ``open_device``)."""
  from uopcheck.fast.runner import hcq2_mode
  open_device(name, hcq2)
  with Context(DEV=name), (hcq2_mode(False) if name.startswith("MOCK+") else contextlib.nullcontext()): yield Device.DEFAULT
