"""Faults injected into a gated step, to measure what the gate catches (``bench/train_gate.py``'s recall table, the tests).

Each injector is a context manager over one ``CPUGate.run``. ``corrupt_launch`` changes what one launch of the captured
step left in its output -- one element, as a faulty device, DMA engine or link would have written it, once: the
re-run from the same inputs then writes the right bytes (a nondeterministic fault). ``diverge_replica`` flips one
byte of one device's copy of a replicated weight after the step's launches (a broadcast or transfer that went wrong
outside any checked launch). Nothing here changes tinygrad: a compiler bug is injected with a mutant (``fuzz/mutants.py``)."""
from __future__ import annotations
import contextlib
from typing import Iterator
from uopcheck.fast.stepper import Step, snapshot, restore, single_buffer
from uopcheck.training import gate as gate_mod

def flip_element(raw:bytes, itemsize:int, element:int) -> bytes:
  """one element far off: the top byte's bit 6 (an exponent bit of a float, 2**30 of an int32) or, for a 1-byte element
  (bool, int8), bit 0 -- a bool's nonzero byte stays True under any other bit"""
  b = bytearray(raw)
  b[element * itemsize + itemsize - 1] ^= 0x40 if itemsize > 1 else 0x01
  return bytes(b)

def _target_slot(st:Step) -> int|None:
  """the output a launch wrote: a kernel's first stored buffer, a copy's destination (argument 0)"""
  slots = [0] if st.kind == "copy" else sorted(gate_mod._stored_slots(st.call.src[0]))
  return next((i for i in slots if st.after[i]), None)

@contextlib.contextmanager
def _patched_step(after_step) -> Iterator[dict]:
  orig, hit = gate_mod.step_captured, dict[str, object]()
  def faulty(*a, **kw):
    log = orig(*a, **kw)
    if not hit: hit.update(after_step(log))   # the first validated step only: a fault, not a property of the program
    return log
  gate_mod.step_captured = faulty
  try: yield hit
  finally: gate_mod.step_captured = orig

def corrupt_launch(kind:str, which:int, element:int|None=None):
  """The ``which``-th launch (modulo their number) of ``kind`` ("kernel" or "copy") writes one element wrong, once:
  ``element`` (modulo the buffer's size), or its middle one. Yields a dict that names the launch hit."""
  def hit(log) -> dict:
    launches = [st for st in log.steps if st.kind == kind and _target_slot(st) is not None]
    if not launches: return {"launch": None}
    st = launches[which % len(launches)]
    slot = _target_slot(st)
    assert slot is not None
    b = single_buffer(gate_mod._args(st.call)[slot])
    el = b.size // 2 if element is None else element % b.size
    st.after[slot] = flip_element(st.after[slot] or b"", b.dtype.itemsize, el)
    return {"launch": st.index, "name": st.name or kind, "slot": slot, "element": el, "device": str(b.device)}
  return _patched_step(hit)

def diverge_replica(trainer, tensor:int=0, device:int=1):
  """After the step's launches, device ``device``'s copy of replicated state tensor ``tensor`` has its middle element's
  top byte flipped (``flip_element``). Needs a data-parallel trainer."""
  def hit(log) -> dict:
    t = trainer.state_tensors()[tensor]
    u = t.uop.mselect(device)
    b = single_buffer(u)
    restore(u, flip_element(snapshot(u) or b"", b.dtype.itemsize, b.size // 2))
    return {"tensor": tensor, "device": str(b.device)}
  return _patched_step(hit)
