"""Symbolic fuzzing: random integer expressions (weakint and sized ints), each checked ``e`` vs ``e.simplify()``.

A check first tries the exhaustive evaluator on small domains, then z3 (``spec.z3model.check_rewrite``).
Refuted cases are shrunk by hypothesis and written to a findings directory as reproducers (JSON with the
expression as tinygrad's own pyrender code, the assignment, both values, and the rule that made the step)."""
from __future__ import annotations
import hashlib, json, os, pathlib, tempfile, time
from dataclasses import dataclass, field
from hypothesis import strategies as st
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes
from uopcheck.spec.z3model import check_rewrite, Proved, Refuted, Unknown
from uopcheck.spec.ints import OverflowReading
from uopcheck.fuzz.exhaustive import exhaustive_check
from uopcheck.fuzz.findings_io import atomic_write_json, load_dir, campaign_rounds

SIZED = [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64]

@dataclass
class Verdict:
  kind: str                # proved | refuted | unknown | unchanged
  how: str = ""            # exhaustive | z3
  detail: object = None

def check_expr(e:UOp, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=3000) -> tuple[Verdict, UOp]:
  s = e.simplify()
  if s is e: return Verdict("unchanged"), s
  ex = exhaustive_check(e, s, limit=1 << 20, ub_is_undefined=reading is OverflowReading.UNDEFINED) if e.dtype == s.dtype else None
  if ex is not None:
    ok, asg, bv, av = ex
    return (Verdict("proved", "exhaustive") if ok else Verdict("refuted", "exhaustive", Refuted(asg, bv, av, "values differ"
                                                                                             if av != "undefined" else "introduces UB"))), s
  r = check_rewrite(e, s, reading, timeout_ms)
  if isinstance(r, Proved): return Verdict("proved", "z3"), s
  if isinstance(r, Refuted): return Verdict("refuted", "z3", r), s
  return Verdict("unknown", "z3", r), s

# ** hypothesis strategies **

@st.composite
def variable(draw, dt:DType, name:str) -> UOp:
  lo_lim, hi_lim = (-300, 300) if dt == dtypes.weakint else (dt.min, dt.max)
  edge = st.sampled_from([lo_lim, hi_lim, 0, 1, -1, 255, 256, 2**31 - 1, -2**31, 2**15, 2**16]).filter(lambda v: lo_lim <= v <= hi_lim)
  a = draw(st.one_of(st.integers(max(lo_lim, -16), min(hi_lim, 16)), edge, st.integers(lo_lim, hi_lim)))
  b = draw(st.one_of(st.integers(max(lo_lim, -16), min(hi_lim, 16)), edge, st.integers(lo_lim, hi_lim)))
  lo, hi = min(a, b), max(a, b)
  return UOp.variable(name, lo, hi, dtype=dt)

@st.composite
def const_for(draw, dt:DType) -> int:
  small = st.integers(-9, 9)
  if dt == dtypes.weakint: return draw(st.one_of(small, st.sampled_from([2**31 - 1, -2**31, 2**32, 2**31, 256, 255, 2**63 - 1])))
  return draw(st.one_of(small, st.sampled_from([dt.min, dt.max, dt.max // 2 + 1, 1 << (dt.bitsize - 1) if dt in dtypes.uints else dt.max])).filter(
    lambda v: dt.min <= v <= dt.max))

@st.composite
def int_expr(draw, depth:int=4, dt:DType|None=None, vars_:dict|None=None) -> UOp:
  """A random int expression of one dtype (weakint or a sized int), casts crossing between them."""
  if dt is None: dt = draw(st.one_of(st.just(dtypes.weakint), st.just(dtypes.weakint), st.sampled_from(SIZED)))
  if vars_ is None: vars_ = {}
  def leaf():
    if draw(st.booleans()) or not vars_:
      name = f"{'abc'[len(vars_) % 3]}{len(vars_)}"
      if len(vars_) < 3:
        v = draw(variable(dt, name)); vars_[name] = v; return v
      return draw(st.sampled_from(list(vars_.values())))
    c = draw(const_for(dt))
    return UOp.const(c, dt)
  if depth <= 0: return leaf()
  kind = draw(st.sampled_from(["leaf", "bin", "bin", "bin", "unc", "where", "cast"]))
  if kind == "leaf": return leaf()
  sub = lambda: draw(int_expr(depth - 1, dt, vars_))
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
    a = sub(); c = draw(const_for(dt))
    return draw(st.sampled_from([a + c, a * c, a.maximum(UOp.const(c, dt))]))
  if kind == "where":
    a, b, x, y = sub(), sub(), sub(), sub()
    cond = draw(st.sampled_from([a < b, a.ne(b)]))
    return cond.where(x, y)
  # cast: through another dtype and back
  other = draw(st.sampled_from([dtypes.weakint] + SIZED))
  inner = draw(int_expr(depth - 1, other, {}))
  return inner.cast(dt)

# ** findings **

def confirm_with_numpy(e:UOp, s:UOp, assignment:dict|None) -> bool|None:
  """Re-evaluate a refutation's assignment with the numpy semantics: True when numpy sees the same disagreement."""
  from uopcheck.fuzz.exhaustive import evaluate_at
  if assignment is None: return None
  try: (bv, bu), (av, au) = evaluate_at([e, s], assignment)
  except Exception: return None
  return (not bu) and (au or bv != av)

def finding_json(e:UOp, s:UOp, v:Verdict, rule:str|None, seed:int|None=None) -> dict:
  from tinygrad.uop.render import pyrender
  r = v.detail
  return {"kind": "symbolic", "expr": pyrender(e), "simplified": pyrender(s), "dtype": str(e.dtype), "how": v.how,
          "assignment": getattr(r, "assignment", None), "before": repr(getattr(r, "before", None)), "after": repr(getattr(r, "after", None)),
          "reason": getattr(r, "reason", ""), "rule": rule, "seed": seed, "reading": None,
          "confirmed_by_numpy": confirm_with_numpy(e, s, getattr(r, "assignment", None)) if e.dtype == s.dtype else True}

def signature(d:dict) -> str:
  return hashlib.sha256(f"{d.get('rule')}|{d['reason']}|{d['dtype']}".encode()).hexdigest()[:12]

def save_finding(d:dict, directory:str|os.PathLike) -> pathlib.Path|None:
  """Write a finding atomically (temp file + rename), deduplicated by signature: a later, smaller expression with the
  same signature replaces the stored one (so hypothesis' shrinking leaves the minimal reproducer). None if not written."""
  p = pathlib.Path(directory); p.mkdir(parents=True, exist_ok=True)
  out = p / f"symbolic-{signature(d)}.json"
  if out.exists():
    try: old = json.loads(out.read_text())
    except (OSError, ValueError): old = None  # a corrupt file is replaced by a good one
    if old is not None and len(old.get("expr", "")) <= len(d["expr"]): return None
  return atomic_write_json(out, d)

def load_expr(code:str) -> UOp:
  from tinygrad.uop.spec import eval_pyrender
  return eval_pyrender(code)

class FoundBug(Exception):
  """Raised inside the hypothesis property for a refuted case (never confused with an AssertionError inside tinygrad)."""

@dataclass
class CampaignStats:
  checked: int = 0
  proved: int = 0
  refuted: int = 0
  unknown: int = 0
  unchanged: int = 0
  findings: list = field(default_factory=list)
  seconds: float = 0.0

  def line(self) -> str:
    rate = self.checked / self.seconds if self.seconds else 0.0
    return (f"checked {self.checked} ({rate:.1f}/s): proved {self.proved}, refuted {self.refuted}, unknown {self.unknown}, "
            f"unchanged by simplify {self.unchanged}; findings saved {len(self.findings)}")

def run_campaign(minutes:float, seed:int|None=None, findings_dir:str="fuzz/findings", db_dir:str|None=".hypothesis/uopcheck-symbolic",
                 reading:OverflowReading=OverflowReading.UNDEFINED, progress:bool=True, max_examples:int|None=None) -> CampaignStats:
  """Fuzz ``e`` vs ``e.simplify()`` for a time budget with hypothesis (example database in ``db_dir``). A refuted case is saved
  at once (atomically); while hypothesis shrinks it, smaller versions replace it, so the file ends minimal. Afterwards each
  new finding is attributed to the rule application that first breaks refinement."""
  from hypothesis.database import DirectoryBasedExampleDatabase
  from hypothesis.errors import Flaky, FlakyFailure  # a shrink cut short by the budget reads as flaky: the finding is written already
  from uopcheck.fuzz.rules import blame_rule
  stats = CampaignStats()
  start = time.perf_counter()
  deadline = start + minutes * 60
  last_print = [0.0]
  saved: set[pathlib.Path] = set()
  shrink: list = [None]
  class Stop(Exception): pass
  db = DirectoryBasedExampleDatabase(db_dir) if db_dir else None
  def check_one(e):
    if shrink[0] is not None:  # shrinking a refutation: stop (by passing) past the deadline or the budget
      shrink[0] += 1
      if shrink[0] > 200 or time.perf_counter() > deadline: return
    elif time.perf_counter() > deadline: raise Stop()
    try: v, s = check_expr(e, reading)
    except (RecursionError, AssertionError, RuntimeError, ValueError, TypeError, ZeroDivisionError, OverflowError, KeyError): return
    stats.checked += 1
    setattr(stats, v.kind, getattr(stats, v.kind) + 1)
    stats.seconds = time.perf_counter() - start
    if progress and stats.seconds - last_print[0] > 2:
      last_print[0] = stats.seconds
      print("\r" + stats.line(), end="", flush=True)
    if v.kind == "refuted":
      if shrink[0] is None: shrink[0] = 0
      if (path := save_finding({**finding_json(e, s, v, None, seed), "reading": reading.value}, findings_dir)) is not None: saved.add(path)
      raise FoundBug(str(v.detail))
  rounds = campaign_rounds(check_one, int_expr(), db, max_examples, None if seed is None else (lambda r: seed + r))
  while time.perf_counter() < deadline:
    run = next(rounds)
    shrink[0] = None
    try: run()
    except Stop: break
    except (FoundBug, Flaky, FlakyFailure): pass       # a refutation: saved (and shrunk) above; keep fuzzing with a new seed
    if max_examples: break
  for path in sorted(saved):
    d = json.loads(path.read_text())
    if d.get("rule") is None:
      try: blamed = blame_rule(load_expr(d["expr"]), reading)
      except Exception: blamed = None
      d["rule"] = blamed[0] if blamed else "unattributed (the whole simplify, not a single step, breaks refinement)"
      atomic_write_json(path, d)
    stats.findings.append(d)
  stats.seconds = time.perf_counter() - start
  if progress: print("\r" + stats.line(), flush=True)
  return stats

def _validate(d:dict) -> None:
  for k in ("expr", "simplified", "reason", "reading"):
    if k not in d: raise ValueError(f"missing field {k!r}")
  OverflowReading(d["reading"])

def load_findings(directory:str|os.PathLike) -> list[tuple[pathlib.Path, dict]]:
  """Every symbolic finding in a directory; a corrupt file raises SpecError naming the file and what is wrong."""
  return load_dir(directory, "symbolic-*.json", _validate)

def replay(d:dict) -> Verdict:
  """Re-check a saved finding against the installed tinygrad: proved/unchanged means it no longer reproduces."""
  e = load_expr(d["expr"])
  return check_expr(e, OverflowReading(d["reading"]))[0]
