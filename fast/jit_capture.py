"""What TinyJit captured, and a way to replay it one kernel at a time.

When TinyJit captures a function it memory-plans the scheduled calls and compiles them (``jit.jit_lower``); the
replay then runs those exact programs on those exact (planned) buffers. tinygrad's ``VALIDATE_WITH_CPU`` runs only
outside the JIT, so the replayed kernels are never checked. ``recording_jit()`` records, for each capture, the
planned linear twice: with each call's kernel AST (as rangeify made it) and with its compiled PROGRAM.
``step_captured`` then runs the compiled calls in order, each through tinygrad's own compile/link/exec path
(HCQ2 when on), with every argument buffer snapshotted before and after, which is what a per-kernel check needs."""
from __future__ import annotations
import contextlib, time
from typing import Iterator
from dataclasses import dataclass, field
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
import tinygrad.engine.jit as tg_jit
import tinygrad.engine.realize as tg_realize
from uopcheck.spec.errors import SpecError
from uopcheck.fast import runner
from uopcheck.fast.stepper import Step, StepLog, snapshot, per_device_calls

@dataclass
class JitCapture:
  """One TinyJit capture: the memory-planned calls, before (``ast_calls``) and after (``program_calls``) compile."""
  ast_calls: list[UOp]
  program_calls: list[UOp]
  n_inputs: int
  linked: dict[bytes, tuple[UOp, list[UOp]]] = field(default_factory=dict)  # resolved call -> (linked linear, its inputs)

  def kernel_indices(self) -> list[int]: return [i for i, c in enumerate(self.ast_calls) if c.src[0].op is Ops.SINK]

@dataclass
class JitRecorder:
  captures: list[JitCapture] = field(default_factory=list)
  pending: list[tuple[UOp, UOp]] = field(default_factory=list)

_orig_jit_lower = tg_jit.jit_lower
_RECORDERS: list[JitRecorder] = []

def _recording_jit_lower(linear:UOp, held_bufs:set[UOp], input_uops:list[UOp]) -> UOp:
  if not _RECORDERS: return _orig_jit_lower(linear, held_bufs, input_uops)
  rec = _RECORDERS[-1]
  rec.pending.clear()
  runner._STATE["compile_log"] = rec.pending
  try: out = _orig_jit_lower(linear, held_bufs, input_uops)
  finally: runner._STATE["compile_log"] = None
  if not rec.pending: raise SpecError("TinyJit capture compiled nothing: the JIT's lowering path changed (engine/jit.py jit_lower)")
  before, after = max(rec.pending, key=lambda p: len(p[0].src))  # the whole planned linear (hcq2 may compile helpers too)
  rec.captures.append(JitCapture(list(before.src), list(after.src), len(input_uops)))
  return out

def install_hooks() -> None:
  """jit.py looks jit_lower up at call time (a plain module function, not a PatternMatcher rule), so one wrapper, installed
  by the first recording, serves every recorder; with none active it is the original. Compiles are read through the
  runner's hook."""
  runner.install_hooks()
  tg_jit.jit_lower = _recording_jit_lower

@contextlib.contextmanager
def recording_jit(rec:JitRecorder|None=None):
  """Record every TinyJit capture made inside the block."""
  install_hooks()
  rec = rec if rec is not None else JitRecorder()
  _RECORDERS.append(rec)
  try: yield rec
  finally: _RECORDERS.remove(rec)

def resolve_args(call:UOp, inputs:tuple[UOp, ...]) -> UOp:
  """The call with each input PARAM replaced by the buffer the JIT would bind to it this time."""
  def res(b:UOp) -> UOp:
    if b.op is Ops.PARAM: return inputs[b.arg.slot]
    if b.op in (Ops.MSELECT, Ops.SHRINK, Ops.BITCAST) and b.src and b.src[0].op is Ops.PARAM: return b.replace(src=(inputs[b.src[0].arg.slot],
                                                                                                                    *b.src[1:]))
    return b
  return call.replace(src=(call.src[0], *[b if b.is_bound_var else res(b) for b in call.src[1:]]))

def jit_inputs(args:tuple, kwargs:dict|None=None) -> tuple[UOp, ...]:
  """The input buffers TinyJit binds for a call with these arguments (tinygrad's own _prepare_jit_inputs)."""
  return tuple(tg_jit._prepare_jit_inputs(args, kwargs or {})[0])

def step_captured(cap:JitCapture, inputs:tuple[UOp, ...], var_vals:dict[str, int]|None=None) -> StepLog:
  """Run the captured, compiled calls one at a time on ``inputs``; each Step holds the kernel-AST call (buffers
  resolved) so the reference can interpret it, and the bytes of every argument before and after the device ran it; a call
  over multi-device buffers is one Step per device (``per_device_calls``). Every Step is kept: ``iter_captured`` streams."""
  log = StepLog(var_vals=dict(var_vals or {}))
  log.steps.extend(iter_captured(cap, inputs, log.var_vals))
  return log

def iter_captured(cap:JitCapture, inputs:tuple[UOp, ...], var_vals:dict[str, int]) -> Iterator[Step]:
  """``step_captured`` one launch at a time: each Step is yielded as soon as the device ran it and is not kept, so a
  checker that drops it holds one launch's argument bytes at a time, whatever the size of the step."""
  if len(inputs) != cap.n_inputs: raise SpecError(f"the JIT was captured with {cap.n_inputs} inputs, got {len(inputs)}")
  n = 0
  for ast_call, prg_call in zip(cap.ast_calls, cap.program_calls):
    call, prg = resolve_args(ast_call, inputs), resolve_args(prg_call, inputs)
    launches = per_device_calls(call)   # one per device for a call over multi-device buffers
    before = [[snapshot(a) for a in c.src[1:] if not a.is_bound_var] for c, _ in launches]
    # tinygrad's own non-JIT path (run_linear: compile_linear with the call's buffers as inputs, link, exec); the linked
    # linear is kept per call, so replays over the same input buffers skip relowering the already-compiled program
    if (hit := cap.linked.get(prg.key)) is None:
      ins: list[UOp] = []
      hit = cap.linked[prg.key] = (tg_realize.link_linear(tg_realize.compile_linear(UOp(Ops.LINEAR, src=(prg,)), input_uops=ins)), ins)
    st = time.perf_counter()
    tg_realize.run_linear(hit[0], var_vals, input_uops=hit[1], update_stats=False, jit=True, wait=True)
    dt = time.perf_counter() - st
    name = prg_call.src[0].arg.name if prg_call.src[0].op is Ops.PROGRAM else ""
    for (c, dvars), b in zip(launches, before):
      yield Step(n, c, b, [snapshot(a) for a in c.src[1:] if not a.is_bound_var], dt / len(launches), name, dvars)
      n += 1
