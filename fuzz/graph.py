"""Graph fuzzing: checking a random program ref vs fast (and vs a candidate scheduler), and signing failures as findings.

The program format is ``fuzz/program.py`` (data, never code: every finding is a self-contained reproducer), the strategy
that draws programs ``fuzz/graph_strategy.py``, the campaign that runs it ``fuzz/graph_campaign.py``. A jitted program
(``"jit": n``) is checked call by call: each TinyJit call (run, capture, replays) against the reference on that call's
inputs and Variable values."""
from __future__ import annotations
from typing import Callable
import dataclasses, enum, functools, os, pathlib, re
from dataclasses import dataclass
from uopcheck.spec.errors import SpecError
from uopcheck.fuzz.findings_io import digest
from uopcheck.fuzz.findings_store import Layout, DirectoryStore
from uopcheck.fuzz.program import (DTYPES, MAX_ELEMENTS, FNS, is_float, make_input, validate_program, build_program, build_from,
                                   bound_size, without_jit, ID_FIELDS, build_values)
from uopcheck.fuzz.graph_strategy import programs, PROFILES

__all__ = ["DTYPES", "MAX_ELEMENTS", "SpecError", "validate_program", "build_program", "programs", "PROFILES", "GraphVerdict", "FailureKind",
           "check_program", "finalize", "LAYOUT", "load_graph_findings", "recheck"]

# ** checking a program, signatures, findings **

class FailureKind(enum.StrEnum):
  """How a graph case failed: the first four are tinygrad's (a finding), ``INTERNAL`` is uopcheck's own (never one). The
  values are what findings record (``"failure"``) and what signatures hash, unchanged from when they were plain strings."""
  MISMATCH = "mismatch"          # the outputs differ from the reference
  SPEC_ERROR = "spec-error"      # tinygrad's fast path built something the spec refuses (harness ``CaseResult.spec_error``)
  CRASH = "crash"                # tinygrad raised on a valid program
  HANG = "hang"                  # the case ran past its timeout (the worker was killed)
  INTERNAL = "uopcheck-internal"

@dataclass
class GraphVerdict:
  ok: bool
  kind: FailureKind|None = None   # None when ok
  summary: str = ""
  output: int|None = None  # the first output that disagrees
  wrong: str = ""          # with a candidate: which scheduler disagrees with the reference (stock | candidate | both)
  emulator: bool = False   # a crash raised inside tinygrad's mock GPU (test/mockgpu): the emulator failed, not the AMD backend
  jit_call: int|None = None   # the TinyJit call that failed (0 run, 1 capture, 2+ replay), for a jitted program

def _verdict(r) -> GraphVerdict:
  if r.ok: return GraphVerdict(True)
  if r.failed_in in ("reference", "build"): return GraphVerdict(False, FailureKind.INTERNAL, f"{r.failed_in}: {r.error}"[:300])
  kind = FailureKind.SPEC_ERROR if r.spec_error else FailureKind.MISMATCH
  bad = next((i for i, c in enumerate(r.comparisons) if not c.ok), None)
  return GraphVerdict(False, kind, r.error or r.line(), bad)

def _check_jit(desc:dict, scheduler) -> GraphVerdict:
  """Every call of the program through one TinyJit (call 0 runs, 1 captures, 2+ replay), each against the reference on
  that call's inputs; symreduce Variables are passed bound, with another value each call."""
  from tinygrad import Tensor, TinyJit, Variable
  from uopcheck import fast
  from uopcheck.check import harness
  n_in = len(desc["inputs"])
  sizes: dict[int, int] = {}
  build_from(desc, [make_input(i) for i in desc["inputs"]], var_sizes=sizes)   # each symreduce's axis size (lazy: nothing runs)
  keys = sorted(sizes)
  def realized_together(*xs) -> list:   # one schedule, as the plain run realizes them: one by one, a value read before an
    outs = build_from(desc, list(xs[:n_in]), binds=dict(zip(keys, xs[n_in:])))  # assign to its buffer and realized after it
    Tensor.realize(*outs)                    # reads the assigned data, which tinygrad's test_assign documents as its semantics
    return outs
  jitted = TinyJit(realized_together)
  carry: dict[int, int] = {k: o for o, k in desc.get("carry", [])}
  returned: list = []
  for c in range(desc["jit"]):
    binds = [Variable(f"n{k}", 1, sizes[k]).bind(bound_size(desc["steps"][k][3], sizes[k], c)) for k in keys]
    # loop-carried state: input k of this call is the very Tensor the previous call returned as output o (x = f(x)); the
    # reference gets a copy of it (its own Tensors: an assign step rebinds the Tensors it is built on)
    carried = {k: returned[carry[k]] for k in carry} if c else {}
    if any((x.shape, x.dtype) != (tuple(desc["inputs"][k]["shape"]), DTYPES[desc["inputs"][k]["dtype"]]) for k, x in carried.items()):
      raise SpecError(f"malformed program description: carry {desc['carry']}: an output does not match the input it feeds")
    def inputs(c:int, carried:dict, copy:bool) -> list:
      return [(carried[k].clone().realize() if copy else carried[k]) if k in carried else make_input(i, c) for k, i in enumerate(desc["inputs"])]
    def realize(_graph, c:int=c, binds:list=binds, carried:dict=carried):
      def call() -> list:
        returned[:] = jitted(*inputs(c, carried, False), *binds)
        return returned
      return fast.run_fn(call, scheduler=scheduler, hcq2=fast.hcq2_active())
    build = (lambda c=c, carried=carried: build_from(desc, inputs(c, carried, True), c)) if carried else functools.partial(build_program, desc, c)
    v = _verdict(harness.check(build, f"fuzz TinyJit call {c}", scheduler=scheduler, realize=realize))
    if not v.ok:
      call = ['run', 'capture'][c] if c < 2 else 'replay'
      return v if v.kind is FailureKind.INTERNAL else dataclasses.replace(v, summary=f"TinyJit call {c} ({call}): {v.summary}", jit_call=c)
  return GraphVerdict(True)

def _check_with(desc:dict, scheduler) -> GraphVerdict:
  """One scheduler's verdict; tinygrad raising on a valid program is a ``crash`` verdict of that scheduler."""
  from uopcheck.check import harness
  try:
    if desc.get("jit"): return _check_jit(desc, scheduler)
    return _verdict(harness.check(lambda: build_program(desc), "fuzz", scheduler=scheduler))
  except SpecError as e:   # uopcheck refused the program (malformed description): never a crash of tinygrad
    return GraphVerdict(False, FailureKind.INTERNAL, f"refused: {e}"[:300])
  except Exception as e:
    if type(e).__name__ == "JitError" and "didn't JIT anything" in str(e):  # nothing to capture: the program has no kernel
      return _check_with(without_jit(desc), scheduler)
    if type(e).__name__ == "JitError" and "args mismatch" in str(e) and desc.get("carry"):   # TinyJit refuses, by design, an input
      return GraphVerdict(False, FailureKind.INTERNAL, "carry fed TinyJit a view of its own output: not a program (generator)")  # whose view changed
    return crash_verdict(e, emulator=_in_emulator(e))

def crash_verdict(e:BaseException, emulator:bool=False) -> GraphVerdict:
  """tinygrad raising on a valid program: the exception's type and first line (signatures take the numbers out)"""
  first = str(e).splitlines()[0] if str(e) else ""
  return GraphVerdict(False, FailureKind.CRASH, f"crash: {type(e).__name__}: {first}"[:300], emulator=emulator)

def _in_emulator(e:BaseException) -> bool:
  """raised by tinygrad's mock GPU itself (a frame in test/mockgpu/, or its '[emu]' messages)"""
  import traceback
  return str(e).startswith("[emu]") or any("/test/mockgpu/" in f.filename.replace("\\", "/") for f in traceback.extract_tb(e.__traceback__))

def check_program(desc:dict, scheduler:Callable|None=None, candidate:Callable|None=None) -> GraphVerdict:
  """ref vs fast on one program. A program the generator made is valid by construction, so a refusal or failure of
  uopcheck's own reference on it is ``uopcheck-internal``, kept apart from tinygrad's findings. With a ``candidate``
  scheduler the program runs through the reference, ``scheduler`` (stock rangeify when None) and the candidate, and the
  verdict names which of them is wrong."""
  stock = _check_with(desc, scheduler)
  if candidate is None: return stock
  if stock.kind is FailureKind.INTERNAL: return stock
  cand = _check_with(desc, candidate)
  if stock.ok and cand.ok: return stock
  if cand.kind is FailureKind.INTERNAL: return cand
  if stock.ok: return dataclasses.replace(cand, wrong="candidate", summary=f"candidate: {cand.summary}")
  if cand.ok: return dataclasses.replace(stock, wrong="stock", summary=f"stock rangeify: {stock.summary}")
  return dataclasses.replace(stock, wrong="both", summary=f"both schedulers: {stock.summary}")

def normalized(desc:dict) -> str:
  """A program with the run taken out: step kinds and functions, dtype classes (float/int/bool) -- no shapes, seeds, axes,
  and no dead steps (a step no output reads computes nothing the finding is about: ``x - x`` with an unread ``-x`` beside
  it is the same bug as ``x - x``). A constant no 32-bit int can hold is marked (``const:add:wide``): at int32 the C
  renderer prints it unwrapped (plain reproducer ``int32-constant-rendered-wide``), a cause of its own beside the
  narrow-int promotion that an in-range constant's overflow meets (graph-e330eef38c4a)."""
  def cls(d):
    return "float" if is_float(d) else "bool" if d == "bool" else "int"
  n_in = len(desc["inputs"])
  live = set().union(*(_ancestors(desc, o) for o in desc["outputs"])) if desc["outputs"] else set()
  ins = ",".join(sorted({cls(i["dtype"]) for i in desc["inputs"]}))
  def wide(st_):
    return ":wide" if st_[0] == "const" and type(st_[3]) is int and not -2**31 <= st_[3] < 2**31 else ""
  steps = [f"{st_[0]}:{st_[1]}{wide(st_)}" if st_[0] in FNS else f"{st_[0]}:{cls(st_[2])}" if st_[0] in ("cast", "bitcast") else st_[0]
           for k, st_ in enumerate(desc["steps"]) if n_in + k in live or st_[0] == "assign"]   # an assign acts unread
  return f"{ins}|{';'.join(steps)}" + ("|jit" if desc.get("jit") else "")

def first_op(desc:dict, v:GraphVerdict) -> str:
  """The step that makes the first disagreeing output (or the last step)."""
  n_in = len(desc["inputs"])
  out = desc["outputs"][v.output] if v.output is not None and v.output < len(desc["outputs"]) else n_in + len(desc["steps"]) - 1
  if out < n_in: return "input"
  st_ = desc["steps"][out - n_in]
  return f"{st_[0]}:{st_[1]}" if st_[0] in FNS else st_[0]

VIEW_STEPS = {"reshape", "permute", "flip", "shrink", "expand", "pad", "bitcast"}   # movement only: TinyJit may capture no kernel of its own

def _ancestors(desc:dict, vid:int) -> set[int]:
  n_in, seen, todo = len(desc["inputs"]), set(), [vid]
  while todo:
    if (x := todo.pop()) in seen: continue
    seen.add(x)
    if x >= n_in:
      st_ = desc["steps"][x - n_in]
      todo += [st_[f] for f in ID_FIELDS[st_[0]]]
  return seen

LAYOUT_KEPT = {"reshape", "bitcast"}   # view steps that leave a contiguous buffer contiguous

def input_under_views(desc:dict, out:int) -> int|None:
  """The input a value is, when it is only steps that make no kernel of their own over it: movement (``VIEW_STEPS``),
  a reduction or cumsum over axes of size 1, and ``contiguous()`` of something already contiguous (the input, or a reshape of it);
  else None. Conservative: ``contiguous()`` over a permute, flip, pad, ... copies, so it is a kernel and the answer is None."""
  n_in, x, below_contiguous, shapes = len(desc["inputs"]), out, False, None
  while x >= n_in:
    st_ = desc["steps"][x - n_in]
    if st_[0] == "contiguous": below_contiguous, x = True, st_[1]
    elif st_[0] in VIEW_STEPS:
      if below_contiguous and st_[0] not in LAYOUT_KEPT: return None
      x = st_[1]
    elif st_[0] in ("reduce", "cumsum"):   # over axes of size 1: the identity, no kernel
      if shapes is None: shapes = [v.shape for v in build_values(without_jit(desc), [make_input(i) for i in desc["inputs"]])]
      src, axes = (st_[2], st_[3]) if st_[0] == "reduce" else (st_[1], [st_[2]])
      if any(shapes[src][ax] != 1 for ax in axes): return None
      x = src
    else: return None
  return x

def _failed_output(desc:dict, v:GraphVerdict) -> int:
  n_in = len(desc["inputs"])
  return desc["outputs"][v.output] if v.output is not None and v.output < len(desc["outputs"]) else n_in + len(desc["steps"]) - 1

def assign_cause(desc:dict, v:GraphVerdict) -> str|None:
  """A wrong output that is a view of an input the program also assigns to, realized together with that assign (it reads
  the assigned values: shipped as graph-e25ae63c8ab9's bug): one bug whatever the view, the dtype or the assigned value."""
  base = input_under_views(desc, _failed_output(desc, v))
  if base is not None and any(st_[0] == "assign" and st_[1] == base for st_ in desc["steps"]): return ASSIGN_CAUSE
  return None

ASSIGN_CAUSE = "assign:view-of-target"

def jit_cause(desc:dict, v:GraphVerdict) -> str:
  """What a TinyJit failure turns on, for its signature: an output that makes no kernel over a jit input (tinygrad
  captures none for it, and replay returns the captured call's buffer), loop-carried state (an output fed back as an
  input), an assign inside the jitted function, or else the disagreeing op. One cause is one bug, whatever the program
  around it; a view of an input is decided first, as it fails the same way with or without a carry."""
  n_in, out = len(desc["inputs"]), _failed_output(desc, v)
  if input_under_views(desc, out) is not None: return "jit:view-of-input"
  if desc.get("carry"): return "jit:carried"    # an output fed back as an input (x = f(x)): the replay's input and output alias
  if any(a >= n_in and desc["steps"][a - n_in][0] == "assign" for a in _ancestors(desc, out)): return "jit:assign"
  return f"jit:{first_op(desc, v)}"

FLAKY = "flaky (passes on re-check)"
JIT_BLAME = "runtime (TinyJit capture/replay; the plain run agrees)"

def _blame(desc:dict, v:GraphVerdict, scheduler, candidate) -> str:
  """Which layer is wrong, decided on the shrunk case: a TinyJit failure whose plain run agrees is the JIT's (runtime);
  otherwise the per-kernel check (scheduler / codegen / runtime) with the scheduler that is wrong."""
  from uopcheck.check.kernel import check_per_kernel
  sched = candidate if v.wrong == "candidate" else scheduler
  plain = without_jit(desc)
  if desc.get("jit") and v.jit_call is not None:
    if _check_with(plain, sched).ok: return JIT_BLAME
  try: return check_per_kernel(lambda: build_program(plain), "fuzz", scheduler=sched).blame or FLAKY
  except Exception as e: return f"per-kernel check failed: {type(e).__name__}"

def finalize(desc:dict, v:GraphVerdict, scheduler:Callable|None=None, seed:int|None=None, candidate:Callable|None=None,
             blame:str|None=None, kernels:list|None=None, attribute:bool=True) -> dict:
  """A shrunk failure as a finding: blame *on the shrunk case* (``_blame``), and a signature of the bug (kind, which
  scheduler, blame, the disagreeing op, the normalized program), not of the run. ``blame`` given (e.g. past the time
  budget, or for a hang) skips the blame checks. A failure that passes its blame check *and* a whole re-check is ``flaky``:
  not confirmed, so never reported as tinygrad's bug (kept as ``flaky-*.json`` to look at)."""
  if attribute and v.kind is not FailureKind.INTERNAL and (emulated := _attribute_emulated(desc, v, scheduler, seed, candidate, kernels)) is not None:
    return emulated
  kind = "graph" if v.kind is not FailureKind.INTERNAL else "uopcheck-internal"
  if blame is None and v.kind is FailureKind.CRASH and scheduler is None and v.wrong != "candidate" and crashes_without_capture(desc) is False:
    # stock tinygrad raised under uopcheck's capture but not on its own: the crash is ours until shown otherwise (a crash
    # that took a worker down comes with its blame and is never re-run here, in the campaign's own process)
    kind, v = "uopcheck-internal", dataclasses.replace(v, summary=f"raised only under uopcheck's capture (plain tinygrad realizes it): {v.summary}")
  if blame is None:
    blame = v.kind
    if v.kind in (FailureKind.MISMATCH, FailureKind.SPEC_ERROR):
      blame = _blame(desc, v, scheduler, candidate)
      if blame == FLAKY:
        if check_program(desc, scheduler, candidate).ok: kind = "flaky"
        else: blame = "scheduler (each kernel agrees on its own: the order, dependencies or copies between them do not)"
  # a bug of the candidate alone is its own; one stock rangeify has too ("stock", "both", or no candidate) is stock's bug
  op, norm = first_op(desc, v), normalized(desc)
  # a TinyJit bug is in the capture/replay, not in what the program computes: the program's shape is left out of it
  # a crash is signed by its message with the numbers taken out (the same assert on other shapes is one bug)
  # a view of an assign's target read after the assign is signed by that cause alone, like a TinyJit cause
  is_jit = blame == JIT_BLAME
  cause = jit_cause(desc, v) if is_jit else assign_cause(desc, v) if v.kind is FailureKind.MISMATCH else None
  what = re.sub(r"\(N(, N)*,?\)", "(N...)",
                re.sub(r"\d+", "N", v.summary.split(": ", 1)[-1]))[:80] if v.kind is FailureKind.CRASH else cause or norm
  # (the assign cause leaves the blame out too: whether the per-kernel triage says "scheduler" or, when every kernel and
  # the chain agree, "scheduler (each kernel agrees ...)" depends on the program around it, not on the bug)
  sig_blame = "" if cause == ASSIGN_CAUSE else blame
  sig_op = op if v.kind is not FailureKind.CRASH and cause is None else ""
  sig = digest(f"graph|{v.kind}|{'candidate|' if v.wrong == 'candidate' else ''}{sig_blame}|{sig_op}|{what}")
  d = {"kind": kind, "failure": v.kind, "signature": sig,
       "summary": v.summary, "blame": blame, "first_op": op, "normalized": norm, "seed": seed, "program": desc}
  if v.wrong: d["wrong_scheduler"] = v.wrong
  if kernels: d["kernels"] = [{"name": n, "source": src} for n, src in kernels]
  return d

def _attribute_emulated(desc:dict, v:GraphVerdict, scheduler, seed, candidate, kernels) -> dict|None:
  """On tinygrad's mock GPU a failure has three possible authors: the emulator, tinygrad's AMD backend, and what tinygrad
  shares with every device. A crash inside the emulator is the emulator's (``emulator-*.json``); otherwise the program is
  re-run on the CPU path in this process: failing there too, it is tinygrad's shared bug, finalized (and signed) as a CPU
  finding; passing there, it is ``amd-*.json``: the AMD path alone, emulator or backend -- hardware decides -- never filed
  as tinygrad's bug. None off the mock."""
  from tinygrad.helpers import DEV, Context
  from uopcheck.fuzz.program import targeting
  if not DEV.interface.startswith("MOCK"): return None
  if v.emulator: kind, blame = "emulator", "emulator (tinygrad's mock GPU raised: not the AMD backend)"
  else:
    with Context(DEV="CPU"), targeting("CPU"):
      cpu = check_program(desc, scheduler, candidate)
      if not cpu.ok: return {**finalize(desc, cpu, scheduler, seed, candidate, kernels=kernels, attribute=False), "also_on": "the emulated AMD path"}
    kind, blame = "amd-unattributed", "AMD path only: the CPU path agrees (the emulator or tinygrad's AMD backend; hardware decides)"
  d = finalize(desc, dataclasses.replace(v, emulator=False), scheduler, seed, candidate, blame=blame, kernels=kernels, attribute=False)
  return {**d, "kind": kind}

def crashes_without_capture(desc:dict) -> bool|None:
  """A crash confirmed independently of uopcheck: the program built and realized by plain tinygrad -- no capture, no
  reference, no comparison -- its outputs copied to the CPU and read as ``fast.run`` reads them. True: tinygrad raises
  on its own; False: it does not (the crash needs uopcheck's capture); None: not re-run this way (a TinyJit program)."""
  from tinygrad import Tensor, Device
  from uopcheck.fast.runner import on_device
  if desc.get("jit"): return None
  try:
    outs = on_device(build_program(desc), Device.DEFAULT)
    Tensor.realize(*outs)
    for t in outs: t.numpy()
  except Exception: return True
  return False

FILE_PREFIX = {"graph": "graph", "uopcheck-internal": "internal", "flaky": "flaky", "external-fault": "external", "emulator": "emulator",
               "amd-unattributed": "amd"}

def program_size(d:dict) -> int: return len(d["program"]["steps"])

def validate_finding(d:dict) -> None:
  """The one schema check every reader of a graph finding runs first (campaign loads, pytest collection, promote, audit):
  a well-formed program whose every step builds (lazily, on shape-only inputs: read by an output or not), a known kind,
  failure and signature form. One line on failure. (Whether the record is what the program does is ``recheck``'s.)"""
  validate_program(d["program"])
  if not isinstance(d.get("signature"), str) or not re.fullmatch(r"[0-9a-f]{12}", d["signature"]): raise ValueError("missing or malformed signature")
  if d.get("kind") not in FILE_PREFIX: raise ValueError(f"unknown finding kind {str(d.get('kind'))[:40]!r}")
  if d.get("failure") not in set(FailureKind): raise ValueError(f"unknown failure {str(d.get('failure'))[:40]!r}")
  from tinygrad import Tensor
  from uopcheck.fuzz.program import target_device
  shapes_only = [Tensor.empty(*i["shape"], dtype=DTYPES[i["dtype"]], device=target_device(i.get("device", "CPU"))) for i in d["program"]["inputs"]]
  build_values(without_jit(d["program"]), shapes_only)

def recheck(d:dict) -> str|None:
  """A (validated) graph finding re-derived on the installed tinygrad: None when it fails the same way and signs the same,
  else why not. A refusal of the program by uopcheck, a pass, another kind of failure, or another signature is never a
  reproduction; a crash must also raise in plain tinygrad (no capture). A candidate scheduler's finding is not re-checked
  here (the finding does not name the scheduler)."""
  if d["kind"] != "graph": return f"a {d['kind']} record, not a tinygrad finding"
  if d.get("wrong_scheduler") == "candidate":
    return "a candidate scheduler's finding: re-check it with that scheduler (uopcheck fuzz graph --scheduler)"
  desc = d["program"]
  v = check_program(desc)
  if v.ok: return "passes on this tinygrad"
  if v.kind is FailureKind.INTERNAL: return f"uopcheck could not check it ({v.summary[:120]})"
  if v.kind != d["failure"]: return f"fails as a {v.kind}, the finding records a {d['failure']}"
  if v.kind is FailureKind.CRASH and crashes_without_capture(desc) is False:
    return "raises only under uopcheck's capture (plain tinygrad realizes it)"
  again = finalize(desc, v, seed=d.get("seed"))
  if again["signature"] != d["signature"]: return f"signs as {again['signature']} on this tinygrad, the finding says {d['signature']}"
  return None

def replay_verdict(d:dict) -> str:
  """``uopcheck replay``'s verdict on a saved graph finding, re-run exactly as recorded: still failing, fixed, changed,
  or skipped (a candidate scheduler's finding needs that scheduler)"""
  if d.get("wrong_scheduler") == "candidate": return "skipped: a candidate scheduler's finding (replay it with that scheduler's campaign)"
  v = check_program(d["program"])
  return "fixed" if v.ok else "still failing" if v.kind == d["failure"] else f"changed: fails as a {v.kind} now ({v.summary[:100]})"

# its findings store's files: one per signature, the smaller program wins. uopcheck's own failures go to ``internal-*.json``,
# unconfirmed ones to ``flaky-*.json`` and workers lost to something outside the case to ``external-*.json``
# (fuzz/lost_case.py), apart from tinygrad's ``graph-*.json`` (the findings ``load`` reads)
LAYOUT = Layout("graph", FILE_PREFIX, program_size, validate_finding)

def load_graph_findings(directory:str|os.PathLike, pattern:str="graph-*.json") -> tuple[list[tuple[pathlib.Path, dict]], list[str]]:
  """(every good graph finding -- or record of another kind, by ``pattern`` -- one line per corrupt file skipped)."""
  return DirectoryStore(directory, LAYOUT).load(pattern)

