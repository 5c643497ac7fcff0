"""Stage-by-stage checking: which kernel, and which stage -- scheduler, codegen or runtime -- first disagrees.

1. Per kernel: each scheduled kernel's inputs exactly as the device saw them (``fast.stepper``) run through the
   reference kernel interpreter; its stored buffers are compared with what the device wrote.
2. The schedule: the kernels run in scheduled order by the reference kernel interpreter, over a byte-level model
   of device memory (memory-planned views share their base buffer), must reproduce the tensor-level reference.
   If every kernel agrees with its own AST but the chain does not, the kernel graph is wrong: blame the scheduler.
3. A kernel that disagrees is re-run from the same inputs on the other runtime path (HCQ2 <-> plain): if the two
   runtimes differ, blame the runtime; if they agree on the wrong value, the compiled program is wrong: codegen."""
from __future__ import annotations
import time
from dataclasses import dataclass, field, asdict
from typing import Any, Callable
import numpy as np
from tinygrad import Tensor
from tinygrad.uop.ops import UOp
from uopcheck.spec.errors import SpecError, KernelFault, first_line
from uopcheck.results import Column, Table, Result
from uopcheck.results.render import TERM
from uopcheck.spec.compare import compare
from uopcheck.spec.floats import graph_tolerance
from uopcheck.check.tolerance import tolerance_for
from uopcheck.spec.numpy_dtypes import from_bytes, to_bytes
from uopcheck.ref.tensor_interp import TensorInterpreter, load_inputs
from uopcheck.ref.kernel_interp import KernelInterpreter, BufferState
from uopcheck.fast.runner import FastResult, capture, hcq2_mode, load_scheduler, check_stages, to_numpy
from uopcheck.fast.stepper import StepLog, Step, stepping, snapshot, restore, run_call, single_buffer

@dataclass
class KernelCheck:
  index: int
  name: str
  ops: int = 0
  ok: bool = True
  max_err: float = 0.0
  ref_s: float = 0.0
  device_s: float = 0.0
  buffer: int|None = None
  first_index: tuple|None = None
  ref_value: object = None
  fast_value: object = None
  stage: str|None = None
  error: str = ""
  lanes: int = 0          # output elements compared (all of them, or the sampled ones)

@dataclass
class PerKernelResult:
  name: str
  kernels: list[KernelCheck] = field(default_factory=list)
  tensor_ok: bool = False
  chain_ok: bool = False
  blame: str|None = None
  blamed_kernel: str|None = None
  message: str = ""
  hcq2: bool = True
  notes: list[str] = field(default_factory=list)
  undefined_introduced: int = 0   # output lanes defined by the tensor graph, undefined in the kernel ASTs, wrong on the device

  @property
  def ok(self) -> bool: return self.blame is None and not self.message

  def result(self, scheduler:str|None=None) -> Result:
    rows = [{"#": k.index, "kernel": k.name[:28], "ops": k.ops, "result": "PASS" if k.ok else "FAIL", "max abs err": k.max_err,
             "ref ms": k.ref_s * 1e3, "fast ms": k.device_s * 1e3,
             "notes": k.error or (f"buffer {k.buffer} first differs at {k.first_index}: ref={k.ref_value!r} fast={k.fast_value!r} -> {k.stage}"
                                  if not k.ok else "")} for k in self.kernels]
    return Result("check_per_kernel", f"{self.name} ({'HCQ2' if self.hcq2 else 'plain'} path, scheduler={scheduler or 'tinygrad rangeify'})",
                  {**{k: v for k, v in asdict(self).items() if k != "kernels"}, "ok": self.ok, "kernels": rows},
                  tables=[Table(KERNEL_COLUMNS, rows)],
                  summary=["(fast ms: the call's wall time through tinygrad's compile/link/exec, compile included the first time a kernel is seen)",
                           f"kernel chain (ref kernels in scheduled order) == tensor ref: {'yes' if self.chain_ok else 'NO'}; "
                           f"fast output == tensor ref: {'yes' if self.tensor_ok else 'NO'}", "verdict: " + self.verdict()]
                          + [f"note: {n}" for n in self.notes])

  def verdict(self) -> str:
    if self.ok: return "all stages agree"
    return (f"{self.blame or 'error'} is to blame" + (f" (kernel {self.blamed_kernel})" if self.blamed_kernel else "")
            + (f": {self.message}" if self.message else ""))

  def table(self) -> str: return TERM.render(self.result())

KERNEL_COLUMNS = [Column("#", width=3, align=">"), Column("kernel", width=28), Column("ops", width=5, align=">"), Column("result", width=6),
                  Column("max abs err", width=12, align=">", fmt=".3g"), Column("ref ms", width=8, align=">", fmt=".2f"),
                  Column("fast ms", width=10, align=">", fmt=".2f"), Column("notes")]

# ** a byte-level model of device memory, keyed by base buffer **

class MemoryModel:
  def __init__(self): self.mem: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # id(base) -> (bytes, undefined, ref_written)

  def _region(self, u:UOp) -> tuple[np.ndarray, np.ndarray, np.ndarray, slice]:
    b = single_buffer(u)
    base = b.base
    if id(base) not in self.mem:
      n = base.nbytes
      self.mem[id(base)] = (np.zeros(n, np.uint8), np.ones(n, bool), np.zeros(n, bool))
    data, undef, written = self.mem[id(base)]
    return data, undef, written, slice(b.offset, b.offset + b.nbytes)

  def import_device(self, u:UOp, before:bytes|None) -> None:
    """Bytes the reference never wrote take the device's values (external inputs); others keep the reference's."""
    data, undef, written, sl = self._region(u)
    if before is None: return
    dev = np.frombuffer(before, np.uint8)
    take = ~written[sl]
    data[sl][take] = dev[take]
    undef[sl][take] = False

  def read(self, u:UOp) -> BufferState:
    data, undef, _, sl = self._region(u)
    b = u.buffer
    vals = from_bytes(data[sl].tobytes(), b.dtype, (b.size,))
    und = undef[sl].reshape(b.size, b.dtype.itemsize).any(axis=1) if b.dtype.itemsize else np.zeros(b.size, bool)
    return BufferState(vals, und)

  def write(self, u:UOp, st:BufferState) -> None:
    data, undef, written, sl = self._region(u)
    b = u.buffer
    data[sl] = np.frombuffer(to_bytes(st.value, b.dtype), np.uint8)
    undef[sl] = np.repeat(st.undefined, b.dtype.itemsize)
    written[sl] = True

def state_from_bytes(u:UOp, raw:bytes|None) -> BufferState:
  """a kernel argument's bytes as reference storage (not allocated: every element undefined)"""
  b = single_buffer(u)
  if raw is None: return BufferState(np.zeros(b.size, dtype=from_bytes(bytes(b.nbytes), b.dtype, (b.size,)).dtype), np.ones(b.size, bool))
  return BufferState.of(from_bytes(raw, b.dtype, (b.size,)))

KERNEL_AST = "kernel AST"   # the stage blamed when the kernel AST itself is undefined (spec.errors.KernelFault): a tinygrad bug

def check_kernel_step(step:Step, var_vals:dict[str, int], sample:tuple[int, int]|None=None) -> tuple[KernelCheck, dict[int, BufferState]|None]:
  """Run one scheduled kernel's AST on the device's inputs with the reference; compare its stored buffers -- every element,
  or with ``sample=(k, seed)`` the elements the sampled lanes store (``KernelInterpreter``: edges and k random indices of
  each output range); ``KernelCheck.lanes`` counts the elements compared."""
  ast, args = step.call.src[0], [a for a in step.call.src[1:] if not a.is_bound_var]
  kc = KernelCheck(step.index, step.name or f"kernel{step.index}", ops=len(ast.toposort()), device_s=step.device_s)
  interp = KernelInterpreter(ast, kc.name, var_vals, sample=sample)
  bufs = {i: state_from_bytes(a, step.before[i]) for i, a in enumerate(args)}
  st = time.perf_counter()
  try: out = interp.run(bufs)
  except KernelFault as e:   # the AST reads or writes out of bounds, or races: tinygrad's program is wrong, not the reference
    kc.ok, kc.error, kc.stage = False, str(e), KERNEL_AST
    return kc, None
  except SpecError as e:
    kc.ok, kc.error, kc.stage = False, str(e), "reference"
    return kc, None
  kc.ref_s = time.perf_counter() - st
  for slot in sorted(interp.stored_slots()):
    dev = state_from_bytes(args[slot], step.after[slot])
    at = np.flatnonzero(interp.written[slot]) if sample is not None else np.arange(out[slot].value.size)
    kc.lanes += len(at)
    c = compare(out[slot].value[at], dev.value[at], args[slot].dtype, tolerance_for(ast, args[slot].dtype), out[slot].undefined[at])
    kc.max_err = max(kc.max_err, c.max_abs_err)
    if not c.ok and kc.ok:
      first = c.first_index if sample is None or c.first_index is None else (int(at[c.first_index[0]]),)   # back to the buffer's index
      kc.ok, kc.buffer, kc.first_index, kc.ref_value, kc.fast_value = False, slot, first, c.ref_value, c.fast_value
  return kc, out

def _last_after(log:StepLog, u:UOp) -> bytes|None:
  ub = single_buffer(u)
  for s in reversed(log.steps):
    for a, data in zip([a for a in s.call.src[1:] if not a.is_bound_var], s.after):
      ab = single_buffer(a)
      if ab.base is ub.base and ab.offset == ub.offset and ab.nbytes == ub.nbytes: return data
  return None

def triage_runtime(step:Step, log:StepLog, hcq2:bool) -> str:
  """Re-run a disagreeing kernel from the same inputs on the other runtime path: runtime if they differ, else codegen."""
  args = [a for a in step.call.src[1:] if not a.is_bound_var]
  for a, data in zip(args, step.before): restore(a, data)
  with hcq2_mode(not hcq2): run_call(step.call, log.var_vals)
  other = [snapshot(a) for a in args]
  for a in args: restore(a, _last_after(log, a))
  return "codegen" if other == step.after else "runtime"

OPTIMIZER = "codegen (the kernel optimizer, codegen/opt: the graph agrees with NOOPT=1)"

def check_per_kernel(build:Callable[[], Any], name:str="case", hcq2:bool=True, scheduler=None, triage_opt:bool=True) -> PerKernelResult:
  """Realize the graph ``build`` makes one kernel at a time and check every stage (see the module docstring). A graph
  blamed on the scheduler or codegen is checked again with tinygrad's kernel optimizer off (``NOOPT=1``): agreeing then,
  the optimizer (``codegen/opt``: axis splits, upcasts, locals) is to blame -- it rewrites each kernel's AST after the
  scheduler, so a wrong split shows up as a wrong chain, not as a kernel that disagrees with its own AST."""
  res = _check_per_kernel(build, name, hcq2, scheduler)
  if triage_opt and res.blame in ("scheduler", "codegen"):
    from tinygrad.helpers import Context
    with Context(NOOPT=1): plain = _check_per_kernel(build, name, hcq2, scheduler)
    if plain.ok: res.blame, res.notes = OPTIMIZER, res.notes + [f"with NOOPT=1 every stage agrees ({len(plain.kernels)} kernels)"]
  return res

def _check_per_kernel(build:Callable[[], Any], name:str, hcq2:bool, scheduler) -> PerKernelResult:
  res = PerKernelResult(name, hcq2=hcq2)
  def crashed(e:Exception, where:str) -> PerKernelResult:   # tinygrad raised: its crash, not a stage verdict
    res.blame, res.message = "crash", f"tinygrad raised while {where}: {first_line(e)}"
    return res
  try: out = build()
  except SpecError: raise
  except Exception as e: return crashed(e, "building the graph")
  tensors = out if isinstance(out, list) else [out]
  root = UOp.sink(*[t.uop for t in tensors])
  ref_out = TensorInterpreter(load_inputs(root)).run(root)
  fr, log = FastResult([], hcq2=hcq2), StepLog()
  try:
    with hcq2_mode(hcq2), capture(fr, load_scheduler(scheduler)), stepping(log):
      Tensor.realize(*tensors)
  except SpecError: raise
  except Exception as e: return crashed(e, "realizing")
  try: check_stages(fr)  # tinygrad's structural spec on the kernel graph, each kernel AST and each program
  except SpecError as e:
    res.blame, res.message = "spec", str(e)
    return res
  names = iter(k.name for k in fr.kernels)
  mem = MemoryModel()
  for step in log.steps:
    args = [a for a in step.call.src[1:] if not a.is_bound_var]
    for a, before in zip(args, step.before): mem.import_device(a, before)
    if step.kind == "copy":
      mem.write(args[0], mem.read(args[1]))
      continue
    if step.kind != "kernel": continue
    step.name = next(names, f"kernel{step.index}")
    kc, _ = check_kernel_step(step, log.var_vals)
    res.kernels.append(kc)
    # the chain: the same AST on the reference's own memory
    try: chain_out = KernelInterpreter(step.call.src[0], step.name, log.var_vals).run({i: mem.read(a) for i, a in enumerate(args)})
    except SpecError as e:
      res.message = res.message or f"kernel chain: {e}"
      continue
    for slot in KernelInterpreter(step.call.src[0]).stored_slots(): mem.write(args[slot], chain_out[slot])
  # compare the chain's and the device's outputs with the tensor-level reference
  res.chain_ok = res.tensor_ok = True
  for t, r in zip(tensors, ref_out):
    tol = graph_tolerance(t.dtype, depth=8, reduce_size=64)
    u = t.uop  # after realize: a (view of a) BUFFER; .buffer resolves contiguous views to their Buffer view
    try: u.buffer
    except Exception as e:
      res.notes.append(f"an output is a non-contiguous view, compared through the fast output only ({type(e).__name__}: {e})")
      continue
    n = int(np.prod(r.value.shape))
    want, undefined = r.value.reshape(-1), r.undefined.reshape(-1)
    if not u.buffer.is_initialized():   # tinygrad realized it without running anything into it (e.g. a cumsum of a folded
      # constant): reading it runs a schedule of its own, outside the steps checked here -- compared as a whole only
      res.notes.append("an output's buffer was left unallocated by the realize (tinygrad computes it when read): compared whole")
      res.tensor_ok &= compare(want, to_numpy(t).reshape(-1), t.dtype, tol, undefined).ok
      continue
    chained = mem.read(u)
    c_chain = compare(want, chained.value[:n], t.dtype, tol, undefined | chained.undefined[:n])
    fast_vals = from_bytes(bytes(u.buffer.as_memoryview()), u.dtype, (u.buffer.size,))[:n]
    c_fast = compare(want, fast_vals, t.dtype, tol, undefined)
    res.chain_ok &= c_chain.ok
    res.tensor_ok &= c_fast.ok
    # lanes the tensor graph defines and the kernels' ASTs leave undefined (a rewrite made e.g. a WHERE a MAX, which is
    # order-dependent with a NaN): the chain skips them, so a wrong device value there is the scheduler's, not the runtime's
    introduced = chained.undefined[:n] & ~undefined
    if not c_fast.ok and introduced.any() and compare(want, fast_vals, t.dtype, tol, undefined | introduced).ok:
      res.undefined_introduced += int(introduced.sum())
    if not c_chain.ok and not res.message: res.message = f"kernel chain vs tensor ref: {c_chain.summary()}"
  bad = next((k for k in res.kernels if not k.ok), None)
  if bad is not None and bad.stage not in ("reference", KERNEL_AST):
    bad.stage = triage_runtime(log.steps[bad.index], log, hcq2)
    res.blame, res.blamed_kernel = bad.stage, bad.name
    res.message = f"buffer {bad.buffer} first differs at {bad.first_index}: ref={bad.ref_value!r} fast={bad.fast_value!r}"
  elif bad is not None:
    res.blame, res.blamed_kernel, res.message = bad.stage, bad.name, bad.error
  elif not res.chain_ok:
    res.blame = "scheduler"
  elif not res.tensor_ok and res.undefined_introduced:
    res.blame, res.message = "scheduler", (f"the kernel ASTs leave {res.undefined_introduced} output lane(s) undefined that the tensor "
                                           "graph defines (e.g. MAX with a NaN operand), and the device's values there differ")
  elif not res.tensor_ok:
    res.blame, res.message = "runtime", "every kernel and the kernel chain agree with the reference, but the realized output does not"
  return res
