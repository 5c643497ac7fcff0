"""Universal verification of tinygrad's integer rewrite rules: each rule decided for *all* inputs, at every dtype.

For every rule of ``uop/symbolic.py`` (the matchers that compose ``sym``: ``symbolic``, ``symbolic_simple``,
``pm_data_invalid``, ...), ``uop/divandmod.py`` and ``uop/weak.py`` (``pm_lower_index_dtype``, ``pm_lower_weak``):

1. **Most general instances** are built from the rule's UPat (``Builder``): a pattern variable is a Variable whose bounds
   are *symbolic* (``lo <= hi`` anywhere in the dtype), a free constant (``UPat.cvar``) is a symbolic constant anywhere
   in the dtype (``fuzz.concolic.SymInt``); op, dtype and operand-kind alternatives of the pattern are enumerated
   (``plans``). Each instance must pass tinygrad's own ``type_verify`` (``spec_full``) before it counts.
2. **Every path of the rule's code** is run (``explore``): the rule's Python runs on the symbolic values and records each
   decision it makes; z3 then finds constants and bounds that flip one decision at a time, until every feasible path ran
   (or the path budget is spent). A path whose code needed a plain number (a *pin*) covers just that value.
3. On each path, refinement (``before`` defined -> ``after`` defined and equal) is proved with z3 for all values under the
   path condition, under both readings of signed overflow (UB in C, wrapping in numpy), in two encodings -- bit-vectors
   (weakint as a W-bit vector in a sized instance) and exact Ints (``sized_as_int``) -- the likelier first, the other
   when z3 gives up (``_verify_path``). z3 runs under a *resource* limit (``rlimit``), never a wall-clock one, so the
   same run gives the same table.
4. A refutation is **confirmed** before it counts: the rule re-run on the plain (non-symbolic) counterexample must make
   the same rewrite, and the numpy spec must disagree there; then it is tried for **reachability**: tinygrad's full
   ``simplify()`` on that instance (the index-math path every kernel takes) -- wrong there means reachable.

Verdict per (rule, dtype): ``proved`` (every path, all values), ``refuted`` (confirmed counterexample), ``bounded``
(every path run was proved, but not every path could be run: budget or pins), ``unknown`` (z3 gave up, or the
expression has no z3 model), ``n/a`` (the rule never fires on a well-typed instance of that dtype)."""
from __future__ import annotations
from typing import Any, Callable, Iterable, Iterator
import dataclasses, enum, itertools, linecache, math, random, time
from dataclasses import dataclass, field
import z3
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp, UPat, PatternMatcher, AxisType, dtype_from_uop
from tinygrad.dtype import DType, dtypes
from uopcheck.fuzz.concolic import SymInt, Recorder, recording, keep_symbols, SymbolEscaped, NotComputed, W, value_of, path_literals
from uopcheck.spec.z3model import check_rewrite, check, solver_for, Proved, Refuted, Unknown, PathQuery
from uopcheck.spec.ints import OverflowReading
from uopcheck.spec.errors import SpecError
from uopcheck.spec.optable import SIZED_INTS, OVERFLOW_UB_OPS, BOOL_OPS, TRAPPING_OPS

SIZED = list(SIZED_INTS)
INT_DTYPES = [dtypes.weakint] + SIZED
MAIN_DTYPES = INT_DTYPES + [dtypes.bool]
RULE_FILES = ("tinygrad/uop/symbolic.py", "tinygrad/uop/divandmod.py", "tinygrad/uop/weak.py")
from uopcheck.settings import PATH_BUDGET, PLAN_BUDGET, PLAN_SCAN, RLIMIT, PROOF_RLIMIT, MAX_QUERIES, RULE_RLIMIT, RULE_BUDGET_SCALE, \
  RULE_PATH_BUDGET, SCOUT_QUERIES, SCOUT_RLIMIT
READINGS = (OverflowReading.UNDEFINED, OverflowReading.WRAP)
BUDGET_TEXT = (f"{MAX_QUERIES} z3 queries / {RULE_RLIMIT:,} resource units per rule "
               f"(x{max(RULE_BUDGET_SCALE.values(), default=1)} for the rules RULE_BUDGET_SCALE names)")
class Decision(enum.StrEnum):
  """What a verifier decided for one rule at one dtype (and, worst first, for the rule); the values are the report's words"""
  REFUTED = "refuted"    # a counterexample, confirmed by the numpy spec
  UNKNOWN = "unknown"    # z3 gave up, or no model
  BOUNDED = "bounded"    # every path or instance checked held, but not all of them could be checked
  LIBERTY = "liberty"    # refuted under strict IEEE, sound under tinygrad's stated liberty (float rules)
  PROVED = "proved"      # every path, every value
  NA = "n/a"             # no instance of the dtype fires it

class Undecided(enum.Enum):
  """Why a path of an instance stayed undecided; the instance's verdict follows from the last cause recorded (typed: it
  was read off the message text)"""
  BUDGET = "budget"               # the path or query budget ran out: bounded
  SOLVER = "solver"               # z3 gave up, or the model could not express it or failed: unknown
  NOT_COMPUTED = "not computed"   # a path uopcheck does not compute (a shift count past the modelled width): bounded
  RAISES = "raises"               # the rule raises on a defined input (tinygrad's code, not a value verdict): bounded

UNKNOWN_CAUSES = (Undecided.SOLVER,)

SYM_BITS = 65            # every symbol's domain (Builder.sym) fits 65 signed bits: int64's min to uint64's max

# ** the rules **

@dataclass(frozen=True)
class Rule:
  key: str            # tinygrad/uop/file.py:line
  matchers: tuple[str, ...]
  pat: UPat = field(compare=False)
  fxn: object = field(compare=False)
  @property
  def source(self) -> str:
    f, line = self.pat.location
    return linecache.getline(f, line).strip()

def matchers() -> dict[str, PatternMatcher]:
  from tinygrad.uop import symbolic as S, divandmod as D, weak as W
  return {"pm_data_invalid": S.pm_data_invalid, "symbolic_simple": S.symbolic_simple, "commutative": S.commutative, "symbolic": S.symbolic,
          "pm_simplify_valid": S.pm_simplify_valid, "sym": S.sym, "div_and_mod_symbolic": D.div_and_mod_symbolic,
          "pm_lower_index_dtype": W.pm_lower_index_dtype, "pm_lower_weak": W.pm_lower_weak, "pm_cast_weak": W.pm_cast_weak,
          "pm_commit_weak": W.pm_commit_weak}

from uopcheck.rule_id import rule_key   # noqa: E402  (one rule name everywhere: uopcheck/rule_id.py)

def all_rules(only:list[str]|None=None) -> list[Rule]:
  """Every distinct rule of the rule files, with the matchers it is part of (a rule is counted once)."""
  seen: dict[tuple, tuple[str, list[str], UPat, object]] = {}
  for name, pm in matchers().items():
    for p, fxn in pm.patterns:
      key = rule_key(p)
      if not key.startswith(RULE_FILES): continue
      ident = (key, id(p))
      if ident not in seen: seen[ident] = (key, [], p, fxn)
      if name not in seen[ident][1]: seen[ident][1].append(name)
  rules = [Rule(k, tuple(ms), p, f) for k, ms, p, f in seen.values()]
  rules = [dataclasses.replace(r, key=r.key + (f"#{n}" if n else "")) for r, n in _number_duplicates(rules)]
  if not only: return rules
  if missing := [o for o in only if not any(_selects(o, r) for r in rules)]:
    raise SpecError(f"--only {' '.join(missing)}: no rule is that FILE:LINE or matcher (exact, e.g. uop/symbolic.py:261 or "
                    f"symbolic_simple; {len(rules)} rules in {', '.join(RULE_FILES)})")
  return [r for r in rules if any(_selects(o, r) for o in only)]

def _selects(o:str, r:Rule) -> bool:
  """``--only`` names a rule exactly: its key (``tinygrad/uop/symbolic.py:261``, ``#n`` optional), a path suffix of it
  at a ``/`` (``symbolic.py:261``), or a matcher it is part of -- never a substring (``symbolic.py:11`` is not :113)."""
  base = r.key.split("#")[0]
  return o in (r.key, base) or base.endswith("/" + o) or o in r.matchers

def _number_duplicates(rules:list[Rule]):
  count: dict[str, int] = {}
  for r in rules:
    yield r, count.get(r.key, 0)
    count[r.key] = count.get(r.key, 0) + 1

# ** most general instances **

class NoInstance(Exception): pass

def _default(name:str) -> int:
  """the first concrete value of a symbol (later ones come from z3)"""
  if name.startswith("lo"): return 0
  if name.startswith("hi"): return 10
  return 3

_UNUSED: list[z3.Context] = []
def unused_context() -> z3.Context:
  """the context of a builder whose instances hold concrete values only (float and bounded instances make no z3 symbols):
  one per process, as a new context per plan was 90% of building an instance (8.5 ms of 9.5)"""
  if not _UNUSED: _UNUSED.append(z3.Context())
  return _UNUSED[0]

class Builder:
  """One instance of a UPat: ``plan`` fixes every alternative (see ``plans``), ``asg`` the symbols' concrete values."""
  def __init__(self, ctx:z3.Context, plan:tuple[int, ...], asg:dict[str, int], int_syms:bool=False):
    self.ctx, self.plan, self.asg, self.int_syms = ctx, plan, asg, int_syms
    self.taken: list[tuple[int, int]] = []     # (choice, number of options) at each choice point
    self.env: dict[str, UOp] = {}
    self.syms: dict[str, SymInt] = {}
    self.domain: list[z3.BoolRef] = []
    self.nvars = 0
    self.shape: tuple|None = None    # the instance's plain shape (verify_rule: two plans building one instance count once)
    self.divides = False             # the rule divided by a symbol on its first run (``divides_symbols``): Int symbols first
    self.by_variable = False         # the instance divides by a non-constant (``divides_by_variable``): Int symbols only
    self.rng: random.Random|None = None   # past the plan: a random alternative instead of the first (``estimate_plans``)

  @property
  def int_first(self) -> bool: return self.divides or self.by_variable   # explore with exact Int symbols first

  def choose(self, options:list) -> Any:
    if not options: raise NoInstance("no option")
    k = len(self.taken)
    i = self.plan[k] if k < len(self.plan) else self.rng.randrange(len(options)) if self.rng is not None else 0
    if i >= len(options): raise NoInstance("plan out of range")
    self.taken.append((i, len(options)))
    return options[i]

  def sym(self, prefix:str, dt:DType) -> SymInt:
    name = f"{prefix}{len(self.syms)}"
    first = _default(prefix)
    if dt == dtypes.weakint and getattr(self, "main", dtypes.weakint) in (dtypes.weakint, dtypes.bool): t, bits = z3.Int(name, self.ctx), W
    else:   # a sized dtype's symbol: a wide bit-vector (concolic.W bits) -- or an Int (int_syms) -- bounded to the dtype
      t = z3.Int(name, self.ctx) if self.int_syms else z3.BitVec(name, W, self.ctx)
      # a weak constant beside sized operands: any value from int64's min to uint64's max (what numpy can confirm)
      lo, hi = (dt.min, dt.max) if dt != dtypes.weakint else (dtypes.int64.min, dtypes.uint64.max)
      self.domain.append(z3.And(t >= lo, t <= hi))
      bits = max(abs(lo).bit_length(), abs(hi).bit_length())   # bounds its magnitude: guards that cannot fail are left out
      first = min(max(first, lo), hi)   # inside the domain from the first run on (a bool's bounds: 0 and 1)
    self.syms[name] = s = SymInt(self.asg.get(name, first), t, bits)
    return s

  def variable(self, dt:DType) -> UOp:
    """a Variable whose bounds are symbols in ``dt`` -- a bool one too: in tinygrad a bool operand is a comparison, whose
    range may be one value (its bounds were fixed at [False, True], so ``symbolic.py:257`` never fired on CMPLT/CMPNE of
    two bools)"""
    self.nvars += 1
    lo, hi = self.sym("lo", dt), self.sym("hi", dt)
    self.domain.append(lo.term <= hi.term)
    return UOp.variable(f"v{self.nvars}", lo, hi, dt)

  def const(self, dt:DType, arg:Any=None) -> UOp:
    if arg is not None and not isinstance(arg, tuple): return UOp(Ops.CONST, dt, arg=arg if dt != dtypes.bool else bool(arg))
    if dt == dtypes.bool: return UOp(Ops.CONST, dt, arg=self.choose([False, True]))
    return UOp(Ops.CONST, dt, arg=self.sym("c", dt))

  KIND = "integer"
  def dtype_choices(self) -> list[DType]: return MAIN_DTYPES

  def enter(self, p:UPat, dt:DType, depth:int) -> tuple[UOp|None, DType]:
    """what building any node starts with, for every kind of instance: (the node, if the pattern is already built or is an
    alternative; else None) and the dtype the node is built at (a pattern's dtype alternatives are a choice point)"""
    if depth == 0: self.main = dt
    if p.name is not None and p.name in self.env: return self.env[p.name], dt
    if depth > 6: raise NoInstance("pattern too deep")
    if p.is_any: return self._named(p, self.build(self.choose(list(p.src[0])), dt, depth + 1)), dt
    if p.match_dtype is not None:
      ok = list(dict.fromkeys(d for d in self.dtype_choices() if d in p.match_dtype))
      if not ok: raise NoInstance(f"dtypes {p.match_dtype} are not {self.KIND} instance dtypes")
      dt = dt if dt in ok else self.choose(ok)
    return None, dt

  def build(self, p:UPat, dt:DType, depth:int=0) -> UOp:
    done, dt = self.enter(p, dt, depth)
    if done is not None: return done
    if p.op is None:   # a pattern variable: a Variable with symbolic bounds
      return self._named(p, self.variable(dt))
    op = self.choose(sorted((o for o in p.op if o in INSTANCE_OPS), key=lambda o: o.value)) if p.op else None
    if op is None: raise NoInstance(f"ops {sorted(o.name for o in p.op)} are not integer expression ops")
    if op is Ops.CONST: return self._named(p, self.const(dt, p.arg))
    kids = self._kids(p, op)
    if op in (Ops.PARAM, Ops.SPECIAL, Ops.AFTER):
      if op is not Ops.PARAM: raise NoInstance(f"{op} instances are not built")
      lo, hi = self.sym("lo", dt), self.sym("hi", dt)
      self.domain.append(lo.term <= hi.term)
      self.nvars += 1
      return self._named(p, UOp.variable(f"p{self.nvars}", lo, hi, dt, param=True))
    if op is Ops.RANGE:
      end = self.build(kids[0], dtypes.weakint, depth + 1) if kids else self.const(dtypes.weakint)
      if end.op is not Ops.CONST: raise NoInstance("a RANGE needs a constant end")
      self.domain.append(end.arg.term >= 1)
      return self._named(p, UOp(Ops.RANGE, dtypes.weakint, (end,), arg=(len(self.env), AxisType.LOOP)))
    if op in GroupOp.Comparison:
      sdt = dt if dt != dtypes.bool else self.main   # a comparison inside a bool context compares at the instance's dtype
      srcs = [self.build(k, sdt, depth + 1) for k in kids]
      return self._named(p, UOp(op, dtypes.bool, tuple(srcs)))
    if op is Ops.WHERE:
      srcs = [self.build(kids[0], dtypes.bool, depth + 1)] + [self.build(k, dt, depth + 1) for k in kids[1:]]
      return self._named(p, self._alu(op, dt, srcs))
    if op is Ops.CAST:
      k0 = kids[0] if kids else None
      if k0 is not None and (k0.name in self.env or k0.match_dtype is not None):   # the operand's own pattern decides its dtype
        inner_dt = self.env[k0.name].dtype if k0.name in self.env else next((d for d in MAIN_DTYPES if d in (k0.match_dtype or ())), dt)
      else: inner_dt = self.choose([d for d in MAIN_DTYPES if d != dt] + [dt])
      inner = self.build(kids[0], inner_dt, depth + 1) if kids else self.variable(inner_dt)
      return self._named(p, inner.cast(dt))
    if dt == dtypes.bool and op not in BOOL_OPS: raise NoInstance(f"{op} on bool")
    if op in (Ops.SHL, Ops.SHR):
      srcs = [self.build(kids[0], dt, depth + 1), self.build(kids[1], self.choose([dt, dtypes.weakint]) if dt != dtypes.weakint else dt, depth + 1)]
      return self._named(p, self._alu(op, dt, srcs))
    srcs = []
    for k in kids:   # an operand may be weak (a weakint constant or node beside a sized one): tinygrad commits it
      kdt = dt
      if dt in SIZED and (k.op is None or (k.op and Ops.CONST in k.op)) and (k.name is None or k.name not in self.env) and \
         k.match_dtype is None: kdt = self.choose([dt, dtypes.weakint]) if (k.op and Ops.CONST in k.op) else dt
      srcs.append(self.build(k, kdt, depth + 1))
    return self._named(p, self._alu(op, dt, srcs))

  @staticmethod
  def _alu(op:Ops, dt:DType, srcs:list[UOp]) -> UOp:
    """an ALU node at ``dt``, only where tinygrad's own dtype production rule (``dtype_from_uop``) gives ``dt`` for these
    sources: a char ADD of two weakint operands passes ``type_verify`` but tinygrad never builds one"""
    try: want = dtype_from_uop(op, tuple(srcs), None)
    except (RuntimeError, AssertionError) as e: raise NoInstance(f"{op.name}: {e}") from None
    if want is not None and want != dt: raise NoInstance(f"a {dt.name} {op.name} of {[x.dtype.name for x in srcs]} (tinygrad makes {want.name})")
    return UOp(op, dt, tuple(srcs))

  def _kids(self, p:UPat, op:Ops) -> list[UPat]:
    n = 3 if op in GroupOp.Ternary else 2 if op in GroupOp.Binary else 1 if op in GroupOp.Unary or op in (Ops.CAST, Ops.RANGE) else 0
    if p.src is None: return [UPat()] * n
    alt = p.src[0]   # the first order of a commutative pattern (its other orders match the same instances)
    return list(itertools.islice(alt, n)) if isinstance(alt, itertools.repeat) else list(alt)

  def _named(self, p:UPat, u:UOp) -> UOp:
    if p.name is not None: self.env[p.name] = u
    return u

INSTANCE_OPS = (set(GroupOp.ALU) | {Ops.CONST, Ops.CAST, Ops.PARAM, Ops.RANGE}) - {Ops.POW, Ops.RECIPROCAL, Ops.EXP2, Ops.LOG2, Ops.SIN,
                                                                                 Ops.SQRT, Ops.FDIV, Ops.TRUNC, Ops.THREEFRY}

def plans(make:Callable[[tuple], Any], cap:int) -> Iterator[tuple[tuple, Any]]:
  """Every combination of the builder's alternatives (op choices, dtypes, operand kinds), first ones first, at most
  ``cap``: run with a plan prefix, then branch on every choice point past it."""
  todo, n = [()], 0
  while todo and n < cap:
    plan = todo.pop(0)
    b = make(plan)
    if b is None: continue
    n += 1
    yield plan, b
    for k in range(len(plan), len(b.taken)):
      for alt in range(1, b.taken[k][1]): todo.append(tuple(c for c, _ in b.taken[:k]) + (alt,))

def estimate_plans(make:Callable[[random.Random], Any], probes:int, seed:str) -> float:
  """How many plans ``plans`` would enumerate, without enumerating them: Knuth's estimator (1975) -- the product of the
  option counts along a random descent of the choice tree is an unbiased estimate of its number of leaves; the mean of
  ``probes`` descents. ``make(rng)`` builds one instance choosing every alternative with ``rng`` (seeded by ``seed``: the
  same estimate every run)."""
  rng = random.Random(seed)
  return sum(math.prod(n for _, n in make(rng).taken) for _ in range(probes)) / max(1, probes)

class Instances:
  """The distinct instances of a rule at one dtype (``make(plan)`` builds one, or None; two with one ``shape`` are the
  same), first ones first, at most ``cap`` of them. ``capped`` is set when a further distinct instance exists (or the plans
  ran past ``PLAN_SCAN`` before one was found): then a verdict over the instances yielded is not one over the rule, and a
  ``proved`` must be reported as ``bounded`` (``cuts``, ``why``)."""
  def __init__(self, make:Callable[[tuple], Any], cap:int):
    self.make, self.cap = make, cap
    self.capped, self.count = False, 0
  def cuts(self, verdict:Decision) -> bool:
    """this verdict over the instances yielded claims more than they show: a proof (or liberty) of a capped space"""
    return self.capped and verdict in (Decision.PROVED, Decision.LIBERTY)
  @property
  def why(self) -> str: return f"proved on the first {self.count} of its instance shapes; more exist (PLAN_BUDGET caps them)"
  def __iter__(self):
    seen: set = set()
    built = 0
    for plan, b in plans(self.make, PLAN_SCAN):
      built += 1
      if (k := b.shape) in seen: continue
      if len(seen) >= self.cap:
        self.capped = True
        return
      seen.add(k)
      self.count = len(seen)
      yield plan, b
    self.capped = built >= PLAN_SCAN

# ** one instance, every path **

@dataclass
class PathResult:
  conds: list
  pinned: bool
  before: UOp|None = None
  after: UOp|None = None
  error: str = ""
  ill_typed: str = ""
  not_computed: bool = False   # the error is NotComputed: a value past what the symbolic integers compute, not the rule

def run_rule(rule:Rule, dt:DType, plan:tuple, asg:dict[str, int], ctx:z3.Context, int_syms:bool=False) -> tuple[Builder, PathResult]:
  """Build the instance for ``plan`` with the symbols at ``asg`` and apply the one rule, recording every decision."""
  from uopcheck.spec.structural import verify
  from uopcheck.spec import SpecError
  rec = Recorder(ctx)
  pm = PatternMatcher([(rule.pat, rule.fxn)])  # type: ignore[list-item]
  with keep_symbols(), recording(rec):
    b = Builder(ctx, plan, asg, int_syms)
    res = PathResult([], False)
    try:
      before = b.build(rule.pat, dt)
      res.before = before
      try: verify(before, "full")
      except SpecError as e: res.ill_typed = str(e)[:200]
      if not res.ill_typed:
        after = pm.rewrite(before, ctx={})
        res.after = after if isinstance(after, UOp) and after is not before else None
    except NoInstance: raise
    except SymbolEscaped as e: res.error = f"symbol escaped: {e}"
    except NotComputed as e: res.error, res.not_computed = f"{type(e).__name__}: {str(e)[:120]}", True
    except (AssertionError, RuntimeError, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError, RecursionError,
            MemoryError, OverflowError) as e:
      res.error = f"{type(e).__name__}: {str(e)[:120]}"
  res.conds, res.pinned = rec.conds, rec.pinned
  return b, res

@dataclass
class InstanceVerdict:
  verdict: Decision                     # proved / refuted / bounded / unknown / n/a
  paths: int = 0
  fired: int = 0
  ill_typed: int = 0
  pinned: bool = False
  complete: bool = False
  why: str = ""
  readings: dict = field(default_factory=dict)   # reading -> refuted / proved
  counterexample: dict|None = None

@dataclass
class Budget:
  """What a rule may still spend in z3: queries (feasibility and proofs) and resource units (z3's deterministic
  ``rlimit`` counter, summed over every check) -- counted, never timed, so the table is the same every run. A part of a
  budget (``share``) has a ``parent``: what the part spends is spent there too, so the rule's budget stays the one limit."""
  queries: int
  rlimit: int = 0
  _seen: dict = field(default_factory=dict)   # z3 context -> its "rlimit count" when last charged
  parent: Budget|None = None
  def _spend(self, queries:int, rlimit:int) -> None:
    b: Budget|None = self
    while b is not None: b.queries, b.rlimit, b = b.queries - queries, b.rlimit - rlimit, b.parent
  @property
  def spent(self) -> bool: return self.queries <= 0 or self.rlimit <= 0
  def take(self) -> bool:
    self._spend(1, 0)
    return self.queries >= 0 and self.rlimit > 0
  def cap(self, limit:int) -> int:
    """the resource limit of one z3 check: ``limit`` (the per-query setting), at most what a part of a budget has left"""
    return limit if self.parent is None else max(1, min(limit, self.rlimit))
  def share(self, queries:int, rlimit:int) -> Budget:
    """a part of this budget: at most ``queries`` / ``rlimit``, or what is left here when less"""
    return Budget(min(queries, max(self.queries, 0)), min(rlimit, max(self.rlimit, 0)), self._seen, self)   # one context count
  def charge(self, solver:z3.Solver) -> None:
    """z3's "rlimit count" statistic is cumulative per *context* (every solver of the context adds to it): charge the
    growth since this context was last charged"""
    st = solver.statistics()
    used = int(st.get_key_value("rlimit count")) if "rlimit count" in st.keys() else 0
    prev = self._seen.get(id(solver.ctx), 0)
    self._spend(0, used - prev if used >= prev else used)
    self._seen[id(solver.ctx)] = used

def explore(rule:Rule, dt:DType, plan:tuple, ctx:z3.Context, budget:int=PATH_BUDGET, queries:Budget|None=None,
            int_syms:bool=False) -> InstanceVerdict:
  """Run the rule on every feasible path of its code for one instance shape; verify each path for all values.
  ``int_syms``: every symbol an exact Int (bounded to its dtype) instead of a 130-bit vector (``divides_symbols``)."""
  queries = queries or Budget(MAX_QUERIES, RULE_RLIMIT)
  b0, first = run_rule(rule, dt, plan, {}, ctx, int_syms)
  todo, seen, out = [(first, b0)], set(), InstanceVerdict(Decision.NA)
  cause: Undecided|None = None   # why some path stayed undecided (None: none did)
  while todo:
    res, b = todo.pop(0)
    out.paths += 1
    out.pinned |= res.pinned
    if res.ill_typed: out.ill_typed += 1
    elif res.error:
      if (raised := _raise_matters(res, b, ctx, queries)) is not None: cause, out.why = raised
    elif res.after is not None:
      out.fired += 1
      if _leaks_concrete(rule, dt, plan, res, b, ctx, queries):
        # the rule's code used a symbol as a plain number without a pin (list indexing, math.gcd, ctypes read the int
        # value directly): what it built holds only for these values, so this path proves nothing beyond them
        out.pinned = True
      v = _verify_path(rule, dt, plan, res, b, ctx, queries)
      if v is not None:
        if v.verdict == Decision.REFUTED:
          out.verdict, out.counterexample, out.readings, out.why = Decision.REFUTED, v.counterexample, v.readings, v.why
          return out
        cause, out.why = Undecided.BUDGET if v.verdict == Decision.BOUNDED else Undecided.SOLVER, v.why
    # flip each decision in turn, keeping the ones before it (generational search), on one incremental solver
    solver = solver_for(b.domain + [c for c, _, _ in res.conds], ctx)
    solver.set("rlimit", queries.cap(RLIMIT))
    solver.add(*b.domain)
    key: tuple = ()
    for c, o, _ in res.conds:
      taken = c if o else z3.Not(c)
      flipped = key + ((str(c), not o),)
      key += ((str(c), o),)
      if flipped not in seen:
        seen.add(flipped)
        if out.paths + len(todo) >= budget or not queries.take():
          if cause is None: cause, out.why = Undecided.BUDGET, f"budget spent ({budget} paths per instance, {BUDGET_TEXT})"
        else:
          solver.push()
          solver.add(z3.Not(taken))
          r = check(solver)
          queries.charge(solver)
          if r == z3.sat:
            m = solver.model()
            asg = {n: value_of(m, v.term) for n, v in b.syms.items()}
            b2, res2 = run_rule(rule, dt, plan, asg, ctx, int_syms)
            todo.append((res2, b2))
          elif r == z3.unknown: cause, out.why = Undecided.SOLVER, "z3 could not decide a path's feasibility within its resource limit"
          solver.pop()
      solver.add(taken)
  undecided = cause is not None
  out.complete = not undecided and not out.pinned
  # n/a only when every path was run: a rule that did not fire on the paths a budget allowed may fire on the others
  if out.fired == 0 and not undecided:
    out.verdict, out.why = Decision.NA, out.why or ("every instance ill-typed" if out.ill_typed else "the rule never fires")
  elif out.complete: out.verdict = Decision.PROVED
  elif cause in UNKNOWN_CAUSES: out.verdict = Decision.UNKNOWN
  else: out.verdict, out.why = Decision.BOUNDED, out.why or "pinned constants (the rule's code needed plain numbers)"
  return out

_BV_DIVISIONS = (z3.Z3_OP_BSDIV, z3.Z3_OP_BUDIV, z3.Z3_OP_BSREM, z3.Z3_OP_BUREM, z3.Z3_OP_BSMOD, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BUDIV_I,
                 z3.Z3_OP_BSREM_I, z3.Z3_OP_BUREM_I, z3.Z3_OP_BSMOD_I)

def divides_symbols(res:PathResult) -> bool:
  """The rule's own code divided by a symbol (``-c1//abs(c0)``, a bound divided by a constant): the 130-bit division
  circuit makes every feasibility query and proof on its paths costly (``symbolic.py:275``: 96M resource units for one
  instance as bit-vectors, 0.1 s as exact Ints), so such an instance is explored with Int symbols first"""
  seen: set[int] = set()
  todo = [c for c, _, _ in res.conds] + [x.arg.term for u in (res.before, res.after) if u is not None for x in u.toposort()
                                         if isinstance(x.arg, SymInt)]
  while todo:
    t = todo.pop()
    if t.get_id() in seen or not z3.is_app(t): continue
    seen.add(t.get_id())
    if t.decl().kind() in _BV_DIVISIONS and not z3.is_bv_value(t.arg(1)): return True
    todo.extend(t.children())
  return False

def divides_by_variable(u:UOp|None) -> bool:
  """The instance divides by a non-constant: tinygrad's range analysis of it (``vmin``/``vmax`` of x//y, x%y) divides
  bounds by bounds, so a rule that reads them puts 130-bit divisions into every path condition. ``symbolic.py:257``
  (vmin == vmax folding) at int8: x//y spent its rule's whole budget in 4 paths as bit-vectors; as exact Ints it is proved,
  37 paths in 10 s. Such an instance is explored with Int symbols only: as bit-vectors it is not decided within any budget
  the table can afford (int8 x//y: 250 s for 7 paths, then the rule's budget was gone)."""
  return any(True for _ in _divisions_by_variable(u))

def _divisions_by_variable(u:UOp|None) -> Iterator[UOp]:
  """the integer divisions and modulos under ``u`` whose divisor is not a constant"""
  return (x for x in (u.toposort() if u is not None else ()) if x.op in TRAPPING_OPS and x.src[1].op is not Ops.CONST)

def _plain_shape(u:UOp|None) -> tuple:
  """a rewrite's structure with its symbols as 'sym' and every plain constant and bound as its value"""
  if u is None: return ()
  def arg(x):
    if isinstance(x.arg, SymInt): return "sym"
    if x.op in (Ops.BUFFER, Ops.PARAM) and getattr(x.arg, "vmin_vmax", None) is not None:
      return tuple("sym" if isinstance(y, SymInt) else y for y in x.arg.vmin_vmax)
    return x.arg
  return tuple((x.op, x.dtype, arg(x), len(x.src)) for x in u.toposort())

def _leaks_concrete(rule, dt, plan, res:PathResult, b:Builder, ctx, queries:Budget) -> bool:
  """Re-run the path with other values for the symbols (z3 picks them on the same path, each different where it can):
  if the rewrite then holds other plain numbers, the code turned a symbol into a plain number silently."""
  if not b.syms or not queries.take(): return False
  first = {n: int.__int__(v) for n, v in b.syms.items()}
  path = path_literals(res.conds)
  for differ in (z3.And, z3.Or):
    q = [*b.domain, *path, differ(*[v.term != first[n] for n, v in b.syms.items()])]
    s = solver_for(q, ctx)
    s.set("rlimit", queries.cap(RLIMIT))
    s.add(*q)
    r = check(s)
    queries.charge(s)
    if r == z3.sat:
      m = s.model()
      _, res2 = run_rule(rule, dt, plan, {n: value_of(m, v.term) for n, v in b.syms.items()}, ctx, b.int_syms)
      same_path = [(str(c), o) for c, o, _ in res2.conds] == [(str(c), o) for c, o, _ in res.conds]
      return same_path and _plain_shape(res2.after) != _plain_shape(res.after)
  return False

def _raise_matters(res:PathResult, b:Builder, ctx, queries:Budget) -> tuple[Undecided, str]|None:
  """The rule raised on this path: harmless where the original is undefined on the whole path (a shift by a negative
  count, a division by zero); otherwise a crash of tinygrad on a defined input ((cause, why), for the verdict)."""
  from uopcheck.spec.z3model import Z3Model, Unsupported
  if res.before is None or not queries.take():
    return (Undecided.SOLVER, f"the rule raised: {res.error}") if res.before is None else \
           (Undecided.BUDGET, f"the rule raised ({res.error}), and the z3 budget to tell whether that input is defined was spent ({BUDGET_TEXT})")
  m = Z3Model(OverflowReading.WRAP, ctx=ctx)
  try: _, defined = m.translate(res.before)
  except (Unsupported, z3.Z3Exception): return Undecided.SOLVER, f"the rule raised: {res.error}"
  q = [*b.domain, *m.bounds, *m.links, defined, *path_literals(res.conds)]
  s = solver_for(q, ctx)
  s.set("rlimit", queries.cap(RLIMIT))
  s.add(*q)
  r = check(s)
  queries.charge(s)
  if r == z3.unsat: return None
  if res.not_computed: return Undecided.NOT_COMPUTED, f"a path not computed ({res.error})"
  if r == z3.unknown: return Undecided.SOLVER, f"the rule raised ({res.error}); z3 could not tell whether the input is defined"
  return Undecided.RAISES, f"the rule raises on a defined input ({res.error})"

def _verify_path(rule, dt, plan, res:PathResult, b:Builder, ctx, queries:Budget) -> InstanceVerdict|None:
  """None when the path is proved under both readings; else the refutation (confirmed) or why it is undecided."""
  assume = (*b.domain, *path_literals(res.conds))
  terms = {n: s.term for n, s in b.syms.items()}
  # Two encodings, the likelier first, the other when z3 gives up. No Int symbol (a sized instance): bit-vectors, with
  # weakint as a W-bit vector so the query stays QF_BV (check_rewrite proves the original's weakint values fit first,
  # so this never makes a pass); then the path re-run with Int symbols and every sized int as its exact Int. Int symbols
  # (a weakint instance): sized ints as exact Ints first (linear arithmetic with mod: int2bv is what z3 decides worst).
  int_syms = any(z3.is_int(t) for t in terms.values())
  path = PathQuery(ctx=ctx, assume=assume, terms=terms, rlimit=queries.cap(PROOF_RLIMIT), on_check=queries.charge)
  def bv(reading, q:PathQuery=path):
    return check_rewrite(res.before, res.after, reading, weak_bits=None if int_syms else W, query=dataclasses.replace(q, sym_bits=SYM_BITS))
  def ints(reading, q:PathQuery=path):
    if int_syms: return check_rewrite(res.before, res.after, reading, query=dataclasses.replace(q, sized_as_int=True))
    return _verify_path_as_ints(rule, dt, plan, res, b, ctx, reading, queries)
  assert res.before is not None and res.after is not None   # only a rewrite that fired is verified
  encodings = (ints, bv) if int_syms or _wide_division(res.before) else (bv, ints)
  readings: dict[str, str] = {}
  why = ""
  for reading in (READINGS if _reading_matters(res.before, res.after) else READINGS[:1]):
    if not queries.take(): return InstanceVerdict(Decision.BOUNDED, why=f"z3 budget spent ({BUDGET_TEXT})")
    try:
      v = encodings[0](reading)
      if isinstance(v, Unknown) and queries.take(): v = encodings[1](reading) or v
    except Exception as e:   # uopcheck's own model failing is never a verdict on the rule
      return InstanceVerdict(Decision.UNKNOWN, readings=readings, why=f"uopcheck's z3 model failed: {type(e).__name__}: {str(e)[:80]}")
    if isinstance(v, Proved): readings[reading.value] = "proved"
    elif isinstance(v, Refuted):
      cex = confirm_refutation(rule, dt, plan, v, reading, ctx)
      if not cex.get("confirmed") and queries.take():
        # the numpy spec holds weakint as int64: a counterexample past it (a weak constant up to uint64's max) cannot be
        # confirmed. Ask z3 once more for one with every symbol inside int64; it is confirmed the same way, or it is not one
        inside = dataclasses.replace(path, assume=(*assume, *[z3.And(t >= -2**63, t <= 2**63 - 1) for t in terms.values()]))
        if isinstance(v2 := (ints if int_syms else bv)(reading, inside), Refuted):
          if (cex2 := confirm_refutation(rule, dt, plan, v2, reading, ctx)).get("confirmed"): v, cex = v2, cex2
      if cex.get("confirmed"): return InstanceVerdict(Decision.REFUTED, readings={**readings, reading.value: "refuted"}, counterexample=cex,
                                                      why=f"{v.reason} under the {reading.value} reading")
      readings[reading.value], why = "unconfirmed", f"z3 refutation not confirmed: {cex.get('why')}"
    else: readings[reading.value], why = "unknown", f"z3: {v.why}" if "z3" not in v.why else v.why
  return None if all(r == "proved" for r in readings.values()) else InstanceVerdict(Decision.UNKNOWN, readings=readings, why=why or "no z3 model")

def _verify_path_as_ints(rule, dt, plan, res:PathResult, b:Builder, ctx, reading:OverflowReading, queries:Budget):
  """The bit-vector proof gave up (overflow of a product by a symbolic constant is hard to bit-blast): re-run the rule at
  the same values with Int symbols -- the same decisions, recorded exactly -- and prove it with every sized int as its
  exact Int value (``sized_as_int``). The Int path is the bit-vector one without its width guards, so it covers it."""
  b2, res2 = run_rule(rule, dt, plan, {n: int.__int__(v) for n, v in b.syms.items()}, ctx, int_syms=True)
  if res2.after is None or res2.error or _plain_shape(res2.after) != _plain_shape(res.after): return None
  return check_rewrite(res2.before, res2.after, reading, query=PathQuery(ctx=ctx, assume=(*b2.domain, *path_literals(res2.conds)),
                       terms={n: s.term for n, s in b2.syms.items()}, rlimit=queries.cap(PROOF_RLIMIT), on_check=queries.charge, sized_as_int=True))

def _wide_division(u:UOp) -> bool:
  """a 32- or 64-bit division or modulo by a non-constant: its bit-blasted circuit is what z3 decides worst, while the
  exact-Int encoding decides it in milliseconds (``(x%y)%y`` at int64: 20M resource units given up vs 50k proved)"""
  return any(x.dtype in SIZED and x.dtype.itemsize >= 4 for x in _divisions_by_variable(u))

def _reading_matters(*us:UOp) -> bool:
  """The two readings of signed overflow differ only on arithmetic at a sized signed dtype (and uint16 products, which C
  promotes to int); without one, one proof covers both."""
  return any((x.dtype in dtypes.sints and x.dtype != dtypes.weakint and x.op in OVERFLOW_UB_OPS) or (x.dtype == dtypes.uint16 and x.op is Ops.MUL)
             for u in us for x in u.toposort())

# ** confirming and reaching a refutation **

def confirm_refutation(rule:Rule, dt:DType, plan:tuple, v:Refuted, reading:OverflowReading, ctx:z3.Context) -> dict:
  """Re-run the rule on the plain counterexample (no symbols) and evaluate both sides with the numpy spec there."""
  from uopcheck.fuzz.symbolic import confirm, Verdict
  asg = {k: int(x) for k, x in v.assignment.items() if isinstance(x, (int, bool))}
  try:
    with keep_symbols(), recording(Recorder(ctx)):
      plain = _plainify(Builder(ctx, plan, asg).build(rule.pat, dt))
    after = PatternMatcher([(rule.pat, rule.fxn)]).rewrite(plain, ctx={})  # type: ignore[list-item]
  except Exception as e: return {"confirmed": False, "why": f"the plain re-run failed: {type(e).__name__}: {e}"}
  if not isinstance(after, UOp): return {"confirmed": False, "why": "the rule does not fire on the plain counterexample"}
  var_values = {k: x for k, x in v.assignment.items() if not k.startswith(("c", "lo", "hi"))}
  why = confirm(plain, after, Verdict("refuted", "z3", Refuted(var_values, v.before, v.after, v.reason)), reading)
  out = {"confirmed": why is None, "why": why or "", "before": plain.render(simplify=False), "after": after.render(simplify=False),
         "assignment": var_values, "constants": {k: x for k, x in v.assignment.items() if k.startswith(("c", "lo", "hi"))},
         "value_before": str(v.before), "value_after": str(v.after), "reason": v.reason, "reading": reading.value}
  if why is None: out["reachable"] = reachability(plain, var_values, reading)
  return out

def _plainify(u:UOp) -> UOp:
  """the same graph with every symbolic constant and bound replaced by its plain int (rebuilt node by node)"""
  def plain(y):
    return int.__int__(y) if isinstance(y, SymInt) else y
  new: dict[UOp, UOp] = {}
  for x in u.toposort():
    arg = x.arg
    if x.op is Ops.CONST: arg = plain(arg)
    elif x.op in (Ops.BUFFER, Ops.PARAM) and getattr(arg, "vmin_vmax", None) is not None:
      arg = dataclasses.replace(arg, vmin_vmax=tuple(plain(y) for y in arg.vmin_vmax))
    new[x] = UOp(x.op, x.dtype, tuple(new[s] for s in x.src), arg, x.tag)
  return new[u]

def reachability(before:UOp, asg:dict, reading:OverflowReading) -> dict:
  """Is the bad rewrite reachable through tinygrad's own ``simplify()`` (every kernel's index math goes through it)?
  Evaluate the instance and its full simplification with the numpy spec at the counterexample."""
  from uopcheck.fuzz.exhaustive import in_every_range, evaluate_at
  try: s = before.simplify()
  except Exception as e: return {"reachable": False, "attempt": "simplify()", "result": f"simplify raised {type(e).__name__}: {str(e)[:80]}"}
  if s.dtype != before.dtype: return {"reachable": True, "attempt": "simplify()", "result": f"dtype {before.dtype} -> {s.dtype}"}
  if in_every_range(asg, before, s) is not None: return {"reachable": False, "attempt": "simplify()", "result": "simplify() changed the variables"}
  try: (bv, bu), (av, au) = evaluate_at([before, s], asg, ub_is_undefined=reading is OverflowReading.UNDEFINED)
  except Exception as e: return {"reachable": False, "attempt": "simplify()", "result": f"numpy evaluation failed: {type(e).__name__}"}
  wrong = not bu and (au or bv != av)
  return {"reachable": bool(wrong), "attempt": "simplify() of the instance, evaluated by the numpy spec",
          "result": f"simplify() gives {s.render(simplify=False)[:120]} = {'undefined' if au else av} (spec: {bv})",
          "simplified": s.render(simplify=False)}

# ** per rule **

@dataclass
class RuleVerdict:
  rule: str
  matchers: tuple[str, ...]
  source: str
  verdict: Decision            # the worst over every dtype, integer and float
  dtypes: dict[str, Decision]     # dtype name -> verdict, integer dtypes then float ones (fuzz/float_verify.py)
  why: str
  seconds: float
  paths: int
  counterexample: dict|None = None
  int_verdict: Decision = Decision.NA    # the worst over the integer dtypes (weakint, the sized ints, bool)
  float_verdict: Decision = Decision.NA  # the worst over float16, bfloat16, float32, float64 under IEEE (``liberty``: see float_verify)
  float_counterexamples: dict = field(default_factory=dict)   # float dtype -> its confirmed counterexample (refuted, liberty)
  float_seconds: float = 0.0   # of ``seconds``: the float instances
  bounded_verdict: Decision = Decision.NA # rules neither verifier decides, model-checked up to ``bounded_verify.BOUND`` (fuzz/bounded_verify.py)
  bounded_dtypes: dict = field(default_factory=dict)          # main dtype -> its bounded verdict
  bounded_counterexample: dict|None = None
  bounded_complete: bool = False   # every instance of the bounded space was enumerated, at every dtype (else the first of its cap)
  bounded_spaces: dict = field(default_factory=dict)          # main dtype -> the label of the space it was checked in
  bounded_seconds: float = 0.0     # of ``seconds``: the bounded model checking
  no_value: str = ""           # why a rule left n/a has no value semantics to check
  def as_json(self) -> dict: return dataclasses.asdict(self)

ORDER = {d: i for i, d in enumerate(Decision)}   # worst first
DECIDED = (Decision.PROVED, Decision.REFUTED, Decision.LIBERTY)   # a verdict for all inputs
def worst_of(verdicts:Iterable[Decision]) -> Decision: return min(verdicts, key=lambda v: ORDER[v], default=Decision.NA)

def verify_rule(rule:Rule, plan_budget:int=PLAN_BUDGET, path_budget:int=PATH_BUDGET, with_floats:bool=True) -> RuleVerdict:
  st = time.perf_counter()
  scale = RULE_BUDGET_SCALE.get(rule.key, 1)
  queries = Budget(MAX_QUERIES * scale, RULE_RLIMIT * scale)
  path_budget = max(path_budget, RULE_PATH_BUDGET.get(rule.key, 0))
  per_dt: dict[str, Decision] = {}
  whys, paths, cex = [], 0, None
  spaces = []
  for dt in MAIN_DTYPES:
    ctx = z3.Context()
    def make(plan, dt=dt, ctx=ctx):
      try: b, res = run_rule(rule, dt, plan, {}, ctx)
      except NoInstance: return None
      # the pattern fixed every node's dtype to another one (``dtype=dtypes.weakint``): this is that dtype's instance again,
      # and the rule does not match a ``dt`` expression at all
      if dt != dtypes.weakint and res.before is not None and all(x.dtype != dt for x in res.before.toposort()): return None
      b.shape, b.divides, b.by_variable = _plain_shape(res.before), divides_symbols(res), divides_by_variable(res.before)
      return b
    space = Instances(make, plan_budget)   # another plan may build the same instance (a choice its pattern did not use)
    spaces.append((dt, ctx, space, list(space)))
  scouted = _scout(rule, spaces, path_budget, queries)
  for dt, ctx, space, instances in spaces:
    # a refutation the scouts found decides the dtype: the instances before it need no full budget
    verdicts = [v for (name, _), v in scouted.items() if name == dt.name and v.verdict == Decision.REFUTED]
    for i, (plan, b) in enumerate([] if verdicts else instances):
      if (v := scouted.get((dt.name, i))) is None:
        v = explore(rule, dt, plan, ctx, path_budget, queries, int_syms=b.int_first)
        if b.divides and v.verdict in (Decision.BOUNDED, Decision.UNKNOWN):   # exact Ints did not decide it: bit-vectors may
          paths += v.paths
          if (v2 := explore(rule, dt, plan, ctx, path_budget, queries)).verdict in (Decision.PROVED, Decision.REFUTED): v = v2
        paths += v.paths
      verdicts.append(v)
      if v.verdict == Decision.REFUTED: break
    applicable = [v for v in verdicts if v.verdict != Decision.NA]
    if not applicable: continue
    worst = min(applicable, key=lambda v: ORDER[v.verdict])
    if space.cuts(worst.verdict): worst = InstanceVerdict(Decision.BOUNDED, why=space.why)
    per_dt[dt.name] = worst.verdict
    if worst.verdict != Decision.PROVED: whys.append(f"{dt.name}: {worst.why}")
    if worst.verdict == Decision.REFUTED and cex is None: cex = {"dtype": dt.name, **(worst.counterexample or {})}
  int_verdict = worst_of(per_dt.values())
  from uopcheck.fuzz.float_verify import verify_float_rule   # it builds on this module's instances
  fst = time.perf_counter()
  floats = verify_float_rule(rule, plan_budget) if with_floats else {}
  float_seconds = round(time.perf_counter() - fst, 3)
  for name, fv in floats.items():
    per_dt[name] = fv.verdict
    if fv.verdict not in (Decision.PROVED, Decision.LIBERTY): whys.append(f"{name}: {fv.why}")
  float_verdict = worst_of(fv.verdict for fv in floats.values())
  verdict = worst_of(per_dt.values())
  fcex = {name: fv.counterexample for name, fv in floats.items() if fv.counterexample is not None}
  if cex is None and fcex: cex = {"dtype": next(iter(fcex)), **next(iter(fcex.values()))}
  out = RuleVerdict(rule.key, rule.matchers, rule.source, verdict, per_dt, "", 0.0, paths, cex, int_verdict, float_verdict, fcex, float_seconds)
  if verdict == Decision.NA and with_floats: _bounded(rule, out, whys)
  out.why, out.seconds = "; ".join(whys)[:400], round(time.perf_counter() - st, 3)
  return out

def _scout(rule:Rule, spaces:list, path_budget:int, queries:Budget) -> dict[tuple[str, int], InstanceVerdict]:
  """A scouting pass before the rule's real one: every instance of every dtype gets a small budget of its own
  (``SCOUT_QUERIES`` / ``SCOUT_RLIMIT``, charged to the rule's), so that costly instances cannot spend the rule's budget
  before a cheap refutation elsewhere decides a dtype (``symbolic.py:150`` folds 16 ops at 10 dtypes: FLOORMOD spent it
  all at weakint and int8, before the counterexamples of CDIV and MAX were reached). What it decides is kept: (dtype name,
  instance index) -> verdict; the rest get the rule's budget in the real pass, in order -- except in a dtype a scout
  refuted, which is decided."""
  scouted: dict[tuple[str, int], InstanceVerdict] = {}
  for dt, ctx, _, instances in spaces:
    for i, (plan, b) in enumerate(instances):
      if queries.spent: return scouted
      v = explore(rule, dt, plan, ctx, path_budget, queries.share(SCOUT_QUERIES, SCOUT_RLIMIT), int_syms=b.int_first)
      if v.verdict in (Decision.PROVED, Decision.REFUTED, Decision.NA): scouted[(dt.name, i)] = v
      if v.verdict == Decision.REFUTED: break   # the dtype is decided
  return scouted

def _bounded(rule:Rule, out:RuleVerdict, whys:list[str]) -> None:
  """a rule no integer or float instance fires: model-checked over the bounded space (fuzz/bounded_verify.py), or n/a with
  the reason it has no value semantics"""
  from uopcheck.fuzz.bounded_verify import verify_bounded_rule, no_value_semantics
  if (why := no_value_semantics(rule)) is not None:
    out.no_value = why
    whys.append(why)
    return
  st = time.perf_counter()
  bv = verify_bounded_rule(rule)
  out.bounded_seconds = round(time.perf_counter() - st, 3)
  out.bounded_dtypes = {name: v.verdict for name, v in bv.items()}
  out.bounded_complete = all(v.complete for v in bv.values())
  out.bounded_spaces = {name: v.space for name, v in bv.items()}
  out.bounded_verdict = out.verdict = worst_of(out.bounded_dtypes.values())
  if out.verdict == Decision.NA:
    out.no_value = "no instance in the bounded spaces fires it"
    whys.append(out.no_value)
    return
  whys.extend(f"{name}: {v.why}" for name, v in bv.items() if v.why)
  if out.verdict == Decision.BOUNDED:
    whys.append(f"bounded({space_labels(out.bounded_spaces)}): no counterexample in {sum(v.fired for v in bv.values())} fired instances")
  out.bounded_counterexample = next(({"dtype": n, **v.counterexample} for n, v in bv.items()
                                     if v.verdict == Decision.REFUTED and v.counterexample), None)
  if out.counterexample is None: out.counterexample = out.bounded_counterexample

def space_labels(spaces:dict[str, str]) -> str:
  """the bounded spaces a rule's dtypes were checked in, largest first, once each: ``k=2/k=1,plain``"""
  from uopcheck.fuzz.bounded_verify import SPACES
  return "/".join(s.label for s in SPACES if s.label in spaces.values())

# ** the whole table **

def _verify_key(key:str) -> dict:
  rule = next(r for r in all_rules() if r.key == key)
  return verify_rule(rule).as_json()

class RulesInterrupted(KeyboardInterrupt):
  """Ctrl-C during ``verify_all``: the verdicts finished before it (``done``), none of them cut short"""
  def __init__(self, done:list[RuleVerdict], total:int):
    super().__init__(f"interrupted after {len(done)} of {total} rules")
    self.done, self.total = done, total

def _quiet_worker() -> None:
  """a pool worker leaves Ctrl-C to the parent: it ignores SIGINT, and z3 must not catch it either (z3 answers a caught
  Ctrl-C with ``unknown``), so the parent stops the pool and keeps only whole verdicts"""
  import signal
  from uopcheck.fuzz.lost_case import die_with_parent
  die_with_parent()   # a parent killed (kill PID, kill -9) takes its workers with it: they ran on to the end of their rule
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  z3.set_param("ctrl_c", False)

def verify_all(only:list[str]|None=None, workers:int=2, progress:bool=True) -> list[RuleVerdict]:
  """Every rule (or those whose key or matcher contains one of ``only``), ``workers`` processes (always at least one
  besides this one, so Ctrl-C lands here); results in rule order. Each rule is decided on its own with fixed budgets, so
  the table does not depend on the worker count or timing. Ctrl-C raises ``RulesInterrupted`` with the verdicts done."""
  import multiprocessing as mp
  from uopcheck.progress import bar
  from uopcheck.interrupts import sigint_ignored
  keys = [r.key for r in all_rules(only)]
  with sigint_ignored(): pool = mp.get_context("spawn").Pool(max(1, workers), initializer=_quiet_worker)   # workers never see Ctrl-C
  out: list[RuleVerdict] = []
  try:
    for d in bar(pool.imap(_verify_key, keys), "rules", total=len(keys), unit="rules", enabled=progress):
      out.append(RuleVerdict(**{**d, "matchers": tuple(d["matchers"])}))
  except KeyboardInterrupt: raise RulesInterrupted(out, len(keys)) from None
  finally: pool.terminate()
  return out

FLOAT_KNOWN_PREFIX = "float:"   # a float refutation's key in the known list: float:tinygrad/uop/symbolic.py:165
BOUNDED_KNOWN_PREFIX = "bounded:"   # a bounded model checking refutation's key: bounded:tinygrad/uop/symbolic.py:468

def refutation_keys(v:RuleVerdict) -> dict[str, str]:
  """each refuted part of a rule's verdict (integer, float, bounded) -> its key on the known list (``fuzz/rules_known.json``):
  the rule's own key, ``float:`` or ``bounded:`` before it"""
  parts = (("integer", v.int_verdict, ""), ("float", v.float_verdict, FLOAT_KNOWN_PREFIX), ("bounded", v.bounded_verdict, BOUNDED_KNOWN_PREFIX))
  return {part: prefix + v.rule for part, verdict, prefix in parts if verdict == Decision.REFUTED}

def summary(verdicts:list[RuleVerdict], known:dict|None=None) -> dict:
  """integer and float apart: per rule (its worst dtype) and per rule x dtype instantiation; a refutation not on the
  known list is new (a float one is known as ``float:<rule>``)"""
  from uopcheck.fuzz.float_verify import FLOAT_DTYPES
  known = known or {}
  fnames = {d.name for d in FLOAT_DTYPES}
  integer = [v for v in verdicts if v.int_verdict != Decision.NA]
  floats = [v for v in verdicts if v.float_verdict != Decision.NA]
  def count(vs, attr, k):
    return sum(1 for v in vs if getattr(v, attr) == k)
  def inst(fl):
    return [x for v in verdicts for d, x in v.dtypes.items() if (d in fnames) == fl and x != Decision.NA]
  int_inst, float_inst = inst(False), inst(True)
  def decided(xs):
    return round(sum(1 for x in xs if x in DECIDED) / max(1, len(xs)), 4)
  return {"rules": len(verdicts), "integer_rules": len(integer), "proved": count(integer, "int_verdict", "proved"),
          "refuted": count(integer, "int_verdict", "refuted"), "bounded": count(integer, "int_verdict", "bounded"),
          "unknown": count(integer, "int_verdict", "unknown"), "not_integer": len(verdicts) - len(integer),
          "decided_fraction": round((count(integer, "int_verdict", "proved") + count(integer, "int_verdict", "refuted")) / max(1, len(integer)), 4),
          "integer_instantiations": len(int_inst), "integer_instantiations_decided": decided(int_inst),
          "float_rules": len(floats),
          **{f"float_{k}": count(floats, "float_verdict", k) for k in ("proved", "refuted", "liberty", "bounded", "unknown")},
          "float_decided_fraction": round(sum(1 for v in floats if v.float_verdict in DECIDED) / max(1, len(floats)), 4),
          "float_instantiations": len(float_inst), "float_instantiations_decided": decided(float_inst),
          **_bounded_summary(verdicts, known),
          "no_verdict": [v.rule for v in verdicts if v.verdict == Decision.NA],
          "no_verdict_why": {v.rule: v.no_value or v.why for v in verdicts if v.verdict == Decision.NA},
          "refuted_new": [k for v in verdicts for k in refutation_keys(v).values() if k not in known],
          "refuted_known": [k for v in verdicts for k in refutation_keys(v).values() if k in known],
          "seconds": round(sum(v.seconds for v in verdicts), 1), "float_seconds": round(sum(v.float_seconds for v in verdicts), 1),
          "bounded_seconds": round(sum(v.bounded_seconds for v in verdicts), 1)}

def _bounded_summary(verdicts:list[RuleVerdict], known:dict) -> dict:
  """the bounded model checking part: rules and rule x dtype instantiations, by verdict, and the bound itself"""
  from uopcheck.fuzz.bounded_verify import BOUND
  rules = [v for v in verdicts if v.bounded_verdict != Decision.NA]
  inst = [x for v in rules for x in v.bounded_dtypes.values() if x != Decision.NA]
  return {"bounded_rules": len(rules), "bound": BOUND,
          **{f"bounded_{k}": sum(1 for v in rules if v.bounded_verdict == k) for k in ("bounded", "refuted", "unknown")},
          "bounded_instantiations": len(inst), "bounded_instantiations_checked": sum(1 for x in inst if x in (Decision.BOUNDED, Decision.REFUTED))}
