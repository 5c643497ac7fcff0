"""Run a realize one scheduled call at a time and snapshot every argument buffer before and after each call.

``Tensor.realize`` hands the schedule (a LINEAR of CALLs over BUFFERs) to ``run_linear``; the stepper takes its
place for the duration of a ``stepping()`` block and runs each call as its own one-call LINEAR through the same
tinygrad compile/link/exec path, so every kernel's inputs are captured exactly as the device saw them."""
from __future__ import annotations
import contextlib, time
import numpy as np
from dataclasses import dataclass, field
from typing import cast
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, AxisType
import tinygrad.tensor as tg_tensor
from tinygrad.device import Buffer, MultiBuffer
import tinygrad.engine.realize as tg_realize

@dataclass
class Step:
  index: int
  call: UOp                      # CALL(SINK|COPY|..., *BUFFER args) as scheduled
  before: list[bytes|None]       # each argument's bytes before the call (None: not allocated yet)
  after: list[bytes|None]
  device_s: float = 0.0
  name: str = ""
  device_vars: dict[str, int] = field(default_factory=dict)   # what the launch binds per device (``_device_num``)

  @property
  def kind(self) -> str: return {Ops.SINK: "kernel", Ops.COPY: "copy"}.get(self.call.src[0].op, self.call.src[0].op.name.lower())

@dataclass
class StepLog:
  steps: list[Step] = field(default_factory=list)
  var_vals: dict[str, int] = field(default_factory=dict)

def single_buffer(u:UOp) -> Buffer:
  """the one device Buffer behind ``u`` (a kernel argument is never a multi-device buffer)"""
  return cast(Buffer, u.buffer)

def per_device_calls(call:UOp) -> list[tuple[UOp, dict[str, int]]]:
  """A call as the devices run it: tinygrad launches a call over multi-device buffers once per device (engine/realize.py
  ``unwrap_multi``), device j on each buffer's j-th shard with ``_device_num=j`` where the AST reads it. Each launch is
  returned as its own call over single buffers (``MSELECT`` j of every multi-device argument) with those variables."""
  args = [a for a in call.src[1:] if not a.is_bound_var]
  multi = [a for a in args if isinstance(a.buffer, MultiBuffer)]
  if not multi: return [(call, {})]
  n = len(cast(MultiBuffer, multi[0].buffer).bufs)
  dnum = any((x.op is Ops.RANGE and x.arg[-1] is AxisType.DEVICE) or (x.op is Ops.PARAM and getattr(x.arg, "name", None) == "_device_num")
             for x in call.src[0].toposort())
  return [(call.replace(src=(call.src[0], *[a.mselect(j) if not a.is_bound_var and isinstance(a.buffer, MultiBuffer) else a for a in call.src[1:]])),
           {"_device_num": j} if dnum else {}) for j in range(n)]

def snapshot(u:UOp) -> bytes|None:
  """A buffer's bytes (None: not allocated yet). Host-visible buffers (CPU) are read in place, others copied out."""
  b = single_buffer(u)
  if not b.is_allocated() or not b.is_initialized(): return None
  return bytes(b.as_memoryview(allow_zero_copy=True))

def restore(u:UOp, data:bytes|None) -> None:
  """write ``data`` into ``u``'s buffer in place; a multi-device tensor gets it on every device: whole where it is
  replicated, its shard where it is sharded (``data`` is then the whole logical tensor, split on the shard axis)"""
  if data is None: return
  if not isinstance(mb := u.buffer, MultiBuffer): return _restore_one(single_buffer(u), data)
  if u.axis is None: parts = [data] * len(mb.bufs)
  else:
    whole = np.frombuffer(data, np.uint8).reshape(*[int(d) for d in u.shape], mb.dtype.itemsize)
    parts = [np.ascontiguousarray(p).tobytes() for p in np.split(whole, len(mb.bufs), axis=u.axis)]
  for b, part in zip(mb.bufs, parts):
    if len(part) != b.nbytes: raise ValueError(f"restore: {len(part)} bytes for the {b.nbytes}-byte shard on {b.device}")
    _restore_one(b, part)

def _restore_one(b:Buffer, data:bytes) -> None:
  b = b.ensure_allocated()
  if hasattr(b.allocator, "_as_buffer"):
    b.as_memoryview(force_zero_copy=True).cast("B")[:] = data
  else: b.copy_from(Buffer("PYTHON", b.size, b.dtype, opaque=memoryview(bytearray(data))))

def run_call(call:UOp, var_vals:dict[str, int], input_uops=()) -> float:
  """Run one scheduled call through tinygrad's own compile, link and exec; returns wall seconds (synchronized)."""
  st = time.perf_counter()
  tg_realize.run_linear(UOp(Ops.LINEAR, src=(call,)), var_vals, input_uops, update_stats=False, wait=True)
  return time.perf_counter() - st

@contextlib.contextmanager
def stepping(log:StepLog, name_of=lambda call: ""):
  orig = tg_tensor.run_linear
  def stepped(linear:UOp, var_vals=None, input_uops=(), update_stats=True, jit=False, wait=False):
    log.var_vals.update(var_vals or {})
    for call in linear.src:
      args = [a for a in call.src[1:] if not a.is_bound_var]
      before = [snapshot(a) for a in args]
      dt = run_call(call, var_vals or {}, input_uops)
      log.steps.append(Step(len(log.steps), call, before, [snapshot(a) for a in args], dt, name_of(call)))
  tg_tensor.run_linear = stepped
  try: yield log
  finally: tg_tensor.run_linear = orig
