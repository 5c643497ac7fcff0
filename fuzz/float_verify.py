"""Float rewrite rules decided under IEEE-754: every rule of the rule files at float16, bfloat16, float32 and float64.

``fuzz/rule_verify.py`` decides the integer instances of each rule; this module decides its float ones, with z3's
floating-point theory (``spec/fpsem.py``, the op table's ``fp`` definitions), for every value of every float variable:
NaN, +-0, +-inf, subnormals, round-to-nearest-even.

1. **Instances** (``FloatBuilder``): a pattern variable is a float variable of the instance's dtype (bool where the
   pattern says bool, an int where a cast needs one); op, dtype and operand alternatives are enumerated
   (``rule_verify.Instances``); each instance passes tinygrad's ``type_verify`` and ``dtype_from_uop`` first.
2. **Free constants** (``UPat.cvar``) take *probe* values: NaN, +-inf, +-0, +-1, 2, 0.5, 3, -2.5, the largest finite and
   the smallest subnormal of the dtype, every combination up to a cap. The rule's code runs on each. A constant is a
   ``ProbeFloat``, which notes any comparison or arithmetic the rule's code makes on it. When no code looked at the
   constants and every probe gave the same rewrite (the constants only moved), the instance is proved once with the
   constants as z3 variables: for *all* values (``abstracted``). Otherwise each probe combination is proved on its own,
   and the verdict is ``bounded`` (what the probes cover), unless one is refuted.
3. **Refinement** for all values: wherever ``before`` is defined, ``after`` is defined and the same IEEE datum (SMT-LIB
   ``=``: every NaN is one value, +0 and -0 differ). A refutation is **confirmed** by the numpy spec (``ref.elementwise``,
   the reference's own evaluator) at the counterexample before it counts; one that differs only in the sign of a zero is
   marked ``zero_sign_only``. Each refuted instance is then asked at which classes of input it fails (NaN, inf,
   zero, subnormal, normal): the ``x - x`` finding is ``x*0 -> 0``, refuted at NaN and inf.
4. **Two readings**: strict IEEE (the CPU backend compiles without fast-math: ``-O2 -fno-math-errno``, no ``-ffast-math``;
   Metal passes ``-fno-fast-math``), and tinygrad's *documented liberties*: a rule whose own comment in tinygrad states
   where it may be wrong (``LIBERTIES``) is proved again under that statement as an assumption. Sound under the liberty
   is reported as such, never as a bug; still refuted means the comment does not cover the counterexample.

Verdicts per (rule, float dtype): ``proved``, ``refuted`` (confirmed), ``liberty`` (refuted under strict IEEE, proved
under tinygrad's own statement of where it may be wrong), ``bounded`` (proved at every probe, not abstracted),
``unknown`` (z3 gave up within its resource limit, or an op with no exact IEEE definition: EXP2, LOG2, SIN, POW),
``n/a`` (no well-typed float instance fires the rule)."""
from __future__ import annotations
from typing import Any
import itertools, linecache, random, threading
from dataclasses import dataclass, field
import numpy as np
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp, UPat, PatternMatcher
from tinygrad.dtype import DType, dtypes, ConstFloat, Invalid
from uopcheck.fuzz.rule_verify import Rule, Builder, NoInstance, Instances, ORDER, Decision, unused_context
from uopcheck.fuzz.float_check import PROBES, probe_value, decide, confirm, numpy_decide, show
from uopcheck.spec.z3float import CAST_INTS
from uopcheck.spec.optable import FLOAT_OPS, BOOL_OPS
from uopcheck.spec.errors import SpecError
from uopcheck.settings import PLAN_BUDGET, FLOAT_RULE_RLIMIT, FLOAT_PROBE_COMBOS

FLOAT_DTYPES = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]

# ** probe constants **

_seen = threading.local()

class ProbeFloat(ConstFloat):
  """A free constant's value that notes when the rule's code compares it or computes with it (``_seen.looked``).
  Hashing is not a look. It never equals a plain ConstFloat of the same bits (the UOp cache compares args: a probe
  constant must never be served a cached plain node, nor a plain one a probe); that comparison is the cache's, not a look."""
  __slots__ = ()
  def _look(self):
    _seen.looked = True
  def __eq__(self, other):
    if self is other: return True
    if isinstance(other, ConstFloat) and not isinstance(other, ProbeFloat) and other.bits == self.bits: return False
    self._look()
    return ConstFloat.__eq__(self, other)
  def __ne__(self, other): return not self.__eq__(other)
  def __hash__(self): return ConstFloat.__hash__(self)

def _looking(name):
  def f(self, *a):
    self._look()
    return getattr(float, name)(self, *a)
  return f
for _n in ("__bool__", "__float__", "__int__", "__trunc__", "__round__", "__abs__", "__neg__", "is_integer",
           "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__divmod__"):
  setattr(ProbeFloat, _n, _looking(_n))

# ** instances **

class FloatBuilder(Builder):
  """One float instance of a UPat: ``plan`` fixes every alternative, ``probes`` the free constants' values (by name)."""
  def __init__(self, plan:tuple[int, ...], probes:dict[str, float]):
    super().__init__(unused_context(), plan, {})
    self.probes = probes
    self.free: dict[str, UOp] = {}    # free constant name -> its CONST node

  def variable(self, dt:DType) -> UOp:
    self.nvars += 1
    if dt == dtypes.bool: return UOp.variable(f"b{self.nvars}", False, True, dtypes.bool, param=True)
    if dtypes.is_float(dt): return UOp.variable(f"f{self.nvars}", -float("inf"), float("inf"), dt, param=True)
    return UOp.variable(f"i{self.nvars}", dt.min, dt.max, dt, param=True)

  def const(self, dt:DType, arg:Any=None) -> UOp:
    if arg is not None and not isinstance(arg, tuple): return UOp.const(arg, dt)
    if dt == dtypes.bool: return UOp.const(self.choose([False, True]), dt)
    if not dtypes.is_float(dt): return UOp.const(self.choose([0, 1, -1, 2]) if dt in dtypes.sints else self.choose([0, 1, 2]), dt)
    from uopcheck.spec.numpy_dtypes import round_to
    name = f"c{len(self.free)}"   # a probe is a value of the main dtype: held in this constant's own dtype, it rounds
    u = UOp(Ops.CONST, dt, arg=ProbeFloat(float(round_to(np.array(self.probes.get(name, 1.0), np.float64), dt))))
    self.free[name] = u
    return u

  KIND = "float"
  def dtype_choices(self) -> list[DType]: return [self.main, *FLOAT_DTYPES, dtypes.bool, *CAST_INTS]

  def build(self, p:UPat, dt:DType, depth:int=0) -> UOp:
    done, dt = self.enter(p, dt, depth)
    if done is not None: return done
    if p.op is None: return self._named(p, self.variable(dt))
    # the op table says which ops have a value at the dtype; a comparison makes a bool of any operands; CONST and CAST anywhere
    allowed = (FLOAT_OPS if dtypes.is_float(dt) else BOOL_OPS | GroupOp.Comparison if dt == dtypes.bool else set()) | {Ops.CONST, Ops.CAST}
    ops = sorted((o for o in p.op if o in allowed), key=lambda o: o.value)
    if not ops: raise NoInstance(f"ops {sorted(o.name for o in p.op)} have no {dt} instance")
    op = self.choose(ops)
    if op is Ops.CONST: return self._named(p, self.const(dt, p.arg))
    kids = self._kids(p, op)
    if op in GroupOp.Comparison:
      sdt = dt if dt != dtypes.bool else self.main
      return self._named(p, UOp(op, dtypes.bool, tuple(self.build(k, sdt, depth + 1) for k in kids)))
    if op is Ops.WHERE:
      srcs = [self.build(kids[0], dtypes.bool, depth + 1)] + [self.build(k, dt, depth + 1) for k in kids[1:]]
      return self._named(p, self._alu(op, dt, srcs))
    if op is Ops.CAST:
      k0 = kids[0] if kids else UPat()
      if k0.name in self.env: inner_dt = self.env[k0.name].dtype
      elif k0.match_dtype is not None: inner_dt = next((d for d in [self.main, *FLOAT_DTYPES, dtypes.bool, *CAST_INTS] if d in k0.match_dtype), dt)
      else: inner_dt = self.choose(list(dict.fromkeys([*(d for d in [self.main, *FLOAT_DTYPES] if d != dt), dt, dtypes.bool, *CAST_INTS])))
      return self._named(p, UOp(Ops.CAST, dt, (self.build(k0, inner_dt, depth + 1),), dt))   # UOp.cast would drop a same-dtype CAST
    return self._named(p, self._alu(op, dt, [self.build(k, dt, depth + 1) for k in kids]))

def _has_dtype(u:UOp, dt:DType) -> bool: return any(x.dtype == dt for x in u.toposort())

@dataclass
class FloatRun:
  before: UOp|None = None
  after: UOp|None = None
  free: dict = field(default_factory=dict)
  looked: bool = False
  ill_typed: str = ""
  error: str = ""

def run_float_rule(rule:Rule, dt:DType, plan:tuple, probes:dict[str, float]) -> tuple[FloatBuilder, FloatRun]:
  """build the instance for ``plan`` with the free constants at ``probes`` and apply the one rule"""
  from uopcheck.spec.structural import verify
  b = FloatBuilder(plan, probes)
  before = b.build(rule.pat, dt)
  res = FloatRun(before, free=dict(b.free))
  try: verify(plain_floats(before), "full")   # tinygrad's spec wants a float CONST's arg to be exactly a ConstFloat
  except SpecError as e:
    res.ill_typed = str(e)[:200]
    return b, res
  _seen.looked = False
  try:
    after = PatternMatcher([(rule.pat, rule.fxn)]).rewrite(before, ctx={})
    res.after = after if isinstance(after, UOp) and after is not before else None
  except (AssertionError, RuntimeError, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError, RecursionError,
          OverflowError) as e:
    res.error = f"{type(e).__name__}: {str(e)[:120]}"
  res.looked = bool(getattr(_seen, "looked", False))
  return b, res

def plain_floats(u:UOp) -> UOp:
  """the same graph with every ProbeFloat constant as tinygrad's own ConstFloat (rebuilt node by node)"""
  new: dict[UOp, UOp] = {}
  for x in u.toposort():
    arg = ConstFloat(float.__float__(x.arg)) if isinstance(x.arg, ProbeFloat) else x.arg
    new[x] = UOp(x.op, x.dtype, tuple(new[s] for s in x.src), arg, x.tag)
  return new[u]

def template(after:UOp, free:dict[str, UOp]) -> tuple:
  """the rewrite's structure with each free constant's value named: the same template at every probe means the rule only
  moved its constants"""
  by_bits = {(c.dtype, c.arg.bits): name for name, c in free.items()}
  def arg(x):
    if x.op is Ops.CONST and isinstance(x.arg, ConstFloat) and (x.dtype, x.arg.bits) in by_bits: return ("free", by_bits[(x.dtype, x.arg.bits)])
    return x.arg.bits if isinstance(x.arg, ConstFloat) else x.arg
  return tuple((x.op, x.dtype, arg(x), len(x.src)) for x in after.toposort())

# ** one instance proved **

@dataclass
class FloatVerdict:
  verdict: Decision            # proved / refuted / liberty / bounded / unknown / n/a
  why: str = ""
  counterexample: dict|None = None

# ** tinygrad's documented liberties **

# (a phrase of tinygrad's own comment at or just above the rule, what it states, pattern variable -> the classes of input
# it excludes): one statement, read as an assumption by z3 (``CLASSES``) and by the numpy search (``np_classes``)
LIBERTIES: list[tuple[str, str, dict[str, set[str]]]] = [
  ("can be wrong if x or x2 is 0", "x and x2 are not 0", {"x": {"zero"}, "x2": {"zero"}}),
  ("this can be wrong for loaded NaN", "x is not a NaN or an inf (\"if x is nan or inf it should render the nan value\")", {"x": {"nan", "inf"}}),
]

def liberty_of(rule:Rule) -> tuple[str, str, dict[str, set[str]]]|None:
  """the liberty tinygrad states for this rule: a comment at its line or in the comment lines just above it"""
  f, line = rule.pat.location
  for ln in range(line, max(0, line - 4), -1):
    text = linecache.getline(f, ln)
    if ln != line and not text.strip().startswith("#"): break
    for phrase, what, assumption in LIBERTIES:
      if phrase in text: return phrase, what, assumption
  return None

def excluded(b:FloatBuilder, classes:dict[str, set[str]]) -> dict[str, set[str]]:
  """a liberty's excluded classes by the instance's leaf names (its pattern variables are leaves of the instance)"""
  return {u.arg.name: classes[n] for n, u in b.env.items() if u.op is Ops.PARAM and n in classes and dtypes.is_float(u.dtype)}

# ** per rule and dtype **

def _probe_sets(names:list[str], dt:DType, key:str) -> list[dict[str, float]]:
  values = [probe_value(p, dt) for p in PROBES]
  combos = list(itertools.product(range(len(values)), repeat=len(names)))
  if len(combos) > FLOAT_PROBE_COMBOS: combos = random.Random(f"{key}:{dt.name}").sample(combos, FLOAT_PROBE_COMBOS)
  return [{n: values[i] for n, i in zip(names, c)} for c in combos]

def _refutation(rule:Rule, dt:DType, plan:tuple, b:FloatBuilder, r:FloatRun, asg:dict, classes:list[str], abstract:bool,
                budget:list[int]) -> FloatVerdict|None:
  """a counterexample confirmed by the numpy spec (a constant chosen for an abstracted one: the rule re-run on it must make
  the same rewrite), then read against tinygrad's documented liberty for the rule; None when it does not hold up"""
  assert r.before is not None and r.after is not None
  before, after, names = r.before, r.after, sorted(r.free)
  constants = {n: show(float.__float__(c.arg)) for n, c in r.free.items()}
  if abstract:
    plain = {n: asg[n] for n in names}
    b, r2 = run_float_rule(rule, dt, plan, plain)
    if r2.after is None or r2.before is None or template(r2.after, r2.free) != template(after, r.free): return None
    before, after, asg, constants = r2.before, r2.after, {k: v for k, v in asg.items() if k not in names}, {n: show(v) for n, v in plain.items()}
  cex = confirm(before, after, asg)
  if not cex.get("confirmed"): return None
  cex.update(before=before.render(simplify=False), after=after.render(simplify=False), reading="ieee", constants=constants,
             classes=classes or numpy_decide(before, after, rule.key).classes)
  if (lib := liberty_of(rule)) is not None:
    lv, lasg, _, lwhy = decide(before, after, rule.key, budget, exclude=excluded(b, lib[2]))
    if lv == "refuted" and lasg is not None and not confirm(before, after, lasg).get("confirmed"): lv, lwhy = "unknown", "not confirmed"
    cex["liberty"] = {"states": lib[0], "assumes": lib[1], "verdict": lv, "why": lwhy,
                      "counterexample": {k: show(x) for k, x in lasg.items()} if lv == "refuted" and lasg else None}
    if lv == "proved": return FloatVerdict(Decision.LIBERTY, f"refuted under strict IEEE, sound where tinygrad says it may be wrong ({lib[1]})", cex)
  return FloatVerdict(Decision.REFUTED, "confirmed by numpy" + (" (differs only in the sign of a zero)" if cex.get("zero_sign_only") else ""), cex)

def verify_float_instance(rule:Rule, dt:DType, plan:tuple, budget:list[int]) -> FloatVerdict:
  """every probe combination of one instance shape: abstracted and decided for all values where the rule only moved its
  constants, else each decided on its own"""
  b0, first = run_float_rule(rule, dt, plan, {})
  if first.ill_typed or first.before is None: return FloatVerdict(Decision.NA, "ill-typed")
  names = sorted(b0.free)
  runs = [(b0, first)] if not names else [run_float_rule(rule, dt, plan, probes) for probes in _probe_sets(names, dt, rule.key)]
  fired = [(b, r) for b, r in runs if r.after is not None]
  if not fired:
    errs = [r.error for _, r in runs if r.error]
    if errs: return FloatVerdict(Decision.UNKNOWN, f"the rule raised: {errs[0]}")
    # with free constants, only the probe values were run: the rule may fire at others (n/a would drop the instance
    # from its dtype, and the dtype could be reported proved without it)
    if names: return FloatVerdict(Decision.BOUNDED, f"the rule did not fire at any of {len(runs)} probe combinations of its constants")
    return FloatVerdict(Decision.NA, "the rule never fires")
  def distinct(r):
    return len({c.arg.bits for c in r.free.values()}) == len(r.free)
  abstract = bool(names) and len(fired) == len(runs) and not any(r.looked for _, r in runs) and \
             len({template(r.after, r.free) for _, r in fired if distinct(r) and r.after is not None}) == 1
  if abstract:   # the rule only moved its constants: decide once with them as variables; if z3 cannot, probe by probe
    b, r = next((b, r) for b, r in fired if distinct(r))
    assert r.before is not None and r.after is not None
    v, asg, classes, why = decide(r.before, r.after, rule.key, budget, symbolic=r.free)
    if v == "proved": return FloatVerdict(Decision.PROVED, "constants abstracted: decided for all their values")
    if v == "refuted" and asg is not None and (ref := _refutation(rule, dt, plan, b, r, asg, classes, True, budget)) is not None: return ref
  decided, why, by_budget = 0, "", False   # the last undecided probe's reason, and whether the budget was what stopped it
  for b, r in fired:
    assert r.before is not None and r.after is not None
    v, asg, classes, why1 = decide(r.before, r.after, f"{rule.key}:{decided}", budget)
    if v == "refuted" and asg is not None:
      if (ref := _refutation(rule, dt, plan, b, r, asg, classes, False, budget)) is not None: return ref
      why, by_budget = "a refutation the numpy spec did not confirm", False
    elif v == "proved": decided += 1
    else: why, by_budget = why1 or v, v == "budget"
  if why: return FloatVerdict(Decision.BOUNDED if by_budget else Decision.UNKNOWN, why)
  if names: return FloatVerdict(Decision.BOUNDED, f"proved at {len(fired)} probe combinations of its constants (the rule's code reads them)")
  return FloatVerdict(Decision.PROVED)

def verify_float_rule(rule:Rule, plan_budget:int=PLAN_BUDGET) -> dict[str, FloatVerdict]:
  """float dtype name -> the worst instance verdict of that dtype (instances without a node of the dtype don't count)"""
  budget = [FLOAT_RULE_RLIMIT]
  out: dict[str, FloatVerdict] = {}
  for dt in FLOAT_DTYPES:
    def make(plan, dt=dt):
      try: b, res = run_float_rule(rule, dt, plan, {})
      except NoInstance: return None
      if res.before is None or not _has_dtype(res.before, dt): return None
      if any(x.op is Ops.CONST and x.arg is Invalid for x in res.before.toposort()): return None   # an index gate: a memory rule
      b.shape = tuple((x.op, x.dtype, len(x.src)) for x in res.before.toposort())
      return b
    verdicts = []
    space = Instances(make, plan_budget)
    for plan, b in space:
      v = verify_float_instance(rule, dt, plan, budget)
      verdicts.append(v)
      if v.verdict == Decision.REFUTED: break
    applicable = [v for v in verdicts if v.verdict != Decision.NA]
    if not applicable: continue
    worst = min(applicable, key=lambda v: ORDER[v.verdict])
    out[dt.name] = FloatVerdict(Decision.BOUNDED, space.why) if space.cuts(worst.verdict) else worst
  return out

