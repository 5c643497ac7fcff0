"""Symbolic fuzzing: random integer expressions (weakint and sized ints), each checked ``e`` vs ``e.simplify()``.

A check first tries the exhaustive evaluator on small domains, then z3 (``spec.z3model.check_rewrite``). A refutation
counts only once it is *confirmed* independently: the counterexample gives every variable a value inside each of its
declared ranges, and the numpy semantics, evaluated there, disagree too. An unconfirmed refutation is uopcheck's own
failure (``uopcheck-internal``), kept apart and never reported as a tinygrad bug. Confirmed cases are shrunk by
hypothesis; the minimal one is attributed to the rule application that breaks refinement, given a signature (that rule
plus the normalized form of the node it rewrote) and saved as data (``spec.uop_json``: parsed, never executed) unless
the shipped corpus already knows that signature."""
from __future__ import annotations
import argparse
from typing import Any, Callable
import contextlib, dataclasses, os, pathlib, sys, time
from dataclasses import dataclass, field
from hypothesis import strategies as st
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes
from uopcheck.spec.z3model import check_rewrite, Proved, Refuted
from uopcheck.spec.ints import OverflowReading
from uopcheck.spec import uop_json
from uopcheck.spec.optable import SIZED_INTS
from uopcheck.fuzz.pipeline import check_pipeline, pipeline_root
from uopcheck.fuzz.campaign import Campaign, Failure, UNSHRUNK
from uopcheck.progress import StatusLine
from uopcheck.interrupts import sticky_sigint, raise_if_interrupted
from uopcheck.fuzz.exhaustive import exhaustive_check, evaluate_at, in_every_range, variables
from uopcheck.results import Column, Table, Section, Result, Outcome, at_source
from uopcheck.fuzz.findings_io import FindingsUnwritable, digest, open_example_db, write_or_stop, DEFAULT_FINDINGS, SHIPPED_FINDINGS
from uopcheck.fuzz.fuzzers import Fuzzer, Work
from uopcheck.fuzz.supervisor import current_file, pending_file, written_since
from uopcheck.fuzz.findings_store import Layout, FindingsStore, DirectoryStore, known_signatures

SIZED = list(SIZED_INTS)   # every sized int, uint16 (the one C promotes to int in a product) included

@dataclass
class Verdict:
  kind: str                # proved | refuted | unknown | unchanged
  how: str = ""            # exhaustive | z3
  detail: object = None

def check_expr(e:UOp, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=3000) -> tuple[Verdict, UOp]:
  s = e.simplify()
  if s is e: return Verdict("unchanged"), s
  return compare_exprs(e, s, reading, timeout_ms), s

def compare_exprs(e:UOp, s:UOp, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=3000, fast_weak:bool=False) -> Verdict:
  """Is ``s`` a refinement of ``e``? Exhaustively on small domains, else z3 (``fast_weak``: see ``_mixes_weak``)."""
  ex = exhaustive_check(e, s, limit=1 << 20, ub_is_undefined=reading is OverflowReading.UNDEFINED) if e.dtype == s.dtype else None
  if ex is not None:
    ok, asg, bv, av = ex
    return (Verdict("proved", "exhaustive") if ok else Verdict("refuted", "exhaustive", Refuted(asg, bv, av, "values differ"
                                                                                             if av != "undefined" else "introduces UB")))
  r = check_rewrite(e, s, reading, timeout_ms, weak_bits=64 if fast_weak and _mixes_weak(e, s) else None)
  if isinstance(r, Proved): return Verdict("proved", "z3")
  if isinstance(r, Refuted): return Verdict("refuted", "z3", r)
  return Verdict("unknown", "z3", r)

def _mixes_weak(*us:UOp) -> bool:
  """weakint beside sized ints (a lowered expression): z3 is much faster with weakint as a 64-bit vector there, exact while
  no value needs more bits -- check_rewrite proves the original's do (else no verdict), so this never makes a pass"""
  dts = {u.dtype for x in us for u in x.toposort()}
  return dtypes.weakint in dts and any(d in dtypes.ints for d in dts)

# ** hypothesis strategies **

@st.composite
def variable(draw:st.DrawFn, dt:DType, name:str) -> UOp:
  lo_lim, hi_lim = (-300, 300) if dt == dtypes.weakint else (dt.min, dt.max)
  edge = st.sampled_from([lo_lim, hi_lim, 0, 1, -1, 255, 256, 2**31 - 1, -2**31, 2**15, 2**16]).filter(lambda v: lo_lim <= v <= hi_lim)
  a = draw(st.one_of(st.integers(max(lo_lim, -16), min(hi_lim, 16)), edge, st.integers(lo_lim, hi_lim)))
  b = draw(st.one_of(st.integers(max(lo_lim, -16), min(hi_lim, 16)), edge, st.integers(lo_lim, hi_lim)))
  lo, hi = min(a, b), max(a, b)
  return UOp.variable(name, lo, hi, dtype=dt)

@st.composite
def const_for(draw:st.DrawFn, dt:DType) -> int:
  small = st.integers(-9, 9)
  if dt == dtypes.weakint: return draw(st.one_of(small, st.sampled_from([2**31 - 1, -2**31, 2**32, 2**31, 256, 255, 2**63 - 1])))
  return draw(st.one_of(small, st.sampled_from([dt.min, dt.max, dt.max // 2 + 1, 1 << (dt.bitsize - 1) if dt in dtypes.uints else dt.max])).filter(
    lambda v: dt.min <= v <= dt.max))

@st.composite
def int_expr(draw:st.DrawFn, depth:int=4, dt:DType|None=None, vars_:dict|None=None) -> UOp:
  """A random int expression of one dtype (weakint or a sized int), casts crossing between them. ``vars_`` (name -> UOp) is
  shared by the whole expression, casts included, and names come from its size: one name is always one variable, never two
  of different dtype or range (tinygrad binds variables by name)."""
  if dt is None: dt = draw(st.one_of(st.just(dtypes.weakint), st.just(dtypes.weakint), st.sampled_from(SIZED)))
  if vars_ is None: vars_ = {}
  def leaf():
    same = [v for v in vars_.values() if v.dtype == dt]
    if draw(st.booleans()) or not same:
      if len(same) < 3:
        name = f"{'abc'[len(vars_) % 3]}{len(vars_)}"
        v = draw(variable(dt, name))
        vars_[name] = v
        return v
      return draw(st.sampled_from(same))
    c = draw(const_for(dt))
    return UOp.const(c, dt)
  if depth <= 0: return leaf()
  kind = draw(st.sampled_from(["leaf", "bin", "bin", "bin", "unc", "where", "cast"]))
  if kind == "leaf": return leaf()
  def sub():
    return draw(int_expr(depth - 1, dt, vars_))
  if kind == "bin":
    op = draw(st.sampled_from(["+", "-", "*", "//", "%", "max", "min", "&", "<<", ">>"]))
    a, b = sub(), sub()
    if op in ("//", "%"):
      c = draw(st.integers(1, 9) if dt in dtypes.uints else st.integers(-9, 9).filter(lambda x: x != 0))
      return a // c if op == "//" else a % c
    if op == "&": return a & UOp.const(draw(st.sampled_from([1, 3, 7, 255, 0xFFFF])) if dt.max >= 0xFFFF or dt == dtypes.weakint else 1, dt)
    if op in ("<<", ">>"):
      k = draw(st.integers(0, 4))
      return a * (1 << k) if op == "<<" else a // (1 << k)
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "max": lambda: a.maximum(b), "min": lambda: a.minimum(b)}[op]()
  if kind == "unc":
    a = sub()
    c = draw(const_for(dt))
    return draw(st.sampled_from([a + c, a * c, a.maximum(UOp.const(c, dt))]))
  if kind == "where":
    a, b, x, y = sub(), sub(), sub(), sub()
    cond = draw(st.sampled_from([a < b, a.ne(b)]))
    return cond.where(x, y)
  # cast: through another dtype and back (the same variable pool: a name keeps its one dtype and range)
  other = draw(st.sampled_from([dtypes.weakint] + SIZED))
  inner = draw(int_expr(depth - 1, other, vars_))
  return inner.cast(dt)

# ** confirmation, signatures, findings **

def confirm(e:UOp, s:UOp, v:Verdict, reading:OverflowReading) -> str|None:
  """None when a refutation holds up on its own: the assignment lies inside every declared range of every variable (one name
  is one value) and the numpy semantics disagree there too. Otherwise the reason it does not (a uopcheck-internal failure)."""
  if (empty := [n for n, (lo, hi) in variables(e, s).items() if lo > hi]):
    return f"no assignment satisfies every declared range of {empty} (one name is one value): the expression is vacuous"
  if e.dtype != s.dtype: return None  # a dtype change is a fact about the two graphs, no assignment needed
  asg = getattr(v.detail, "assignment", None)
  if not isinstance(asg, dict): return "the refutation carries no assignment"
  if (why := in_every_range(asg, e, s)) is not None: return f"counterexample out of range: {why}"
  try: (bv, bu), (av, au) = evaluate_at([e, s], asg, ub_is_undefined=reading is OverflowReading.UNDEFINED)
  except Exception as ex: return f"numpy evaluation failed: {type(ex).__name__}: {ex}"
  if bu: return "numpy: the original is undefined at the counterexample"
  if not au and bv == av: return f"numpy: both sides give {bv} at the counterexample"
  if au and (past := _weak_past_int64(s, asg)):
    return f"numpy holds weakint as int64 and the rewrite's weakint value {past} leaves it: its 'undefined' there is the " \
           "evaluator's limit (spec.ints.PYTHON_ALU_DIFFERENCES), not the spec's"
  return None

def _weak_past_int64(u:UOp, assignment:dict) -> int|None:
  """a weakint value of ``u`` at the assignment that int64 cannot hold (tinygrad's own python_alu: exact), or None -- also
  when python_alu cannot evaluate ``u`` there (a division by zero): numpy's 'undefined' then stands"""
  try: vals = python_values(u, assignment)
  except Exception: return None
  return next((v for x, v in vals.items() if x.dtype == dtypes.weakint and isinstance(v, int) and not -2**63 <= v < 2**63), None)

def _const_class(c) -> str:
  if isinstance(c, bool) or c in (0, 1, -1): return repr(c)
  return "+c" if isinstance(c, int) and c > 0 else "-c" if isinstance(c, int) else type(c).__name__

def skeleton(u:UOp, depth:int=1_000) -> str:
  """A normalized form: ops and dtypes, variables renamed by first appearance, constants by class (0, 1, -1, +c, -c);
  below ``depth`` levels only a node's op and dtype remain."""
  names: dict[str, str] = {}
  def go(x:UOp, d:int) -> str:
    if x.op is Ops.CONST: return f"C[{_const_class(x.arg)}:{x.dtype.name}]"
    if x.op in (Ops.BUFFER, Ops.PARAM) and x.arg.name is not None: return names.setdefault(x.arg.name, f"v{len(names)}") + f":{x.dtype.name}"
    return f"{x.op.name}:{x.dtype.name}" + ("(" + ",".join(go(y, d - 1) for y in x.src) + ")" if d > 0 else "")
  return go(u, depth)

def signature(d:dict) -> str:
  """A simplify finding: the blamed rule + the node it rewrote. A pipeline finding: the stage that breaks it + the reason +
  the dtype (the expression around it is the run, not the bug)."""
  if d.get("check") == "pipeline": return digest(f"pipeline|{d.get('stage')}|{d['reason'].split(' (')[0]}|{d.get('dtype')}")
  return digest(f"symbolic|{d.get('rule')}|{d.get('rule_step_skeleton') or d.get('skeleton')}|{d['reason'].split(' (')[0]}")

def finding_json(e:UOp, s:UOp, v:Verdict, reading:OverflowReading, seed:int|None=None) -> dict:
  r = v.detail
  return {"kind": "symbolic", "expr": uop_json.encode(e), "simplified": uop_json.encode(s), "expr_text": e.render(simplify=False),
          "simplified_text": s.render(simplify=False), "dtype": str(e.dtype), "how": v.how,
          "assignment": getattr(r, "assignment", None), "before": repr(getattr(r, "before", None)), "after": repr(getattr(r, "after", None)),
          "reason": getattr(r, "reason", ""), "rule": None, "seed": seed, "reading": reading.value, "skeleton": skeleton(e, depth=2),
          "confirmed": "in every declared range, and by the numpy semantics" if e.dtype == s.dtype else "the dtypes differ"}

def attribute(d:dict, e:UOp, reading:OverflowReading) -> dict:
  """Give a finding the rule application that first breaks refinement (on the shrunk case) and its signature."""
  from uopcheck.fuzz.rule_blame import blame_rule
  try: blamed = blame_rule(e, reading)
  except Exception: blamed = None
  if blamed:
    d["rule"], d["rule_step"] = blamed.rule, {"before": blamed.before.render(simplify=False), "after": blamed.after.render(simplify=False)}
    d["rule_step_skeleton"] = skeleton(blamed.before, depth=0)  # the rule and the op/dtype it rewrote: the bug, not the run
  else: d["rule"] = "unattributed (the whole simplify, not a single step, breaks refinement)"
  d["signature"] = signature(d)
  return d

def _size(d:dict) -> int: return len(d["expr"]["nodes"])

def load_expr(d:dict, key:str="expr", name:str="finding") -> UOp:
  """A finding's expression, parsed from data (never executed)."""
  return uop_json.decode_one(d[key], f"{name} {key}")

@dataclass
class CampaignStats:
  checked: int = 0
  proved: int = 0
  refuted: int = 0
  unknown: int = 0
  unchanged: int = 0
  pipeline: int = 0                               # of the checks: the codegen pipeline on weakint->int32
  seeds: int = 0                                  # of those: harvested kernel index expressions
  findings: list = field(default_factory=list)   # new, confirmed, saved
  known: list = field(default_factory=list)      # confirmed, but the shipped corpus has the signature
  internal: list = field(default_factory=list)   # uopcheck-internal: refutations that did not confirm
  skipped_files: list = field(default_factory=list)
  seconds: float = 0.0
  interrupted: bool = False                        # Ctrl-C: what was checked before it stands, nothing after it ran
  unfinished: list = field(default_factory=list)  # a failure being shrunk when interrupted (its pending file, kept)
  unwritable: str = ""                             # why the campaign stopped early: its findings directory cannot be written

  def note_internal(self, e:UOp, v:Verdict, why:str) -> None:
    """a refutation that did not confirm: uopcheck's own failure, kept apart (the first 100)"""
    if len(self.internal) < 100: self.internal.append({"expr_text": e.render(simplify=False), "verdict": str(v.detail), "why": why})

  def file_finding(self, d:dict, known:dict, store:FindingsStore, events:Any=None) -> None:
    """a confirmed, signed finding: counted as known, or saved (the smaller one wins) and listed once; a supervised
    worker also tells its supervisor (``events``)"""
    if d["signature"] in known: self.known.append({**d, "known_as": known[d["signature"]]})
    else:
      store.save(d)
      if all(f["signature"] != d["signature"] for f in self.findings): self.findings.append(d)
    if events is not None: events.put(classify(d, known))

  def counts(self) -> dict:
    """what the live status shows"""
    return {"checked": self.checked, "per_s": round(self.checked / self.seconds, 1) if self.seconds else 0.0, "proved": self.proved,
            "refuted": self.refuted, "unknown": self.unknown, "new_findings": len(self.findings), "known_findings": len(self.known),
            "uopcheck_internal": len(self.internal)}

  def line(self) -> str:
    rate = self.checked / self.seconds if self.seconds else 0.0
    return (f"checked {self.checked} ({rate:.1f}/s; {self.pipeline} through the codegen pipeline, {self.seeds} kernel index seeds): "
            f"proved {self.proved}, refuted {self.refuted}, unknown {self.unknown}, "
            f"unchanged by simplify {self.unchanged}; new findings {len(self.findings)}, known {len(self.known)}, "
            f"uopcheck-internal {len(self.internal)}")

def run_campaign(minutes:float, seed:int|None=None, findings_dir:str=DEFAULT_FINDINGS, db_dir:str|None=".hypothesis/uopcheck-symbolic",
                 reading:OverflowReading=OverflowReading.UNDEFINED, progress:bool=True, max_examples:int|None=None,
                 known_dir:str|os.PathLike|None=SHIPPED_FINDINGS, pipeline:bool=True, live:Any=None, work:Work|None=None,
                 stats:CampaignStats|None=None) -> CampaignStats:
  """Fuzz ``e`` vs ``e.simplify()`` -- and, for weakint ``e`` with ``pipeline``, the codegen integer pipeline on ``e`` cast to
  int32 (``fuzz.pipeline``) -- for a time budget with hypothesis (example database in ``db_dir``). A confirmed refutation
  is written at once to a pending file (a kill loses nothing); while hypothesis shrinks it, smaller confirmed versions
  replace it. When the round ends, the minimal case is attributed, signed, and saved -- or counted as known.
  Under the supervisor (``work``: one of its worker processes or Dask shards) each case is written first to the worker's
  ``.current`` file (and published), cases are counted in the shared counter, findings go to the work's store and are
  told to the supervisor, the index seeds are checked by worker 0 only, and Ctrl-C is the supervisor's."""
  db = open_example_db(db_dir)
  stats = stats or CampaignStats()
  known = known_signatures(LAYOUT, known_dir)
  store = (work.store if work is not None else None) or DirectoryStore(findings_dir, LAYOUT)
  events = work.events if work is not None else None
  on_case = _case_writer(work, reading, pipeline) if work is not None else None
  start = time.perf_counter()
  deadline = start + minutes * 60
  status = StatusLine(sys.stdout, every_s=15.0, enabled=progress)
  if live is not None:   # under `uopcheck coverage`: the rules newly fired, live
    from uopcheck.rulecov.collect import FiredRules, tracking
    live.watch_rules(tracked := tracking(), FiredRules() if tracked else None)
  def check(e) -> Failure|None:
    raise_if_interrupted()
    if on_case is not None: on_case(e)
    for kind in ("simplify", "pipeline") if pipeline else ("simplify",):
      if kind == "pipeline" and e.dtype != dtypes.weakint: continue
      try:
        if kind == "simplify": (v, s), root, stage = check_expr(e, reading), e, None
        else: (v, s, stage), root = check_pipeline(e, reading), pipeline_root(e)
      except CHECK_ERRORS: continue
      stats.checked += 1
      if kind == "pipeline": stats.pipeline += 1
      setattr(stats, v.kind, getattr(stats, v.kind) + 1)
      stats.seconds = time.perf_counter() - start
      status.update(stats.line())
      if live is not None: live.update(phase="random expressions", budget_s=round(minutes * 60), **stats.counts())
      if v.kind != "refuted": continue
      if (why := confirm(root, s, v, reading)) is not None:
        stats.note_internal(root, v, why)
        continue  # not a tinygrad finding: hypothesis must not shrink towards it
      d = finding_json(root, s, v, reading, seed)
      if stage is not None: d.update({"check": "pipeline", "stage": stage})
      return Failure(len(e.toposort()), d, case=root)
    return None
  def finish(f:Failure) -> None:
    d = f.record
    if d.get("check") == "pipeline": d["rule"], d["signature"] = f"pipeline stage: {d['stage']}", signature(d)
    else: attribute(d, f.case, reading)
    if f.cut_short: d["shrink"] = UNSHRUNK
    stats.file_finding(d, known, store, events)
  pending = pending_file(findings_dir, "symbolic", os.getpid())
  seed_of = None if seed is None else (lambda r: seed + r) if work is None else (lambda r: seed * 1000 + work.wid * 100 + r + work.round_offset)
  campaign = Campaign(int_expr(), check, finish, deadline, pending, db, max_examples, seed_of, SHRINK_BUDGET,
                      on_pending=None if work is None or work.publish is None else (lambda rec: work.publish({"pending": rec})))
  try:
    with sticky_sigint() if work is None else contextlib.nullcontext():
      if pipeline and (work is None or work.first()):
        _check_seeds(stats, reading, seed, known, store, deadline, status, live, start, on_case, events)
      campaign.run()
  except KeyboardInterrupt:   # z3's caught Ctrl-C is raised as one too (spec.z3model.check): never a verdict
    stats.interrupted = True
    if pending.exists(): stats.unfinished.append(str(pending))
  except FindingsUnwritable as e: stats.unwritable = str(e)   # nothing more could be kept: stop, report, exit 3
  finally:
    stats.seconds = time.perf_counter() - start
    status.close(stats.line() + (" (interrupted)" if stats.interrupted else ""))
    if work is not None: current_file(findings_dir, work.wid).unlink(missing_ok=True)
  return stats

def result(st:CampaignStats, extra:dict) -> Result:
  """new findings, the known ones met again, uopcheck-internal refutations (the first 10), and where the findings are"""
  new = [f"{'UNSHRUNK' if f.get('shrink') == UNSHRUNK else 'NEW'} symbolic-{f['signature']}: {f.get('rule')} [{f.get('dtype')}] "
         f"{f.get('reason')} at {f.get('assignment')}: "
         f"before={f.get('before')} after={f.get('after')}" +
         (f" (the rule for all inputs: uopcheck rules verify --only {f['rule']})" if str(f.get("rule", "")).startswith("tinygrad/") else "")
         for f in st.findings]
  known_as = sorted({f["known_as"] for f in st.known})
  known = [f"known: {k} (shipped corpus)" for k in known_as]
  internal = [f"uopcheck-internal (not a tinygrad finding): {f['why']}: {f['expr_text'][:120]}" for f in st.internal[:10]]
  counts = {k: getattr(st, k) for k in ("checked", "proved", "refuted", "unknown", "unchanged", "pipeline", "seeds")}
  unshrunk = sorted(f["signature"] for f in st.findings if f.get("shrink") == UNSHRUNK)
  fdir = pathlib.Path(extra["findings_dir"])
  outcomes = [Outcome(f"symbolic-{f['signature']}", "fail", line, *(at_source(f["rule"]) if str(f.get("rule", "")).startswith("tinygrad/")
                      else (str(fdir / f"symbolic-{f['signature']}.json"), 0)), group="fuzz symbolic") for f, line in zip(st.findings, new)]
  outcomes += [Outcome(k, "skip", "known (shipped corpus)", group="fuzz symbolic") for k in known_as]
  outcomes += [Outcome(f"uopcheck-internal {i}", "error", line, group="fuzz symbolic") for i, line in enumerate(internal)]
  return Result("fuzz_symbolic", "uopcheck symbolic campaign", {**dataclasses.asdict(st), "unshrunk": unshrunk, **extra}, outcomes=outcomes,
                tables=[Table([Column(k, width=9, align=">") for k in counts], [counts])],
                summary=([f"{len(unshrunk)} of {len(st.findings)} new findings UNSHRUNK: the budget ended their shrink, not minimal"]
                         if unshrunk else []) +
                        [f"findings directory: {extra['findings_dir']} (review, then `uopcheck findings promote FILE` to ship one)"],
                sections=[Section(t, x) for t, x in (("findings", new), ("known", known), ("uopcheck-internal", internal)) if x])

def run_from_cli(args:argparse.Namespace) -> int:
  """``uopcheck fuzz symbolic``: the campaign, then its findings, known and uopcheck-internal lines; the exit code"""
  from uopcheck.fuzz.findings_io import exit_code, probe_writable, EXIT_CLEAN, EXIT_INTERNAL
  if args.harvest:
    from uopcheck.fuzz.index_seeds import harvest, write_seeds
    exprs = harvest()
    print(f"{len(exprs)} index expressions from the kernels of the real graphs -> {write_seeds(exprs)}")
    return EXIT_CLEAN
  probe_writable(args.findings)   # a full disk or read-only directory: one line and exit 3 before the campaign starts
  open_example_db(args.db)   # refused input is one line, before the run directory (and its live status) exists
  from uopcheck.runs import live_status
  live = live_status(args, "fuzz-symbolic")
  st = run_campaign(args.minutes, seed=args.seed, findings_dir=args.findings, db_dir=args.db, reading=OverflowReading(args.reading),
                    pipeline=not args.no_pipeline, live=live)
  if live is not None: live.close("stopped" if st.unwritable else "interrupted" if st.interrupted else "finished", phase="done", **st.counts())
  from uopcheck.runs import report
  res = result(st, {"minutes": args.minutes, "seed": args.seed, "reading": args.reading, "findings_dir": args.findings})
  if st.interrupted:
    res.summary.insert(0, f"PARTIAL: interrupted (Ctrl-C) after {st.checked} checks in {st.seconds:.0f} s; saved findings stay saved" +
                       "".join(f"; a failure not yet shrunk is kept in {p}" for p in st.unfinished))
  if st.unwritable: res.summary.insert(0, f"STOPPED EARLY: {st.unwritable}")
  report(args, res, "fuzz-symbolic")
  if st.unwritable:
    print(f"uopcheck: fuzz symbolic stopped: {st.unwritable}", file=sys.stderr)
    return EXIT_INTERNAL
  return 130 if st.interrupted else exit_code(new=len(st.findings), internal=len(st.internal))

from uopcheck.settings import SYMBOLIC_SHRINK_BUDGET as SHRINK_BUDGET  # noqa: E402
# tinygrad raising while simplifying or lowering a drawn expression: not a verdict, the case is skipped
CHECK_ERRORS = (RecursionError, AssertionError, RuntimeError, ValueError, TypeError, ZeroDivisionError, OverflowError, KeyError)

def _check_seeds(stats:CampaignStats, reading:OverflowReading, seed:int|None, known:dict, store:FindingsStore, deadline:float,
                 status:StatusLine|None=None, live=None, start:float=0.0, on_case:Callable[[UOp], None]|None=None, events:Any=None) -> None:
  """Every harvested kernel index expression (``fuzz/index_seeds.json``), at its size and with its loops scaled up, through
  the codegen pipeline; a confirmed refutation is saved like any finding (a seed is already small: no shrinking). The
  phase shows its progress (seed i of n) on the status line and in the live status."""
  from uopcheck.fuzz.index_seeds import load_seeds, scaled, SCALES
  seeds = load_seeds()
  for i, e0 in enumerate(seeds, 1):
    stats.seconds = time.perf_counter() - start
    if status is not None: status.update(f"index seeds {i}/{len(seeds)}: {stats.line()}")
    if live is not None: live.update(phase=f"index seeds {i}/{len(seeds)}", **stats.counts())
    for k in SCALES:
      raise_if_interrupted()
      if time.perf_counter() > deadline: return
      e = scaled(e0, k)
      if on_case is not None: on_case(e)
      try: v, s, stage = check_pipeline(e, reading)
      except CHECK_ERRORS: continue
      stats.checked += 1
      stats.pipeline += 1
      stats.seeds += 1
      setattr(stats, v.kind, getattr(stats, v.kind) + 1)
      if v.kind != "refuted": continue
      root = pipeline_root(e)
      if (why := confirm(root, s, v, reading)) is not None:
        stats.note_internal(root, v, why)
        continue
      d = {**finding_json(root, s, v, reading, seed), "check": "pipeline", "stage": stage, "rule": f"pipeline stage: {stage}", "origin": "index seed"}
      d["signature"] = signature(d)
      stats.file_finding(d, known, store, events)

BIG = 1 << 65    # every constant, bound and assigned value of a finding lies within +-2**65 (int64's min to uint64's max fit)

def validate_finding(d:dict) -> None:
  """The one schema check every reader of a symbolic finding runs first (campaign loads, pytest collection, promote,
  audit): the fields and their types, integer expressions that parse, every constant, bound and assigned value within
  +-2**65 and every constant shift count below 128 (a shift by 2**64 would have uopcheck compute 2**(2**64)), each
  variable declared with one dtype and a range lo <= hi, and the signature the record's own fields give. One line on failure.
  (Whether the record is what tinygrad does is ``recheck``'s.)"""
  for k in ("expr", "simplified", "reason", "reading", "signature", "how"):
    if k not in d: raise ValueError(f"missing field {k!r}")
  OverflowReading(d["reading"])
  if d["how"] not in ("exhaustive", "z3"): raise ValueError(f"how must be exhaustive or z3, got {str(d['how'])[:20]!r}")
  if not isinstance(d["reason"], str) or not isinstance(d["signature"], str): raise ValueError("reason and signature must be strings")
  asg = d.get("assignment")
  if asg is not None and not (isinstance(asg, dict) and all(isinstance(k, str) and type(v) is int and -BIG < v < BIG for k, v in asg.items())):
    raise ValueError("assignment must map variable names to integers within +-2**65")
  e, simplified = load_expr(d, "expr"), load_expr(d, "simplified")
  check_exprs(e, simplified, one_dtype_per_name=d.get("check") != "pipeline")   # the pipeline retypes index variables
  if d.get("check") == "pipeline" and d.get("rule") != f"pipeline stage: {d.get('stage')}":
    raise ValueError("a pipeline finding's rule is not its stage")
  if d.get("rule") is None or signature(d) != d["signature"]: raise ValueError("the signature is not the one the record's fields give")

def check_exprs(e:UOp, *more:UOp, one_dtype_per_name:bool=True) -> None:
  """integer expressions read from data, before anything evaluates them: an integer or bool root of at most 500 nodes,
  every constant, bound and range within +-2**65, every constant shift count below 128, each variable one dtype (unless
  told otherwise), only integer, bool or void nodes, and tinygrad's own type rules (a SpecError names the node)"""
  if not (dtypes.is_int(e.dtype) or e.dtype == dtypes.bool): raise ValueError(f"expr has dtype {e.dtype}, not an integer expression")
  if any(len(x.toposort()) > 500 for x in (e, *more)): raise ValueError("an expression has more than 500 nodes")
  declared: dict[str, object] = {}
  for x in UOp.sink(e, *more).toposort():
    if x.op is Ops.CONST and not (isinstance(x.arg, (bool, int)) and -BIG < int(x.arg) < BIG):
      raise ValueError(f"a constant {str(x.arg)[:30]} is not an integer within +-2**65")
    if x.op in (Ops.SHL, Ops.SHR) and x.src[1].op is Ops.CONST and not 0 <= int(x.src[1].arg) < 128:
      raise ValueError("a constant shift count outside [0, 128)")
    if x.op in (Ops.BUFFER, Ops.PARAM) and getattr(x.arg, "vmin_vmax", None) is not None:
      lo, hi = x.arg.vmin_vmax
      if not (type(lo) is int and type(hi) is int and -BIG < lo <= hi < BIG):
        raise ValueError(f"variable {x.arg.name}: range [{str(lo)[:24]}, {str(hi)[:24]}] is not lo <= hi within +-2**65")
      if declared.setdefault(x.arg.name, x.dtype) != x.dtype and one_dtype_per_name:
        raise ValueError(f"variable {x.arg.name} is declared with two dtypes")
  nodes = [x for x in UOp.sink(e, *more).toposort() if x.op is not Ops.SINK]
  if any(not (dtypes.is_int(x.dtype) or x.dtype in (dtypes.bool, dtypes.void)) for x in nodes):
    raise ValueError("a node of expr or simplified is not an integer, bool or void node")
  from uopcheck.spec.structural import verify
  for x in (e, *more): verify(x, "full")

def recheck(d:dict) -> str|None:
  """A (validated) symbolic finding re-derived on the installed tinygrad: None when it reproduces as recorded, else why
  not. What tinygrad makes of ``expr`` now must be the recorded ``simplified`` (the same graph), refuted, and confirmed
  (every variable in range, numpy disagreeing there). A refusal or an error is never a reproduction."""
  e, s = load_expr(d), load_expr(d, "simplified")
  try: v, now = reproduce(d)
  except Exception as ex: return f"tinygrad or uopcheck raised re-checking it: {type(ex).__name__}: {str(ex)[:80]}"
  if now is not s: return "the recorded simplified is not what this tinygrad makes of expr"
  if v.kind != "refuted": return f"{v.kind} on this tinygrad"
  if e.dtype == s.dtype and str(getattr(v.detail, "reason", "")).split(" (")[0] != d["reason"].split(" (")[0]:
    return f"refuted on this tinygrad because {getattr(v.detail, 'reason', '')!r}, the finding says {d['reason']!r}"
  return confirm(e, s, v, OverflowReading(d["reading"]))

# a record's file prefix by its kind: findings, and the lost-case records of the supervisor (a case that took its worker down)
FILE_PREFIX = {"symbolic": "symbolic", "crash": "crash-symbolic", "hang": "hang-symbolic", "external-fault": "external-symbolic"}
LAYOUT = Layout("symbolic", FILE_PREFIX, _size, validate_finding)

def load_findings(directory:str|os.PathLike) -> tuple[list[tuple[pathlib.Path, dict]], list[str]]:
  """(every good symbolic finding in a directory, one line per corrupt file skipped)."""
  return DirectoryStore(directory, LAYOUT).load()

def python_value(u:UOp, assignment:dict[str, int]) -> Any:
  """``u`` at one assignment by tinygrad's own scalar semantics (``exec_alu``: ``python_alu`` + ``truncate``) -- a third,
  independent opinion for auditing findings; it differs from the spec only on ``spec.ints.PYTHON_ALU_DIFFERENCES``."""
  return python_values(u, assignment)[u]

def python_values(u:UOp, assignment:dict[str, int]) -> dict[UOp, Any]:
  """every node of ``u`` at one assignment, as ``python_value`` computes it (weakint exact: tinygrad's is 800 bits)"""
  from tinygrad.uop.ops import exec_alu
  from tinygrad.dtype import truncate
  vals: dict[UOp, object] = {}
  for x in u.toposort():
    if x.op is Ops.CONST: vals[x] = truncate[x.dtype](x.arg) if x.dtype in truncate and x.dtype != dtypes.bool else x.arg
    elif x.op in (Ops.BUFFER, Ops.PARAM) and x.arg.name is not None: vals[x] = assignment[x.arg.name]
    elif x.op is Ops.STACK and x.dtype == dtypes.void: vals[x] = None
    elif x.op is Ops.CAST:
      v = vals[x.src[0]]
      vals[x] = bool(v) if x.dtype == dtypes.bool else int(v) if x.dtype == dtypes.weakint else truncate[x.dtype](int(v))  # type: ignore[call-overload]
    else: vals[x] = exec_alu(x.op, x.dtype, [vals[s_] for s_ in x.src])
  return vals

def audit(d:dict) -> str|None:
  """Re-check a saved finding from scratch: None when it holds up, else why not. It reproduces as recorded (``recheck``:
  the recorded simplified is tinygrad's, refuted and confirmed), names are one value each, the assignment is in every
  declared range, the numpy semantics disagree there (``confirm``), and tinygrad's own python_alu gives the recorded value
  for the original."""
  if (why := recheck(d)) is not None: return why
  e, s = load_expr(d), load_expr(d, "simplified")
  rd = OverflowReading(d["reading"])
  v = Verdict("refuted", d["how"], Refuted(d["assignment"] or {}, d["before"], d["after"], d["reason"]))
  if (why := confirm(e, s, v, rd)) is not None or e.dtype != s.dtype: return why
  try: pb = python_value(e, d["assignment"])
  except Exception as ex: return f"python_alu could not evaluate the original: {type(ex).__name__}"
  if str(int(pb)) != str(d["before"]): return f"python_alu gives {pb} for the original, the finding says {d['before']}"
  if str(d["after"]).lstrip("-").isdigit():
    try: pa = python_value(s, d["assignment"])
    except Exception as ex: return f"python_alu could not evaluate the rewrite: {type(ex).__name__}"
    if str(int(pa)) != str(d["after"]) or pa == pb: return f"python_alu gives {pa} for the rewrite (original {pb}), the finding says {d['after']}"
  return None

def reproduce(d:dict) -> tuple[Verdict, UOp]:
  """A saved finding re-checked on the installed tinygrad: (verdict, what tinygrad makes of the expression now) -- through
  ``simplify()``, or through the codegen pipeline for a pipeline finding (its saved expr is the pipeline's root)."""
  e = load_expr(d)
  if d.get("check") == "pipeline":
    from uopcheck.fuzz.pipeline import run_pipeline
    final = run_pipeline(e)[-1][1]
    return compare_exprs(e, final, OverflowReading(d["reading"]), fast_weak=True), final
  return check_expr(e, OverflowReading(d["reading"]))

def replay_verdict(d:dict) -> str:
  """``uopcheck replay``'s verdict on a saved finding: still failing, fixed, or changed"""
  v, _ = reproduce(d)
  return "still failing" if v.kind == "refuted" else "fixed" if v.kind in ("proved", "unchanged") else f"changed: {v.kind} now"

def replay(d:dict) -> Verdict:
  """Re-check a saved finding against the installed tinygrad: proved/unchanged means it no longer reproduces."""
  return reproduce(d)[0]

# ** the symbolic fuzzer's registration (fuzz/fuzzers.py): ``--workers N`` / ``--cluster`` run it through the supervisor **

def add_arguments(sy:argparse.ArgumentParser) -> None:
  sy.add_argument("--reading", choices=["undefined", "wrap"], default="undefined", help="signed overflow: C's UB or wrap-around")
  sy.add_argument("--harvest", action="store_true", help="rewrite fuzz/index_seeds.json from the real graphs' kernels, then exit")
  sy.add_argument("--no-pipeline", action="store_true", help="check e vs e.simplify() only, not the codegen integer pipeline")

def options(args:argparse.Namespace) -> dict:
  return {"reading": args.reading, "pipeline": not args.no_pipeline}

def prepare(opts:dict) -> None:
  OverflowReading(opts.get("reading", "undefined"))   # a bad reading is one line before any worker starts

def _case_writer(work:Work, reading:OverflowReading, pipeline:bool) -> Callable[[UOp], None]:
  """before each case: the expression to the worker's .current file (published on a cluster) and the case counted, so a
  case that hangs or takes the worker down is re-run from that file (``rerun``)"""
  current = current_file(work.findings_dir, work.wid)
  def on_case(e:UOp) -> None:
    case = {"expr": uop_json.encode(e), "reading": reading.value, "pipeline": pipeline, "started": time.time(), "timeout": work.case_timeout,
            "pid": os.getpid()}
    write_or_stop(current, case)
    if work.publish is not None: work.publish({"case": case})
    if work.counters is not None:
      with work.counters.get_lock(): work.counters[0] += 1
    work.tell_counts()
  return on_case

def work(w:Work) -> None:
  """one supervised symbolic worker (a process, or a Dask shard): the campaign; its counts (``w.tally``) for the report"""
  st = CampaignStats()
  w.tally = lambda: {**{k: getattr(st, k) for k in COUNTS}, "internal": st.internal}
  run_campaign(w.minutes, w.seed, w.findings_dir, w.db_dir, OverflowReading(w.options.get("reading", "undefined")), progress=False,
               known_dir=w.known_dir, pipeline=bool(w.options.get("pipeline", True)), work=w, stats=st)
  if st.unwritable: raise FindingsUnwritable(st.unwritable)   # the supervisor stops the campaign (exit 3), as for any fuzzer

COUNTS = ("checked", "proved", "refuted", "unknown", "unchanged", "pipeline", "seeds")

def classify(d:dict, known:dict) -> tuple[str, str]:
  """(new / known / external, key) of a saved record: a finding by its signature, a reproduced crash or hang by its file"""
  kind = d.get("kind", "symbolic")
  if kind == "external-fault": return "external", d["signature"]
  if kind in ("crash", "hang"): return "new", f"{FILE_PREFIX[kind]}-{d['signature']}"
  if d["signature"] in known: return "known", known[d["signature"]]
  return "new", d["signature"]

def validate_case(case:dict) -> None:
  """a running case (a .current file, a peer's message) is data: an expression that passes ``check_exprs``"""
  OverflowReading(case.get("reading"))
  if not isinstance(case.get("pipeline"), bool): raise ValueError("the case's pipeline flag is not a boolean")
  check_exprs(load_expr(case, "expr", "case"))

def rerun(case:dict, opts:dict) -> None:
  """the lost case again in this fresh process: e vs e.simplify(), then the pipeline, as the worker ran it (tinygrad
  raising on it is skipped there, so here too; only dying or hanging is asked about)"""
  e, reading = load_expr(case, "expr", "case"), OverflowReading(case["reading"])
  with contextlib.suppress(*CHECK_ERRORS): check_expr(e, reading)
  if case["pipeline"] and e.dtype == dtypes.weakint:
    with contextlib.suppress(*CHECK_ERRORS): check_pipeline(e, reading)

def lost_record(check:Any, seed:int|None) -> dict:
  """a finished re-check as a record: a crash/hang reproducer (the case took a fresh process down too: whose fault --
  tinygrad's simplify, z3, uopcheck's evaluator -- is not attributed) or an external-fault record (it re-ran clean)"""
  out = check.outcome or {"reproduced": None, "detail": "not re-run"}
  e = load_expr(check.case, "expr", "case")
  kind = out["reproduced"] or check.kind
  return {"kind": kind if out["reproduced"] else "external-fault", "failure": kind, "expr": check.case["expr"],
          "expr_text": e.render(simplify=False), "reading": check.case["reading"], "pipeline": check.case["pipeline"],
          "summary": f"{check.why}; {out['detail']}"[:300], "seed": seed, "signature": digest(f"{kind} {e.render(simplify=False)}"),
          "reproduce": "python -m uopcheck.fuzz.lost_case --fuzzer symbolic (a file holding {\"case\": this record, \"options\": {}})"}

def summary_of(run:dict) -> dict:
  """the supervisor's facts about a run (either backend) as the symbolic campaign's summary: the counts summed over
  workers, the new findings read back from the findings directory, the lost cases and reproducers"""
  fdir = pathlib.Path(run["findings_dir"])
  found, problems = load_findings(fdir)
  got = run["got"]
  if run["interrupted"] or run["unwritable"]: got["new"] |= written_since(found, run["started_wall"], run["known"])
  c = run["counts"]
  return {"minutes": run["minutes"], "workers": run["workers"], "seed": run["seed"], "reading": run["options"].get("reading"),
          "findings_dir": str(fdir), "seconds": run["seconds"], "cases": run["cases"],
          "cases_per_min": round(run["cases"] / max(run["seconds"], 1e-9) * 60, 1), **{k: c.get(k, 0) for k in COUNTS},
          "interrupted": run["interrupted"], "unwritable": run["unwritable"], "worker_restarts": run["restarts"], "lost_cases": run["lost"],
          "new": sorted(got["new"]), "known": sorted(got["known"]), "external_faults": sorted(got["external"]),
          "findings": [d for _, d in found if d["signature"] in got["new"]],
          "reproducers": sorted(k for k in got["new"] if k.startswith(("crash-", "hang-"))),
          "uopcheck_internal": c.get("internal", []), "skipped_files": problems,
          **{k: run[k] for k in ("cluster", "shards", "workers_used", "rejected_messages") if k in run}}

def supervised_result(s:dict) -> Result:
  """a supervised run's report: the one-process report of its summed counts and findings, and what the supervisor saw"""
  st = CampaignStats(**{k: s[k] for k in COUNTS}, findings=s["findings"], known=[{"known_as": k} for k in s["known"]],
                     internal=s["uopcheck_internal"], seconds=s["seconds"], interrupted=s["interrupted"], unwritable=s["unwritable"])
  res = result(st, {k: v for k, v in s.items() if k not in dataclasses.asdict(st)})
  where = f"Dask cluster {s['cluster']}, {s['shards']} shards" if s.get("cluster") else "one machine"
  res.summary[:0] = ([f"STOPPED EARLY: {s['unwritable']}"] if s["unwritable"] else []) + \
    [f"time: {s['seconds']} s on {s['workers']} worker(s) ({where}), seed {s['seed']}; cases {s['cases']} ({s['cases_per_min']}/min)" +
     (" (interrupted)" if s["interrupted"] else ""),
     f"cases that took a worker down: {len(s['lost_cases'])} (worker restarts: {s['worker_restarts']}); reproduced in a fresh process "
     f"(crash/hang reproducers, not attributed: {s['reproducers'] or 'none'}); external faults (re-ran clean, not findings): "
     f"{len(s['external_faults'])}"]
  res.data.update({k: s[k] for k in ("workers", "cases", "cases_per_min", "lost_cases", "reproducers", "external_faults", "worker_restarts",
                                     "new", "known") if k in s})
  return res

def _cli(args:argparse.Namespace) -> int:
  """``uopcheck fuzz symbolic``: ``--harvest``; one in-process campaign (the default); else the supervisor's workers"""
  if args.harvest or (args.workers == 1 and not args.cluster): return run_from_cli(args)
  from uopcheck.fuzz.supervisor import main
  return main(FUZZER, args)

FUZZER = Fuzzer("symbolic", "integer expressions vs simplify() and the codegen integer pipeline", LAYOUT, add_arguments, options, prepare,
                work, classify, validate_case, rerun, lost_record, summary_of, supervised_result, main=_cli, case_timeout=60.0)
