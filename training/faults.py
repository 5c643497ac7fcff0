"""Faults injected into a gated step, to measure what the gate catches (``bench/train_gate.py``'s recall table, the tests).

Each injector is a context manager over one ``CPUGate.run``. ``corrupt_launch`` changes what one launch of the captured
step left in its output -- one element, as a faulty device, DMA engine or link would have written it, once: the
re-run from the same inputs then writes the right bytes (a nondeterministic fault). ``diverge_replica`` flips one
byte of one device's copy of a replicated weight after the step's launches (a broadcast or transfer that went wrong
outside any checked launch). Nothing here changes tinygrad: a compiler bug is injected with a mutant (``fuzz/mutants.py``)."""
from __future__ import annotations
import contextlib
from dataclasses import dataclass, replace
from typing import Iterator
import numpy as np
from tinygrad.device import Buffer, MultiBuffer
from uopcheck.fast.stepper import Step, snapshot, restore, single_buffer
from uopcheck.fast.jit_capture import step_captured, jit_inputs
from uopcheck.training import gate as gate_mod

def flip_element(raw:bytes|None, buf:Buffer, element:int|None=None) -> tuple[bytes, int]:
  """``raw`` (the bytes of ``buf``) with one element far off -- ``element`` modulo its size, or the middle one -- and which:
  the top byte's bit 6 (an exponent bit of a float, 2**30 of an int32) or, for a 1-byte element (bool, int8), bit 0 (a
  bool's nonzero byte stays True under any other bit)"""
  el, size = buf.size // 2 if element is None else element % buf.size, buf.dtype.itemsize
  b = bytearray(raw or b"")
  b[el * size + size - 1] ^= 0x40 if size > 1 else 0x01
  return bytes(b), el

def _target_slot(st:Step) -> int|None:
  """the output a launch wrote: a kernel's first stored buffer, a copy's destination (argument 0)"""
  slots = [0] if st.kind == "copy" else sorted(gate_mod._stored_slots(st.call.src[0]))
  return next((i for i in slots if st.after[i]), None)

@contextlib.contextmanager
def _patched_stream(on_step=None, at_end=None) -> Iterator[dict]:
  """the gate's stream of launches (``iter_captured``) with ``on_step(step) -> dict|None`` called on each launch before the
  gate sees it, and ``at_end() -> dict`` after the last; in the first validated step only (a fault, not a property of
  the program). Yields the dict the hook that fired returned."""
  orig, hit = gate_mod.iter_captured, dict[str, object]()
  def faulty(*a, **kw):
    first = not hit
    for st in orig(*a, **kw):
      if first and on_step is not None and not hit and (h := on_step(st)): hit.update(h)
      yield st
    if first and at_end is not None: hit.update(at_end())
  gate_mod.iter_captured = faulty
  try: yield hit
  finally: gate_mod.iter_captured = orig

def corrupt_launch(kind:str, which:int, element:int|None=None):
  """The ``which``-th launch of ``kind`` ("kernel" or "copy") that wrote an output writes one element wrong, once:
  ``element`` (modulo the buffer's size), or its middle one. Yields a dict that names the launch hit."""
  seen = [0]
  def on_step(st:Step) -> dict|None:
    if st.kind != kind or (slot := _target_slot(st)) is None: return None
    seen[0] += 1
    if seen[0] - 1 != which: return None
    b = single_buffer(gate_mod._args(st.call)[slot])
    st.after[slot], el = flip_element(st.after[slot], b, element)
    return {"launch": st.index, "name": st.name or kind, "slot": slot, "element": el, "device": str(b.device)}
  return _patched_stream(on_step=on_step)

def diverge_replica(trainer, tensor:int=0, device:int=1):
  """After the step's launches, device ``device``'s copy of replicated state tensor ``tensor`` has its middle element's
  top byte flipped (``flip_element``). Needs a data-parallel trainer."""
  def at_end() -> dict:
    u = trainer.state_tensors()[tensor].uop.mselect(device)
    restore(u, flip_element(snapshot(u), single_buffer(u))[0])
    return {"tensor": tensor, "device": str(single_buffer(u).device)}
  return _patched_stream(at_end=at_end)

@dataclass
class RecallRow:
  """what the per-launch checks catch of ``n`` injected one-element faults of one kind"""
  fault: str
  n: int = 0
  cpu: int = 0          # caught by the all-lanes check against the CPU (kernels) / the byte compare (copies) / replica compare
  sampled_ref: int = 0  # caught by the reference on sampled lanes (every lane of a kernel whose full run is cheap)
  freivalds: int = 0    # caught by Freivalds' projections (every lane of a contraction kernel)
  reference: int = 0    # caught by the gate's reference, sampled lanes and Freivalds together (the CPU apart)
  contraction: int = 0  # of the n, faults in a launch Freivalds' check applies to
  full_ref: int = 0     # caught by the reference on every lane
  any: int = 0          # caught by the gate (any of its checks)

def launch_recall(gate, batch, lr:float, k:int, seed:int, sample:int) -> list[RecallRow]:
  """Replay the captured step once, then inject ``k`` faults of each kind -- one element of a random kernel launch's output,
  one element of a random device-to-device copy, one element of one device's copy of a random replicated state tensor --
  each alone, each at a random element, and ask the gate's own check for that launch (``check_step_kernel`` with the
  sampled reference, Freivalds' projections and the full reference, ``check_copy``, ``CPUGate._check_replicas``) whether it
  sees it. The state is restored."""
  rng = np.random.default_rng(seed)
  tr, before = gate.trainer, gate.trainer.snapshot()
  log = step_captured(gate.capture, jit_inputs(gate._step_inputs(batch, lr)))
  rows = {kind: RecallRow(kind) for kind in ("kernel output element", "all-reduce copy element", "replica of a weight")}
  pools = {"kernel output element": [st for st in log.steps if st.kind == "kernel" and _target_slot(st) is not None],
           "all-reduce copy element": [st for st in log.steps if st.kind == "copy" and _target_slot(st) is not None]}
  for kind, pool in pools.items():
    for _ in range(k if pool else 0):
      st = pool[int(rng.integers(len(pool)))]
      slot = _target_slot(st)
      assert slot is not None
      b, after = single_buffer(gate_mod._args(st.call)[slot]), list(st.after)
      after[slot] = flip_element(after[slot], b, int(rng.integers(b.size)))[0]
      bad, row = replace(st, after=after), rows[kind]
      row.n += 1
      if st.kind == "copy":
        caught = not gate_mod.check_copy(bad)[0]
        row.cpu += caught
        row.any += caught
        continue
      vv = {**log.var_vals, **st.device_vars}
      v = gate_mod.check_step_kernel(bad, vv, (sample, int(rng.integers(1 << 30))), freivalds=gate.freivalds)
      full = gate_mod.check_step_kernel(bad, vv, None)
      row.cpu += not v.cpu_ok
      row.sampled_ref += not v.lanes_ok
      row.freivalds += not v.freivalds_ok
      row.reference += not v.ref_ok
      row.contraction += v.freivalds_lanes > 0
      row.full_ref += not full.ref_ok
      row.any += not (v.cpu_ok and v.ref_ok)
  replicated = [i for i, t in enumerate(tr.state_tensors()) if isinstance(t.uop.buffer, MultiBuffer) and t.uop.axis is None]
  for _ in range(k if replicated else 0):
    i = replicated[int(rng.integers(len(replicated)))]
    u = tr.state_tensors()[i].uop.mselect(1)
    b, raw = single_buffer(u), snapshot(u)
    restore(u, flip_element(raw, b, int(rng.integers(b.size)))[0])
    res = gate_mod.GateResult()
    gate._check_replicas(res, 0)
    restore(u, raw)
    row = rows["replica of a weight"]
    row.n += 1
    row.cpu += not res.replicas_ok
    row.any += not res.replicas_ok
  tr.restore(before)
  return [r for r in rows.values() if r.n]
