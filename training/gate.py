"""The CPU gate: before a training run starts, every kernel of its JIT-captured train step is checked.

tinygrad's ``VALIDATE_WITH_CPU`` (engine/realize.py ``_validate``/``exec_validate``) copies a kernel's inputs to the
CPU, re-renders the *same* kernel AST for the CPU and asserts allclose(rtol=atol=1e-3). Its gaps, and what the gate
does about each:
  1. Both sides share the AST and every codegen pass up to the renderer: a scheduler bug, or a codegen rule both
     renderers run, is invisible. -> each kernel is also run by uopcheck's reference kernel interpreter (no tinygrad
     rewrite pass or codegen), and the whole step is evaluated by the tensor-level reference: if every kernel agrees
     with its own AST but the step does not, the kernel graph (the scheduler) is wrong.
  2. One fixed tolerance. -> the spec's per-dtype tolerance, widened by the kernel's op depth and reduction length.
  3. It runs only when ``run_linear`` compiles (``not jit``): kernels TinyJit captured and replays are never checked.
     -> the gate replays the captured step itself -- the memory-planned, compiled programs the run will execute --
     one call at a time through the device's own path (HCQ2 here), and then checks that TinyJit's real (batched)
     replay of the same step writes the same bytes.
A failing kernel gets a reproducer file (``uopcheck train replay FILE`` re-runs it) and is re-run ``GATE_RERUNS`` times from
its recorded inputs on fresh buffers: the same wrong bytes every time is a compiler or runtime bug (exit 1), other bytes
a nondeterministic device fault (exit 5: a cluster needs to know which one it has). The run does not start."""
from __future__ import annotations
import contextlib, functools, json, pathlib, re, sys, time
from dataclasses import dataclass, field
from typing import Any
import numpy as np
from uopcheck.progress import bar, is_terminal
from tinygrad import Tensor, Device
from tinygrad.codegen import to_program
import tinygrad.engine.realize as tg_realize
from tinygrad.uop import Ops
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp
from tinygrad.helpers import ansistrip, Context
from tinygrad.device import MultiBuffer
from uopcheck.spec.errors import SpecError, KernelFault, first_line
from uopcheck.atomic import replacing, atomic_write_json
from uopcheck.results import Column, Table, Result
from uopcheck.results.render import TERM
from uopcheck.spec import uop_json, admission
from uopcheck.spec.compare import compare
from uopcheck.spec.floats import Tolerance, graph_tolerance
from uopcheck.spec.numpy_dtypes import from_bytes
from uopcheck.ref.tensor_interp import TensorInterpreter, load_inputs
from uopcheck.ref.kernel_interp import KernelInterpreter
from uopcheck.ref.freivalds import check_contractions
from uopcheck.fast.runner import hcq2_mode, hcq2_active
from uopcheck.fast.stepper import Step, snapshot, restore, run_call, single_buffer
from uopcheck.check.kernel import check_kernel_step, tolerance_for, KERNEL_AST, state_from_bytes
from uopcheck.fast.jit_capture import JitCapture, recording_jit, iter_captured, jit_inputs
from uopcheck.settings import GATE_RERUNS, GATE_STEP_REFERENCE_MAX_FLOPS, GATE_FREIVALDS, GATE_FULL_IF_CHEAP

@dataclass
class KernelRow:
  """One distinct kernel (by AST) of the train step, over every call of it the gate ran."""
  name: str
  instances: int = 0
  cpu_err: float = 0.0
  ref_err: float = 0.0
  tolerance: str = ""
  cpu_ok: bool = True
  ref_ok: bool = True
  detail: str = ""
  reproducer: str = ""
  rerun: str = ""             # a failing kernel re-run from its inputs: "deterministic" (the same wrong bytes) or "nondeterministic"
  rerun_detail: str = ""
  kind: str = "kernel"        # or "copy": a device-to-device transfer, checked byte for byte against what was sent

  @property
  def ok(self) -> bool: return self.cpu_ok and self.ref_ok

@dataclass
class GateResult:
  rows: list[KernelRow] = field(default_factory=list)
  steps: int = 0
  calls: int = 0
  step_ok: bool = True          # the step's outputs (stepped replay) == the tensor-level reference
  replay_ok: bool = True        # TinyJit's real replay == the stepped replay, byte for byte
  replicas_ok: bool = True      # every device's copy of a replicated state tensor holds the same bytes after the step
  devices: int = 1              # devices the gated step runs on (data parallel: the all-reduce's kernels and copies included)
  downgrade: str = ""           # set when the gate checked another step than the run's (--gate-batch-size/--gate-seq-len)
  step_reference: str = "evaluated"   # or "skipped: why" (--gate-step-reference off/auto), or "failed: why" (uopcheck-internal)
  crash: str = ""               # tinygrad raised running the step (capture or replay): the run cannot start either
  out_of_memory: str = ""       # the step did not fit (device or host memory): the run's size, never a verdict on tinygrad
  messages: list[str] = field(default_factory=list)
  seconds: float = 0.0
  hcq2: bool = True
  phases: dict[str, float] = field(default_factory=dict)  # seconds per phase of the validated steps (capture excluded)
  sample: tuple[int, int]|None = None   # (k, seed) of the reference's sampled lanes; None: every lane
  lanes: int = 0        # output elements the kernels stored
  cpu_lanes: int = 0    # of those, compared against the CPU's re-run (all of them unless --gate-cpu-check distinct)
  ref_lanes: int = 0    # of those, compared against the reference
  freivalds: int = 0    # random projections per launch (0: none; only with a sampled reference)
  freivalds_lanes: int = 0   # of those, covered by Freivalds' projections of a contraction kernel (every lane, probabilistically)

  def timed(self, phase:str, st:float) -> float:
    now = time.perf_counter()
    self.phases[phase] = self.phases.get(phase, 0.0) + now - st
    if not is_terminal(sys.stderr): print(f"gate: {phase} ({now - st:.1f} s)", file=sys.stderr, flush=True)  # a log hears each phase
    return now

  @property
  def ok(self) -> bool:
    return self._step_level_ok and not self.step_reference.startswith("failed") and all(r.ok for r in self.rows)

  @property
  def _step_level_ok(self) -> bool: return not self.crash and not self.out_of_memory and self.step_ok and self.replay_ok and self.replicas_ok

  def sampling(self) -> str:
    if self.sample is None: return "every lane"
    return (f"edges + {self.sample[0]} random indices per output range (seed {self.sample[1]}) where a full run spans a product of ranges, "
            f"every lane elsewhere"
            + (f", and every lane of each contraction kernel by Freivalds' check ({self.freivalds} projections)" if self.freivalds else ""))

  @property
  def internal_only(self) -> bool:
    """every failure is uopcheck's own (the reference could not evaluate a kernel): no verdict about tinygrad"""
    bad = [r for r in self.rows if not r.ok]
    own = self.step_reference.startswith("failed")
    return (bool(bad) or own) and self._step_level_ok and all(r.detail.startswith("reference:") for r in bad)

  @property
  def fault(self) -> bool:
    """a failing kernel wrote other bytes when re-run from the same inputs: a device fault (or a race), not a compiler bug"""
    return any(r.rerun == "nondeterministic" for r in self.rows if not r.ok)

  @property
  def blame(self) -> str|None:
    if self.ok: return None
    if self.out_of_memory: return (f"the step does not fit: {self.out_of_memory} (the run's size, not a tinygrad verdict; "
                                   "uopcheck train --census with the run's flags counts the buffers it plans)")
    if self.crash: return f"the train step crashes: {self.crash}"
    if self.fault and all(r.rerun == "nondeterministic" for r in self.rows if not r.ok):
      return "nondeterministic device fault (a failing kernel wrote other bytes when re-run from the same inputs)"
    if self.internal_only: return "uopcheck-internal: the reference could not evaluate a kernel or the step (not a tinygrad verdict)"
    if any(KERNEL_AST in r.detail for r in self.rows if not r.ok):
      return "a kernel AST reads or writes out of bounds, or races (the scheduler or codegen made an undefined program)"
    if any(not r.ref_ok and r.cpu_ok for r in self.rows): return "codegen shared by device and CPU (VALIDATE_WITH_CPU cannot see it)"
    if any(r.kind == "copy" and not r.ok for r in self.rows): return "device-to-device copy (the bytes that arrived are not the bytes sent)"
    if any(not r.cpu_ok for r in self.rows): return "device vs CPU"
    if not self.replicas_ok: return "data parallel: a replicated tensor differs between devices after the step (all-reduce)"
    if not self.step_ok: return "scheduler (every kernel matches its AST; the kernel graph does not compute the step)"
    return "JIT replay"

  def result(self) -> Result:
    """one row per distinct kernel of the captured step, the step-level checks, the notes and the verdict"""
    rows = [{"kernel": r.name[:44], "calls": r.instances, "dev vs CPU": r.cpu_err, "dev vs ref": r.ref_err, "tolerance": r.tolerance,
             "result": "PASS" if r.ok else f"FAIL ({r.rerun or 'not re-run'})  {r.detail}"} for r in self.rows]
    ncopy = sum(1 for r in self.rows if r.kind == "copy")
    summary = [f"{len(self.rows) - ncopy} distinct kernels and {ncopy} distinct copies, {self.calls} launches over {self.steps} validated "
               f"step(s) of the JIT-captured train step on {self.devices} device(s) ({'HCQ2' if self.hcq2 else 'plain'} path), {self.seconds:.1f} s",
               f"reference per kernel: {self.sampling()}: {self.ref_lanes:,} of {self.lanes:,} output elements"
               + (f" ({self.freivalds_lanes:,} by Freivalds)" if self.freivalds else "") + "; the CPU: "
               + ("all of them" if self.cpu_lanes == self.lanes else f"{self.cpu_lanes:,} of them (each distinct kernel's first launch)"),
               f"step outputs == tensor-level reference: {self._step_verdict()}; "
               f"TinyJit replay == kernel-by-kernel replay: {'yes' if self.replay_ok else 'NO'}"
               + (f"; replicas identical on all {self.devices} devices: {'yes' if self.replicas_ok else 'NO'}" if self.devices > 1 else "")]
    if self.downgrade: summary.append(f"DOWNGRADE: {self.downgrade}")
    if self.phases: summary.append("time: " + ", ".join(f"{k} {v:.2f} s" for k, v in self.phases.items()))
    if (internal := sum(1 for r in self.rows if not r.ok and r.detail.startswith("reference:"))) and not self.internal_only:
      summary.append(f"note: {internal} kernel(s) the reference could not evaluate (uopcheck-internal: no verdict on those)")
    summary += [f"note: {m}" for m in self.messages] + ["gate: PASS" if self.ok else f"gate: FAIL ({self.blame})"]
    return Result("gate", "uopcheck train: the CPU gate", self.as_dict(), tables=[Table(GATE_COLUMNS, rows)], summary=summary)

  def _step_verdict(self) -> str:
    if self.step_reference != "evaluated": return f"NOT CHECKED ({self.step_reference})"
    return "yes" if self.step_ok else "NO"

  def table(self) -> str: return TERM.render(self.result())

  def as_dict(self) -> dict:
    return {"ok": self.ok, "blame": self.blame, "steps": self.steps, "calls": self.calls, "step_ok": self.step_ok, "replay_ok": self.replay_ok,
            "replicas_ok": self.replicas_ok, "crash": self.crash or None, "out_of_memory": self.out_of_memory or None,
            "devices": self.devices, "downgrade": self.downgrade or None,
            "step_reference": self.step_reference,
            "sample": {"k": self.sample[0], "seed": self.sample[1]} if self.sample else None, "lanes": self.lanes, "ref_lanes": self.ref_lanes,
            "freivalds": self.freivalds, "freivalds_lanes": self.freivalds_lanes,
            "cpu_lanes": self.cpu_lanes,
            "seconds": self.seconds, "phases": self.phases, "messages": self.messages,
            "kernels": [{"name": r.name, "instances": r.instances, "cpu_err": r.cpu_err, "ref_err": r.ref_err, "tolerance": r.tolerance,
                         "ok": r.ok, "cpu_ok": r.cpu_ok, "ref_ok": r.ref_ok, "detail": r.detail, "reproducer": r.reproducer,
                         "rerun": r.rerun, "rerun_detail": r.rerun_detail, "kind": r.kind} for r in self.rows],
            "fault": self.fault}

GATE_COLUMNS = [Column("kernel", width=44), Column("calls", width=5, align=">"), Column("dev vs CPU", width=11, align=">", fmt=".3g"),
                Column("dev vs ref", width=11, align=">", fmt=".3g"), Column("tolerance", width=22, align=">"), Column("result")]

def _tol_str(t:Tolerance) -> str: return f"rtol={float(np.max(t.rtol)):.1e} atol={float(np.max(t.atol)):.1e}"

def _args(call:UOp) -> list[UOp]: return [a for a in call.src[1:] if not a.is_bound_var]

def _values(u:UOp, raw:bytes|None) -> np.ndarray:
  b = single_buffer(u)
  return from_bytes(raw if raw is not None else bytes(b.nbytes), b.dtype, (b.size,))

_CPU_PROGRAMS: dict[bytes, UOp] = {}
def cpu_program(ast:UOp) -> UOp:
  """The kernel AST rendered and compiled for the CPU, once per AST (what exec_validate's to_program does)."""
  if (prg := _CPU_PROGRAMS.get(ast.key)) is None: prg = _CPU_PROGRAMS[ast.key] = to_program(ast, Device["CPU"].renderer)
  return prg

def run_on_cpu(step:Step, var_vals:dict[str, int]) -> list[bytes|None]:
  """What VALIDATE_WITH_CPU does: the kernel AST rendered for the CPU, on CPU copies of the inputs, plain runtime."""
  args = _args(step.call)
  shadows = {a: UOp.new_buffer("CPU", a.buffer.size, a.buffer.dtype) for a in args}
  for a, raw in zip(args, step.before):
    shadows[a].buffer.ensure_allocated()
    restore(shadows[a], raw)
  cpu_call = step.call.replace(src=(cpu_program(step.call.src[0]), *[a if a.is_bound_var else shadows[a] for a in step.call.src[1:]]))
  with hcq2_mode(False):  # the program is compiled already: execute it as the JIT would (no relowering of the call)
    tg_realize.run_linear(UOp(Ops.LINEAR, src=(cpu_call,)), var_vals, update_stats=False, jit=True, wait=True)
  return [snapshot(shadows[a]) for a in args]

@functools.lru_cache(maxsize=4096)
def _stored_slots(ast:UOp) -> tuple[int, ...]: return tuple(sorted(KernelInterpreter(ast).stored_slots()))

@functools.lru_cache(maxsize=4096)
def full_is_cheap(ast:UOp) -> bool:
  """whether the reference's full run of kernel ``ast`` spans at most GATE_FULL_IF_CHEAP times its largest buffer
  (elementwise kernels, plain reductions): then a sampled gate checks it on every lane too, as sampling only saves where a
  run spans a product of ranges (a matmul's M.N.K)"""
  k = KernelInterpreter(ast, check_spec=False)
  return k.widest()[0] <= GATE_FULL_IF_CHEAP * k.largest_buffer()

@dataclass
class StepKernelVerdict:
  """one kernel call checked twice: the device's output against tinygrad's CPU and against uopcheck's reference"""
  cpu_err: float
  ref_err: float
  cpu_ok: bool
  ref_ok: bool
  detail: str
  tolerance: Tolerance|None
  ref_lanes: int = 0     # output elements the reference checked
  ref_s: float = 0.0     # seconds in the reference (sampled or every lane), in the CPU's re-run, and in Freivalds' check
  cpu_s: float = 0.0
  freivalds_s: float = 0.0
  freivalds_lanes: int = 0   # output elements Freivalds' projections covered (0: not asked, or the kernel is not a contraction)
  freivalds_ok: bool = True
  lanes_ok: bool = True      # the reference's verdict on the lanes it evaluated (every lane, or the sampled ones), Freivalds apart

def check_step_kernel(step:Step, var_vals:dict[str, int], sample:tuple[int, int]|None=None, cpu:bool=True,
                      freivalds:int=0) -> StepKernelVerdict:
  """all lanes against the CPU's re-run of the same AST (``cpu=False``: not re-run); the reference on every lane, or
  (``sample=(k, seed)``) on the edges and k random indices of each output range (``ref.kernel_interp``) -- every lane still
  where that costs no more than the inputs (``full_is_cheap``) -- and, with ``freivalds`` > 0, on every lane of a sampled
  contraction kernel by that many of Freivalds' projections (``ref.freivalds``)"""
  ast, args, st = step.call.src[0], _args(step.call), time.perf_counter()
  if sample is not None and full_is_cheap(ast): sample = None   # every lane costs about what its inputs cost: check them all
  kc, ref_out = check_kernel_step(step, var_vals, sample)
  fv, lanes_ok, fst = None, kc.ok, time.perf_counter()
  if sample is not None and freivalds > 0 and ref_out is not None:
    stored = _stored_slots(ast)
    ftol = tolerance_for(ast, args[stored[0]].buffer.dtype) if stored else Tolerance()
    before, after = {i: state_from_bytes(a, step.before[i]) for i, a in enumerate(args)}, {i: _values(args[i], step.after[i]) for i in stored}
    try:
      fv = check_contractions(ast, before, after, ftol, seed=sample[1], trials=freivalds, var_vals=var_vals, name=kc.name)
      if fv.applies and not fv.ok and kc.ok: kc.ok, kc.error = False, f"Freivalds: {fv.why}"
    except KernelFault as e:   # out of bounds on a lane the samples did not reach: the kernel AST's fault (a tinygrad verdict)
      kc.ok, kc.error, kc.stage = False, str(e), KERNEL_AST
  fv_s, ref_s = time.perf_counter() - fst if fv is not None else 0.0, fst - st
  if ref_out is None and kc.stage != KERNEL_AST: return StepKernelVerdict(0.0, 0.0, True, False, f"reference: {kc.error}", None, ref_s=ref_s)
  cpu_after, cpu_err, cpu_ok, detail, tol = run_on_cpu(step, var_vals) if cpu else [], 0.0, True, "", None
  cpu_s = time.perf_counter() - st - ref_s - fv_s
  for slot in _stored_slots(ast) if cpu else ():
    a = args[slot]
    tol = tolerance_for(ast, a.buffer.dtype)
    undefined = ref_out[slot].undefined if ref_out is not None else np.zeros(single_buffer(a).size, bool)
    c = compare(_values(a, cpu_after[slot]), _values(a, step.after[slot]), a.buffer.dtype, tol, undefined)
    cpu_err = max(cpu_err, c.max_abs_err)
    if not c.ok and cpu_ok: cpu_ok, detail = False, f"buffer {slot} vs CPU at {c.first_index}: cpu={c.ref_value!r} device={c.fast_value!r}"
  if not kc.ok:
    detail = (detail + "; " if detail else "") + (f"{KERNEL_AST}: {kc.error}" if kc.stage == KERNEL_AST else kc.error if kc.buffer is None else
                                                  f"buffer {kc.buffer} vs ref at {kc.first_index}: ref={kc.ref_value!r} device={kc.fast_value!r}")
  fl, fok = (fv.lanes, fv.ok) if fv is not None and fv.applies else (0, True)
  # Freivalds' projections cover every lane of the kernel
  return StepKernelVerdict(cpu_err, kc.max_err, cpu_ok, kc.ok, detail, tol, fl or kc.lanes, ref_s, cpu_s, fv_s, fl, fok, lanes_ok)

def check_copy(step:Step) -> tuple[bool, str]:
  """A device-to-device copy (``exec_copy``: argument 0 the destination, 1 the source) must deliver the bytes sent."""
  args = _args(step.call)
  sent, got = step.before[1], step.after[0]
  if sent is None: return True, "source not allocated: nothing to compare"
  n = single_buffer(args[0]).nbytes
  if got is not None and got == sent[:n]: return True, ""
  at = next((i for i in range(n) if got is None or got[i] != sent[i]), 0)
  return False, (f"copy {single_buffer(args[1]).device} -> {single_buffer(args[0]).device}: byte {at} of {n} arrived as "
                 f"{'nothing' if got is None else hex(got[at])}, sent {hex(sent[at])}")

def step_reference_flops(model_cfg, train_cfg) -> float:
  """what the step-level reference costs, in FLOPs: a forward and backward pass (6 per parameter per token, plus attention's
  12 * layers * seq_len * dim per token) over the global batch, evaluated twice (as is, and on ~1-ulp perturbed inputs)"""
  tokens = train_cfg.batch_size * train_cfg.grad_accum * model_cfg.seq_len
  return 2.0 * tokens * (6 * model_cfg.n_params() + 12 * model_cfg.n_layers * model_cfg.seq_len * model_cfg.dim)

# ** conditioning **

CONDITIONING = 64   # a lane's tolerance grows by this many times its reference's own spread under ~1-ulp input noise

def perturbed(inputs:dict[UOp, np.ndarray], seed:int) -> dict[UOp, np.ndarray]:
  """every float input moved by a random relative amount up to 2**-23 (one float32 ulp); ints and bools as they are"""
  rng = np.random.default_rng(seed + 0x5EED)
  out = {}
  for u, a in inputs.items():
    if np.issubdtype(np.asarray(a).dtype, np.floating):
      with np.errstate(all="ignore"): out[u] = (a * (1 + rng.uniform(-2.0**-23, 2.0**-23, np.shape(a)))).astype(a.dtype)
    else: out[u] = a
  return out

# ** reproducers **

REPRO_FORMAT = "uopcheck-kernel-reproducer/2"

def save_reproducer(path:pathlib.Path, step:Step, var_vals:dict[str, int], detail:str) -> pathlib.Path:
  """The kernel AST (``spec.uop_json``), each argument's dtype and size, and the device: ``NAME.kernel.json``; the bytes of
  each argument before the call and what the device wrote: ``NAME.kernel.npz`` beside it. Both are data, never code."""
  args = _args(step.call)
  path = path.with_suffix(".json")
  path.parent.mkdir(parents=True, exist_ok=True)
  rec = {"format": REPRO_FORMAT, "name": step.name, "ast": uop_json.encode(step.call.src[0]), "var_vals": {k: int(v) for k, v in var_vals.items()},
         "detail": detail, "args": [[uop_json.dtype_name(a.buffer.dtype), int(a.buffer.size)] for a in args],
         "device": str(single_buffer(args[0]).device) if args else "CPU", "hcq2": bool(hcq2_active())}
  arrays = {}
  for i, (b, a) in enumerate(zip(step.before, step.after)):
    if b is not None: arrays[f"before_{i}"] = np.frombuffer(b, np.uint8)
    if a is not None: arrays[f"after_{i}"] = np.frombuffer(a, np.uint8)
  with replacing(path.with_suffix(".npz")) as npz, open(npz, "wb") as f: np.savez(f, **arrays)  # type: ignore[arg-type]
  atomic_write_json(path, rec)
  return path

def load_reproducer(path:str|pathlib.Path) -> dict:
  """A reproducer, parsed: JSON (checked field by field, the AST through ``spec.uop_json``) and its .npz (no pickles), and
  admitted (``spec.admission``): a kernel AST uopcheck could have saved, on a device uopcheck runs on -- or one SpecError."""
  p = pathlib.Path(path)
  if not p.exists(): raise SpecError(f"{p}: no such reproducer file")
  try:
    rec = json.loads(p.read_text())
    if not isinstance(rec, dict) or rec.get("format") != REPRO_FORMAT:
      raise ValueError(f"format field is {rec.get('format') if isinstance(rec, dict) else type(rec).__name__!r}, expected {REPRO_FORMAT!r}")
    n = len(rec["args"])
    args = [(uop_json.parse_dtype(dt, "arg dtype: "), int(size)) for dt, size in rec["args"]]
    if not all(0 <= size <= 1 << 34 for _, size in args): raise ValueError("an argument size is out of range")
    if not isinstance(rec["var_vals"], dict) or not all(isinstance(k, str) and type(v) is int for k, v in rec["var_vals"].items()):
      raise ValueError("var_vals must map names to ints")
    ast = admission.check_kernel_ast(uop_json.decode_one(rec["ast"], "ast"))   # before tinygrad renders or compiles anything
    admission.check_device(rec["device"], "device field: ")                        # before a buffer is allocated there
    with np.load(p.with_suffix(".npz"), allow_pickle=False) as z:
      before = [z[f"before_{i}"].tobytes() if f"before_{i}" in z.files else None for i in range(n)]
      after = [z[f"after_{i}"].tobytes() if f"after_{i}" in z.files else None for i in range(n)]
  except SpecError as e: raise SpecError(f"{p}: not a uopcheck kernel reproducer: {e}") from None
  except Exception as e: raise SpecError(f"{p}: not a uopcheck kernel reproducer ({type(e).__name__}: {str(e)[:160]})") from None
  return {**rec, "ast": ast, "args": args, "before": before, "device_after": after}

def rerun_kernel(ast:UOp, args:list[tuple], before:list[bytes|None], var_vals:dict[str, int], device:str|list[str], hcq2:bool, name:str="",
                 template:UOp|None=None) -> Step:
  """One kernel AST run again on ``device`` (or one device per argument) from the given argument bytes, on fresh buffers
  ((dtype, size) each); ``template``: the call to repeat (a copy's), its arguments swapped for the fresh buffers."""
  devices = [device] * len(args) if isinstance(device, str) else device
  bufs = [UOp.new_buffer(d, size, dt) for d, (dt, size) in zip(devices, args)]
  for b, raw in zip(bufs, before):
    b.buffer.ensure_allocated()
    restore(b, raw)
  fresh = iter(bufs)
  call = ast.call(*bufs) if template is None else template.replace(src=(ast, *[a if a.is_bound_var else next(fresh) for a in template.src[1:]]))
  with hcq2_mode(hcq2): dt = run_call(call, var_vals)
  return Step(0, call, before, [snapshot(b) for b in bufs], dt, name)

def rerun_verdict(step:Step, var_vals:dict[str, int], n:int) -> tuple[str, str]:
  """A failing kernel re-run ``n`` times from its recorded inputs on fresh buffers of its device: ("deterministic", ...)
  when every run writes the recorded bytes again (a compiler or runtime bug: it will fail the same way in the run),
  ("nondeterministic", which run and buffer differ) when one does not (a device fault, or a race)."""
  args = _args(step.call)
  spec = [(single_buffer(a).dtype, single_buffer(a).size) for a in args]
  devices = [str(single_buffer(a).device) for a in args]
  slots = (0,) if step.kind == "copy" else _stored_slots(step.call.src[0])
  for k in range(n):
    again = rerun_kernel(step.call.src[0], spec, step.before, var_vals, devices, hcq2_active(), template=step.call)
    if (bad := next((i for i in slots if again.after[i] != step.after[i]), None)) is not None:
      return "nondeterministic", f"re-run {k + 1} of {n} from the same inputs wrote other bytes to buffer {bad}"
  return "deterministic", f"{n} re-runs from the same inputs wrote the same wrong bytes"

def replay_reproducer(path:str|pathlib.Path, device:str|None=None) -> tuple[bool, str]:
  """Re-run a saved kernel on the device from its saved inputs; check it against the CPU and the reference again."""
  rec = load_reproducer(path)
  dev = admission.check_device(device or rec["device"], "replay device: ")
  step = rerun_kernel(rec["ast"], rec["args"], rec["before"], rec["var_vals"], dev, rec.get("hcq2", True), rec["name"])
  v = check_step_kernel(step, rec["var_vals"])
  same = step.after == rec["device_after"]
  msg = (f"kernel {ansistrip(rec['name'])} on {dev}: dev vs CPU {'PASS' if v.cpu_ok else 'FAIL'} ({v.cpu_err:.3g}), dev vs ref "
         f"{'PASS' if v.ref_ok else 'FAIL'} ({v.ref_err:.3g}); device output {'identical to' if same else 'differs from'} the recorded run"
         + (f"; {v.detail}" if v.detail else ""))
  return v.cpu_ok and v.ref_ok, msg

# ** the gate **

def _file_name(name:str) -> str: return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80] or "kernel"

class CPUGate:
  """Capture ``trainer``'s JIT step, then validate ``steps`` replays of it (see the module docstring). ``sample=(k, seed)``:
  the reference checks each kernel on sampled output lanes (the CPU check stays on all lanes); None: on every lane."""
  def __init__(self, trainer, out_dir:str|pathlib.Path="reports/gate", sample:tuple[int, int]|None=None, step_reference:str="auto",
               cpu_check:str="all", freivalds:int=GATE_FREIVALDS):
    if step_reference not in ("auto", "on", "off"): raise SpecError(f"--gate-step-reference {step_reference!r}: one of auto, on, off")
    if cpu_check not in ("all", "distinct"): raise SpecError(f"--gate-cpu-check {cpu_check!r}: one of all, distinct")
    self.trainer, self.out_dir, self.sample = trainer, pathlib.Path(out_dir), sample
    if freivalds < 0: raise SpecError(f"--gate-freivalds {freivalds}: a count of projections, 0 or more")
    self.step_reference, self.cpu_check, self.freivalds = step_reference, cpu_check, freivalds
    self.capture: JitCapture|None = None
    self.inputs: tuple[Tensor, Tensor]|None = None
    self.launches: int|None = None   # launches of one validated step (per device; copies included), once one has run
    self.twin: Any = None    # data parallel: the one-device trainer the step-level reference evaluates (``_twin``)

  def _step_inputs(self, batch:np.ndarray, lr:float) -> tuple[Tensor, Tensor]:
    """One pair of input buffers for every validated step (new values written in place), as a training loop that
    stages its batches would; the call-by-call replay then reuses its linked calls."""
    if self.inputs is None or self.inputs[0].shape != batch.shape: self.inputs = self.trainer.step_inputs(batch, lr)
    else:
      restore(self.inputs[0].uop, np.ascontiguousarray(batch, dtype=np.int32).tobytes())
      restore(self.inputs[1].uop, np.array([lr], dtype=np.float32).tobytes())
    return self.inputs

  def _capture(self, batches:list[np.ndarray], lr:float) -> None:
    tr = self.trainer
    if tr.jit_step.captured is not None: tr.jit_step.reset()
    with recording_jit() as rec:
      for _ in range(2): tr.step(batches[0], lr)   # call 0 runs eagerly, call 1 captures
    if not rec.captures or tr.jit_step.captured is None:
      raise SpecError("the train step was not captured by TinyJit (JIT=0 in the environment?): the gate checks the captured step")
    self.capture = rec.captures[-1]

  def run(self, batches:list[np.ndarray], lr:float) -> GateResult:
    """Validate one replay per batch; the trainer's state is restored afterwards (the gate trains nothing)."""
    tr, st = self.trainer, time.perf_counter()
    res = GateResult(hcq2=hcq2_active(), sample=self.sample, devices=len(tr.devices) if tr.devices else 1,
                     freivalds=self.freivalds if self.sample is not None else 0)
    rows: dict[bytes, KernelRow] = {}
    where = "reading the trainer's state"
    try:
      start_state = tr.snapshot()
      where = "capturing the train step with TinyJit"
      self._capture(batches, lr)
      tr.restore(start_state)
      for b, batch in enumerate(batches):
        where = f"running validated step {b} launch by launch"
        self._validate_step(batch, lr, res, rows, b)
        res.steps += 1
      tr.restore(start_state)
    except SpecError: raise
    except MemoryError as e:   # tinygrad's allocator (or numpy on the host) could not allocate: the step is too big for this machine
      res.out_of_memory = f"out of memory while {where}: {first_line(e)}"
    except Exception as e:   # tinygrad raised (a device hang, a compile error) running the step: the run would too -- a finding
      res.crash = f"tinygrad raised while {where}: {first_line(e)}"
    res.rows, res.seconds = list(rows.values()), time.perf_counter() - st
    return res

  def _validate_step(self, batch:np.ndarray, lr:float, res:GateResult, rows:dict[bytes, KernelRow], b:int) -> None:
    tr, cap, t0 = self.trainer, self.capture, time.perf_counter()
    before = tr.snapshot()
    tok, lr_t = self._step_inputs(batch, lr)
    ref_tr, lazy, ref, shaken = self._reference(batch, lr, before, b, res)
    t0 = res.timed("tensor-level reference", t0)
    # the captured step, launch by launch on the device's own path, each launch checked as soon as it ran and then
    # dropped: the gate holds one launch's argument bytes at a time, whatever the size of the step
    var_vals0: dict[str, int] = {}
    device_s, st0 = 0.0, time.perf_counter()
    launches = 0
    for step in bar(iter_captured(cap, jit_inputs((tok, lr_t)), var_vals0), f"gate step {b}: device vs CPU vs reference",
                    total=self.launches, unit="launches"):   # the total: the previous validated step's count
      device_s, launches = device_s + step.device_s, launches + 1
      if step.kind not in ("kernel", "copy"): continue
      res.calls += 1
      if step.kind == "copy":
        self._check_copy(step, res, rows)
        continue
      var_vals = {**var_vals0, **step.device_vars}
      if (row := rows.get(key := step.call.src[0].key)) is None:
        name = ansistrip(step.name) or f"kernel{step.index}"
        same = sum(1 for r in rows.values() if r.name.split(" #")[0] == name)  # distinct ASTs can share a program name
        row = rows[key] = KernelRow(f"{name} #{same + 1}" if same else name)
      row.instances += 1
      kseed = None if self.sample is None else (self.sample[0], self.sample[1] * 1_000_003 + res.calls)   # lanes differ per call
      cpu = self.cpu_check == "all" or row.instances == 1   # distinct: the CPU re-runs each kernel AST's first launch only
      v = check_step_kernel(step, var_vals, kseed, cpu, self.freivalds)
      res.ref_lanes += v.ref_lanes
      res.freivalds_lanes += v.freivalds_lanes
      for phase, s in (("(in checks) reference", v.ref_s), ("(in checks) Freivalds", v.freivalds_s), ("(in checks) CPU re-run", v.cpu_s)):
        if s: res.phases[phase] = res.phases.get(phase, 0.0) + s
      stored = sum(single_buffer(a).size for i, a in enumerate(_args(step.call)) if i in _stored_slots(step.call.src[0]))
      res.lanes += stored
      res.cpu_lanes += stored if cpu else 0
      row.cpu_err, row.ref_err = max(row.cpu_err, v.cpu_err), max(row.ref_err, v.ref_err)
      if v.tolerance is not None and not row.tolerance: row.tolerance = _tol_str(v.tolerance)
      if not (v.cpu_ok and v.ref_ok) and row.ok:
        row.cpu_ok, row.ref_ok, row.detail = v.cpu_ok, v.ref_ok, v.detail
        if not v.detail.startswith("reference:"): row.rerun, row.rerun_detail = rerun_verdict(step, var_vals, GATE_RERUNS)
        row.reproducer = str(save_reproducer(self.out_dir / f"step{b}_call{step.index}_{_file_name(row.name)}.kernel.json",
                                             step, var_vals, v.detail))
    res.phases["device, call by call"] = res.phases.get("device, call by call", 0.0) + device_s
    self.launches = launches
    t0 = res.timed("per-launch CPU + ref checks", st0 + device_s)
    stepped = [t.numpy().copy() for t in tr.jit_step.captured.ret] + tr.snapshot()
    self._check_replicas(res, b)
    if ref is not None: self._compare_reference(ref_tr, lazy, ref, shaken, stepped, res)
    # TinyJit's own replay of the same step must write the same bytes as the call-by-call replay
    tr.restore(before)
    tr.jit_step(tok, lr_t)
    replayed = [t.numpy().copy() for t in tr.jit_step.captured.ret] + tr.snapshot()
    for i, (a, c) in enumerate(zip(stepped, replayed)):
      if a.tobytes() != c.tobytes():
        res.replay_ok = False
        res.messages.append(f"step {b}: TinyJit replay differs from the kernel-by-kernel replay in output {i} "
                            f"(max abs diff {float(np.max(np.abs(a.astype(np.float64) - c.astype(np.float64)))):.3g})")
        break
    res.timed("JIT replay + compares", t0)

  def _reference(self, batch:np.ndarray, lr:float, state:list[np.ndarray], b:int, res:GateResult):
    """The tensor-level reference of the step: (the trainer whose lazy graph it evaluated, that graph's outputs, the reference
    values, the values on inputs moved by ~1 float32 ulp). One device: the run's own trainer, on its own input buffers.
    Data parallel: tinygrad's multi-device graph is the logical step lowered to shards and an all-reduce, so the
    reference evaluates the logical step itself -- a one-device twin of the model on the host CPU, holding the same
    state, on the whole global batch -- and the gate compares the devices' result with what the step means."""
    flops = step_reference_flops(self.trainer.model_cfg, self.trainer.cfg)
    if self.step_reference == "off" or (self.step_reference == "auto" and flops > GATE_STEP_REFERENCE_MAX_FLOPS):
      res.step_reference = (f"skipped: --gate-step-reference {self.step_reference}, est. {flops:.2g} FLOP of numpy"
                            + (f" > GATE_STEP_REFERENCE_MAX_FLOPS {GATE_STEP_REFERENCE_MAX_FLOPS:.2g}" if self.step_reference == "auto" else "")
                            + "; every kernel and copy is still checked, a scheduler bug that leaves each kernel right is not")
      return self.trainer, [], None, None
    ref_tr = self.trainer if self.trainer.devices is None else self._twin(state)
    with Context(DEV="CPU") if ref_tr is not self.trainer else contextlib.nullcontext():
      tok, lr_t = self.inputs if ref_tr is self.trainer and self.inputs is not None else ref_tr.step_inputs(batch, lr)
      realized = [t.uop for t in ref_tr.state_tensors()]
      lazy = ref_tr.step_tensors(tok, lr_t)
    root = UOp.sink(*[t.uop for t in lazy])
    try:
      inputs = load_inputs(root)
      ref = TensorInterpreter(inputs).run(root)
      # the same step on inputs moved by ~1 float32 ulp, each float op's result rounded anew (TensorInterpreter noise)
      shaken = TensorInterpreter(perturbed(inputs, b), noise=b + 0x5EED).run(root)
    except SpecError as e:   # uopcheck's own limit (memory, scope): no verdict on the step, never a scheduler blame
      ref = shaken = None
      res.step_reference = f"failed: the tensor-level reference could not evaluate the step: {e}"
    # the lazy graph is dropped: the state tensors get their buffers back
    for t, u in zip(ref_tr.state_tensors(), realized): t.uop = u
    ref_tr.opt.zero_grad()
    return ref_tr, lazy, ref, shaken

  def _twin(self, state:list[np.ndarray]):
    """the one-device (host CPU) trainer of the same model and global batch, holding ``state`` (made once)"""
    from uopcheck.training.trainer import Trainer
    if self.twin is None:
      with Context(DEV="CPU"): self.twin = Trainer(self.trainer.model_cfg, self.trainer.cfg)
    self.twin.restore(state)
    return self.twin

  def _check_copy(self, step:Step, res:GateResult, rows:dict[bytes, KernelRow]) -> None:
    """one device-to-device transfer (the all-reduce's, a weight's): the bytes that arrived are the bytes sent"""
    dst, src = (single_buffer(a) for a in _args(step.call)[:2])
    name = f"copy {src.device} -> {dst.device} {dst.nbytes:,} B"
    row = rows.setdefault(name.encode(), KernelRow(name, kind="copy", tolerance="exact bytes"))
    row.instances += 1
    res.lanes += dst.size
    res.cpu_lanes += dst.size   # every byte compared
    ok, detail = check_copy(step)
    if not ok and row.ok:
      row.cpu_ok, row.detail = False, detail
      row.rerun, row.rerun_detail = rerun_verdict(step, {}, GATE_RERUNS)

  def _check_replicas(self, res:GateResult, b:int) -> None:
    """data parallel: after the step every device must hold the same bytes of each replicated state tensor"""
    for i, t in enumerate(self.trainer.state_tensors()):
      if not isinstance(mb := t.uop.buffer, MultiBuffer) or t.uop.axis is not None: continue
      copies = [snapshot(t.uop.mselect(j)) for j in range(len(mb.bufs))]
      if (bad := next((j for j in range(1, len(copies)) if copies[j] != copies[0]), None)) is not None:
        res.replicas_ok = False
        res.messages.append(f"step {b}: state tensor {i} {t.shape}: the copy on {mb.bufs[bad].device} differs from the one on {mb.bufs[0].device}")

  def _compare_reference(self, ref_tr, lazy:list[Tensor], ref, shaken, stepped:list[np.ndarray], res:GateResult) -> None:
    """loss, grad norm and every updated state tensor, as the stepped replay left them, against the tensor-level reference,
    each lane within the graph tolerance widened by its own conditioning (``CONDITIONING`` times how far the reference
    moved when its inputs moved by ~1 float32 ulp): a lane computed through cancellation -- an Adam update of a weight
    whose gradient is near zero, where m/(sqrt(v)+eps) turns a rounding of g into a different step -- is as uncertain
    for the device as for a perturbed reference, and is not a bug."""
    state, cfg = ref_tr.state_tensors(), ref_tr.cfg
    def slot(t:Tensor) -> int|None: return next((j for j, s in enumerate(state) if s is t), None)
    names = ["loss", "grad_norm"] + [f"state tensor {slot(t)} {t.shape}" for t in lazy[2:]]
    got = stepped[:2] + [stepped[2 + j] if (j := slot(t)) is not None else None for t in lazy[2:]]
    tokens = cfg.batch_size * cfg.grad_accum * ref_tr.model_cfg.seq_len
    for name, t, r, sh, g in zip(names, lazy, ref, shaken if shaken is not None else [None] * len(ref), got):
      if g is None:
        res.messages.append(f"{name}: the optimizer updates a tensor the trainer does not hold as state; not compared")
        continue
      tol = graph_tolerance(t.dtype, depth=16 * ref_tr.model_cfg.n_layers, reduce_size=tokens)
      rv = np.asarray(r.value, np.float64).reshape(-1)
      if sh is not None and dtypes.is_float(t.dtype):
        with np.errstate(invalid="ignore"): spread = np.abs(rv - np.asarray(sh.value, np.float64).reshape(-1))
        tol = Tolerance(rtol=tol.rtol, atol=tol.atol + CONDITIONING * np.where(np.isfinite(spread), spread, 0.0), ulps=tol.ulps)
      c = compare(np.asarray(r.value).reshape(-1), g.reshape(-1), t.dtype, tol, np.asarray(r.undefined).reshape(-1))
      if not c.ok:
        res.step_ok = False
        res.messages.append(f"{name}: stepped replay vs tensor-level reference: {c.summary()}")
