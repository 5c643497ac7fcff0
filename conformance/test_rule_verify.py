"""Universal rule verification (fuzz/rule_verify.py, fuzz/concolic.py) and the codegen integer pipeline (fuzz/pipeline.py):
symbolic integers compute what Python computes, a sound rule is proved at every dtype, a wrong one is refuted with a
numpy-confirmed counterexample (and found reachable), an ill-typed instance never counts, a rule that raises only where
the original is undefined is not held against it, verdicts repeat exactly, and the pipeline finds what narrowing breaks."""
from __future__ import annotations
import json, math
import z3
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, UPat
from tinygrad.dtype import dtypes
from uopcheck.fuzz.concolic import SymInt, Recorder, recording, SymbolEscaped
from uopcheck.fuzz.rule_verify import all_rules, verify_rule, Rule, summary
from uopcheck.fuzz.pipeline import check_pipeline, run_pipeline, pipeline_root
from uopcheck.fuzz.symbolic import confirm
from uopcheck.spec.ints import OverflowReading
from conformance.profiles import examples

RULES = {r.key: r for r in all_rules()}

def _rule(src_fragment:str) -> Rule:
  return next(r for r in RULES.values() if src_fragment in r.source)

OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "floordiv": lambda a, b: a // b,
       "mod": lambda a, b: a % b, "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
       "lt": lambda a, b: a < b, "max": lambda a, b: max(a, b), "neg_abs": lambda a, b: -abs(a) + b,
       # a symbolic shift count (a mask below bit k, a shift by k): exact while the result fits the 130-bit vectors
       "shl": lambda a, b: a << (b % 64), "shr": lambda a, b: a >> (b % 64), "mask_below": lambda a, b: (1 << (b % 120)) - 1,
       "shr_plain": lambda a, b: -77 >> (b % 70)}

@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.sampled_from(sorted(OPS)), st.integers(-2**64, 2**64), st.integers(-2**64, 2**64).filter(lambda x: x != 0))
def test_symint_computes_what_python_computes(op, a, b):
  """the z3 term of every operation, evaluated at the concrete values, equals Python's own result"""
  ctx = z3.Context()
  A, B = SymInt(a, z3.Int("a", ctx)), SymInt(b, z3.Int("b", ctx))
  with recording(Recorder(ctx)) as rec:
    r = OPS[op](A, B)
    want = OPS[op](a, b)
    got = bool(r) if op == "lt" else r
    assert (got == want) if op == "lt" else int.__int__(r) == want
    if op != "lt":
      val = z3.simplify(z3.substitute(r.term, (A.term, z3.IntVal(a, ctx)), (B.term, z3.IntVal(b, ctx))))
      assert val.as_long() == want, (op, a, b, val)
    # every recorded decision holds at the concrete values
    for c, o, _ in rec.conds:
      assert z3.is_true(z3.simplify(z3.substitute(c, (A.term, z3.IntVal(a, ctx)), (B.term, z3.IntVal(b, ctx))))) == o

def test_symint_outside_a_recorded_run_refuses_to_decide():
  x = SymInt(3, z3.Int("x", z3.Context()))
  with pytest.raises(SymbolEscaped): bool(x < 5)
  with pytest.raises(SymbolEscaped): int(x)

def test_a_plain_number_pins_the_path():
  ctx = z3.Context()
  with recording(Recorder(ctx)) as rec:
    x = SymInt(7, z3.Int("x", ctx))
    assert int(x) == 7 and f"{x}" == "7"   # code that asks for a plain number (int(), formatting)
  c, outcome, pin = rec.conds[-1]
  assert rec.pinned and pin and outcome and set(str(c).replace(" ", "").split("==")) == {"x", "7"}

def test_a_decision_used_as_an_index_is_recorded():
  """tinygrad's cdiv indexes a tuple with a comparison, ``(1,-1)[x*y<0]``: the decision is recorded like any other (it
  raised TypeError before, so CDIV and CMOD folds were never verified)"""
  ctx = z3.Context()
  with recording(Recorder(ctx)) as rec:
    x = SymInt(-3, z3.Int("x", ctx))
    assert (1, -1)[x < 0] == -1
  c, outcome, pin = rec.conds[-1]
  assert outcome and not pin and str(c) in ("x < 0", "0 > x")

def test_an_overflow_guard_a_magnitude_bound_rules_out_is_not_recorded():
  """two 64-bit constants as 130-bit vectors: their product (128 bits) plus a third (129) cannot overflow, so no guard
  is recorded (z3's multiply-overflow predicate made MULACC folds undecidable); the term is still exact at the extremes.
  Without a bound (bits=W) the guard is recorded, as before"""
  from uopcheck.fuzz.concolic import W
  ctx = z3.Context()
  a, b, c = (z3.BitVec(n, W, ctx) for n in "abc")
  with recording(Recorder(ctx)) as rec:
    r = SymInt(3, a, 64) * SymInt(5, b, 64) + SymInt(7, c, 64)
  assert rec.conds == [] and r.bits == 129 and int.__int__(r) == 22
  for va, vb, vc in ((2**64 - 1, 2**64 - 1, 2**64 - 1), (-2**63, 2**64 - 1, -2**63)):
    val = z3.simplify(z3.substitute(r.term, (a, z3.BitVecVal(va, W, ctx)), (b, z3.BitVecVal(vb, W, ctx)), (c, z3.BitVecVal(vc, W, ctx))))
    assert val.as_signed_long() == va * vb + vc
  with recording(Recorder(ctx)) as rec:
    SymInt(3, a) * SymInt(5, b, 64)
  assert len(rec.conds) == 1, rec.conds

def test_a_symbolic_shift_count_raises_where_python_does_and_is_never_computed_past_the_width():
  """a negative count raises ValueError as in Python (the decision recorded); a count past the 130-bit width raises
  NotComputed on its path -- never a shift of 2**k bits (z3 picks counts up to 2**129: one such pick killed the process),
  and never a pin per count (the paths past the width multiplied until the budget was spent)"""
  from uopcheck.fuzz.concolic import NotComputed, W
  ctx = z3.Context()
  with recording(Recorder(ctx)) as rec:
    with pytest.raises(ValueError): 1 << SymInt(-1, z3.Int("k", ctx))
    with pytest.raises(NotComputed): 3 << SymInt(200, z3.Int("m", ctx))
    with pytest.raises(NotComputed): 1 << SymInt(W, z3.Int("j", ctx))
    assert int.__int__(3 << SymInt(100, z3.Int("n", ctx))) == 3 << 100   # inside the width: exact
  assert rec.conds[0][1] is False and not rec.pinned

def test_a_shift_count_past_the_width_of_a_sized_dtype_is_proved_where_the_shift_is_undefined():
  """(x&mask)>>k with a weak k: a count of 8 or more at int8 (64 at int64) makes the shift undefined, so those paths are
  vacuous. They were pinned one count per path and the rule stayed 'bounded' at every sized dtype; now each raises
  NotComputed, which is harmless where the original is undefined, and the rule is proved at all of them. At weakint the
  count has no width, so a path past 130 bits is undecided there -- never proved."""
  v = verify_rule(RULES["tinygrad/uop/symbolic.py:138"], with_floats=False)
  sized = ["signed char", "short", "int", "long", "unsigned char", "unsigned short", "unsigned int", "unsigned long"]
  assert all(v.dtypes[d] == "proved" for d in sized), v.dtypes
  assert v.dtypes["weakint"] != "proved" and "not computed" in v.why, v

def test_a_decision_compared_as_a_number_is_recorded():
  """a bool node's vmin is a decision (a SymBool); ``UOp.overflows`` compares it with a dtype's bounds, which raised
  TypeError inside tinygrad's weak lowering (``weak.py:75`` at weakint)"""
  ctx = z3.Context()
  a, c = z3.BitVec("a", 130, ctx), z3.BitVec("c", 130, ctx)
  with recording(Recorder(ctx)) as rec:
    lt = SymInt(3, a) < SymInt(5, c)
    assert (lt > 0) and not (lt < 0) and (lt <= 1) and not (lt >= 2)
  taken = [cond if o else z3.Not(cond) for cond, o, _ in rec.conds]
  s = z3.Solver(ctx=ctx)
  s.add(*taken, z3.Not(a < c))   # the four decisions recorded imply the comparison: the path is kept, not lost
  assert s.check() == z3.unsat

def test_silent_concretization_never_proves_or_refutes():
  """list indexing and math.gcd read an int subclass's value without asking: the rewrite then holds a plain number that
  is right for the values run, not for the symbol. That path must not count as a proof for all constants."""
  table = list(range(256))
  leaky = Rule("test:leaky", ("test",), UPat.var("x") + UPat.cvar("c"), lambda x, c: x + table[c.arg % 256])
  v = verify_rule(leaky)
  assert v.verdict not in ("proved", "refuted"), v   # x + (c%256) is x + c only for c in [0, 256): never claimed for all
  # math.gcd reads the value directly too: x*c -> x*gcd(c, c) is x*|c|, right only for c >= 0 -- refuted (and confirmed)
  # where the symbol runs negative, never proved
  gcd = verify_rule(Rule("test:gcd", ("test",), UPat.var("x") * UPat.cvar("c"), lambda x, c: x * math.gcd(c.arg, c.arg)))
  assert gcd.verdict != "proved" and (gcd.verdict != "refuted" or gcd.counterexample["confirmed"]), gcd

def test_sound_rule_is_proved_at_every_int_dtype():
  v = verify_rule(_rule("# x*1 -> x"))
  assert v.verdict == "proved", v
  assert {"weakint", "signed char", "int", "long", "unsigned char", "unsigned long"} <= set(v.dtypes)
  # verdicts are typed (a misspelt one is a mypy error, not a silent new category), and the report keeps their words
  from uopcheck.fuzz.rule_verify import Decision
  assert isinstance(v.verdict, Decision) and all(isinstance(d, Decision) for d in v.dtypes.values())
  assert json.loads(json.dumps(v.as_json()))["verdict"] == "proved"

def test_wrong_rule_is_refuted_confirmed_and_reachable():
  v = verify_rule(_rule("# x//-1 -> -x"))
  assert v.verdict == "refuted" and v.dtypes["unsigned char"] == "refuted" and v.dtypes["int"] == "proved", v
  c = v.counterexample
  assert c["confirmed"] and c["reachable"]["reachable"], c   # numpy disagrees, and tinygrad's own simplify() makes the same mistake

def test_injected_bug_is_refuted_for_symbolic_constants():
  """a rule that is right for most constants, wrong for one: (x*c)//c -> x is refuted only where c*x wraps or c is 0.
  A handwritten mutant of a real rule: (x+c1)+c2 -> x+(c1+c2+1) if c2 == 5 else x+(c1+c2)."""
  pat = (UPat.var("x") + UPat.cvar("c1")) + UPat.cvar("c2")
  def fxn(x, c1, c2):
    return x + (c1.arg + c2.arg + (1 if c2.arg == 5 else 0))
  v = verify_rule(Rule("test:mutant", ("test",), pat, fxn))
  assert v.verdict == "refuted", v
  assert v.counterexample["constants"].get("c2", v.counterexample["constants"].get("c1")) is not None
  good = verify_rule(Rule("test:sound", ("test",), pat, lambda x, c1, c2: x + (c1.arg + c2.arg)))
  assert good.dtypes.get("weakint") == "proved", good   # weakint: mathematical integers, so the fold is sound for all c1, c2

def test_ill_typed_instances_never_refute():
  """the first design refuted POW on int constants and an Invalid compared as a weakint; neither is a well-typed integer
  instance, so neither may be refuted now"""
  for frag in ("simplify_pow", "(x*math.log2(c.val)).exp2()"):
    r = next((r for r in RULES.values() if frag in r.source or getattr(r.fxn, "__name__", "") == frag), None)
    if r is not None: assert verify_rule(r, with_floats=False).int_verdict != "refuted", r.key
  for r in RULES.values():
    if "pm_data_invalid" in r.matchers and r.matchers == ("pm_data_invalid", "symbolic_simple", "symbolic", "sym"):
      assert verify_rule(r, with_floats=False).verdict != "refuted", r.key

def test_rule_raising_only_where_the_original_is_undefined_is_not_held_against_it():
  # (x&mask)>>k raises ValueError for a negative k: but x>>k with k<0 is undefined, so those paths are harmless
  v = verify_rule(_rule('((UPat.var("x") & UPat.cvar("mask")) >> UPat.cvar("k"),'))
  assert "raises on a defined input" not in v.why, v

def test_verdicts_repeat_exactly():
  keys = ["tinygrad/uop/symbolic.py:116", "tinygrad/uop/symbolic.py:129", "tinygrad/uop/divandmod.py:95"]
  a = [{**verify_rule(RULES[k]).as_json(), "seconds": 0, "float_seconds": 0} for k in keys if k in RULES]
  b = [{**verify_rule(RULES[k]).as_json(), "seconds": 0, "float_seconds": 0} for k in keys if k in RULES]
  assert a == b and len(a) >= 2

def test_summary_counts_and_known_list():
  vs = [verify_rule(_rule("# x//-1 -> -x")), verify_rule(_rule("# x*1 -> x"))]
  s = summary(vs, {})
  assert s["refuted_new"] == [vs[0].rule] and s["proved"] == 1 and s["decided_fraction"] == 1.0
  assert summary(vs, {vs[0].rule: "reviewed"})["refuted_new"] == []

def test_weakint_past_its_bit_vector_width_is_no_verdict_never_a_vacuous_pass():
  """under weak_bits an overflowing weakint would be *undefined*, making the refinement hold there vacuously: x*x//16384
  -> x//128 holds exactly while x*x fits 16 bits (x <= 181), so weak_bits=16 must give no verdict (it once said proved);
  a constant past the width is no verdict either"""
  from uopcheck.spec.z3model import check_rewrite, Refuted, Unknown
  x = UOp.variable("x", 0, 1000, dtypes.weakint)
  before, after = (x * x) // 16384, x // 128
  assert isinstance(check_rewrite(before, after), Refuted)
  r = check_rewrite(before, after, weak_bits=16)
  assert isinstance(r, Unknown) and "exact range" in r.why, r
  y = UOp.variable("y", 0, 181, dtypes.weakint)
  assert str(check_rewrite((y * y) // 16384, y // 128, weak_bits=16)) == "proved"   # fits: decided as before
  assert isinstance(check_rewrite(y // 40000, UOp.const(0, dtypes.weakint), weak_bits=16), Unknown)   # 40000 needs 17 bits

def test_rule_budget_charges_each_z3_context_once():
  """z3's "rlimit count" is cumulative per context; the budget must charge its growth, not the running total per solver"""
  from uopcheck.fuzz.rule_verify import Budget
  ctx = z3.Context()
  x, y = z3.BitVec("x", 32, ctx), z3.BitVec("y", 32, ctx)
  budget = Budget(10, 10**12)
  for k in range(3):
    s = z3.SolverFor("QF_BV", ctx=ctx)
    s.add(x * y == 12345 + k, z3.UGT(x, 3), z3.UGT(y, 3))
    s.check()
    budget.charge(s)
  total = int(s.statistics().get_key_value("rlimit count"))
  assert 10**12 - budget.rlimit == total

def test_instance_space_says_when_it_was_capped():
  """the distinct instances are counted (two plans building one instance count once), and a cap that leaves one out
  says so: a verdict over the instances seen is then not a verdict over the rule"""
  from uopcheck.fuzz.rule_verify import Instances
  class Built:
    def __init__(self, plan):
      self.taken = [(plan[0] if plan else 0, 6)]    # one choice point with 6 options ...
      self.shape = (plan[0] if plan else 0) // 2    # ... building 3 distinct instances
  full = Instances(Built, 3)
  assert [b.shape for _, b in full] == [0, 1, 2] and not full.capped and full.count == 3
  cut = Instances(Built, 2)
  assert [b.shape for _, b in cut] == [0, 1] and cut.capped and cut.count == 2

def test_a_rule_checked_on_part_of_its_instances_is_never_proved():
  """x.cast(a).cast(b) has dozens of instance shapes per dtype (the dtypes of x and a): proved on the first few is
  'bounded', with the count; at the default cap every shape is checked and the verdict is a proof again (before, the
  first 8 shapes were all that was checked, and the rule was reported proved)"""
  rule = _rule("UPat.var('x').cast(name=\"a\").cast(name=\"b\")")
  few = verify_rule(rule, plan_budget=4, with_floats=False)
  assert few.dtypes and "proved" not in few.dtypes.values(), few
  assert "proved on the first 4 of its instance shapes; more exist" in few.why
  whole = verify_rule(rule, with_floats=False)
  assert whole.dtypes["int"] == "proved" and "more exist" not in whole.why, whole

def test_a_counterexample_numpy_cannot_hold_is_sought_again_inside_int64():
  """max folding of two weak constants beside an int32 MAX: z3's first counterexample had a weak constant of 2**64-1,
  past the int64 the numpy spec holds weakint in, so it could not be confirmed ('unknown'); asked again inside int64 it
  finds one numpy confirms. At int64 the difference needs a weak constant past int64 itself: it stays unconfirmed"""
  v = verify_rule(next(r for r in RULES.values() if r.key.endswith("symbolic.py:267#2")), with_floats=False)
  assert v.dtypes["int"] == "refuted" and v.dtypes["long"] == "unknown", v
  assert "not confirmed" in v.why and "long:" in v.why

def test_builder_makes_only_nodes_tinygrad_would_type_so():
  """a char ADD of two weakint operands passes type_verify, but tinygrad's dtype_from_uop gives weakint: not an instance
  (it once refuted y*(x+c) -> y*x+y*c with a dtype change that tinygrad can never meet)"""
  from uopcheck.fuzz.rule_verify import Builder, NoInstance
  with pytest.raises(NoInstance, match="tinygrad makes weakint"):
    Builder._alu(Ops.ADD, dtypes.int8, [UOp.variable("a", 0, 3, dtypes.weakint), UOp.const(1, dtypes.weakint)])
  assert Builder._alu(Ops.ADD, dtypes.int8, [UOp.variable("a", 0, 3, dtypes.int8), UOp.const(1, dtypes.weakint)]).dtype == dtypes.int8

def test_wide_division_by_a_variable_is_decided_at_every_dtype():
  """(x%y)%y at int64/uint64: the bit-blasted division spent the whole rule budget ("bounded"); the exact-Int encoding
  goes first for a 32/64-bit division by a non-constant and proves it at every dtype"""
  v = verify_rule(_rule("(x%y)%y"))
  assert v.verdict == "proved", v
  assert {"long", "unsigned long", "int", "unsigned char"} <= set(v.dtypes)

def test_a_rule_fixed_to_weakint_gets_no_sized_dtype_verdict():
  """commutative's UPat is ``dtype=dtypes.weakint``: an instance built for int16 was the weakint instance again (in the
  slower bit-vector encoding) and its budget verdict was reported as int16's"""
  v = verify_rule(next(r for r in RULES.values() if "commutative" in r.matchers and "GroupOp.Commutative" in r.source))
  assert set(v.dtypes) == {"weakint"} and v.verdict == "proved", v

# ** the codegen integer pipeline **

def test_pipeline_runs_every_stage_and_lowers_to_sized_ints():
  a = UOp.variable("a0", -100, 100)
  steps = run_pipeline(pipeline_root((a * 3 + 7) // 4))
  assert [n for n, _ in steps] == ["extra symbolic", "lower all index dtypes", "final symbolic", "early decompositions",
                                   "decomp dtypes", "late decompositions"]
  final = steps[-1][1]
  assert dtypes.weakint not in {u.dtype for u in final.toposort()}

def test_pipeline_refutes_a_shift_of_a_negative_under_c_and_not_under_wrap():
  e = UOp.variable("a0", -300, 300) * 4294967296   # late decompositions: (long)a0 << 32, UB in C for a0 < 0
  v, final, stage = check_pipeline(e, OverflowReading.UNDEFINED)
  assert v.kind == "refuted" and stage == "late decompositions", (v, stage)
  assert confirm(pipeline_root(e), final, v, OverflowReading.UNDEFINED) is None   # numpy agrees that it is UB there
  assert check_pipeline(e, OverflowReading.WRAP)[0].kind == "proved"

def test_a_lowered_constant_its_dtype_cannot_hold_gets_the_spec_s_verdict():
  """(int)(a0+2147483648) lowers to a0 + CONST(int32, 2147483648). The spec reads the constant wrapped, as tinygrad states
  its emission (uop/weak.py:11; README, "the spec's decision"), so at a0 = -10 the lowered add overflows where the original
  is 2147483638: refuted under C's reading and confirmed by numpy, proved under wrap-around. (It was "unknown:
  renderer-dependent" before the decision.)"""
  e = UOp.variable("a0", -10, 10) + 2147483648
  v, final, stage = check_pipeline(e, OverflowReading.UNDEFINED)
  assert any(u.op is Ops.CONST and u.dtype == dtypes.int32 and u.arg == 2147483648 for u in final.toposort()), final
  assert v.kind == "refuted" and stage is not None, (v, stage)
  assert confirm(pipeline_root(e), final, v, OverflowReading.UNDEFINED) is None
  assert check_pipeline(e, OverflowReading.WRAP)[0].kind == "proved"

def test_pipeline_proves_plain_index_math():
  r = UOp.variable("a0", 0, 1000)
  for e in (r * 4 + 3, (r // 8) * 8 + r % 8, r % 16):
    assert check_pipeline(e, OverflowReading.UNDEFINED)[0].kind in ("proved", "unchanged"), e.render(simplify=False)

def test_the_symbolic_constant_meets_the_protocol_spec_declares():
  """spec/ reads a symbolic constant's term through ``spec.z3model.SymbolicConst`` (declared there), never fuzz/'s class"""
  from uopcheck.spec.z3model import SymbolicConst, term_of
  t = z3.Int("c0")
  assert isinstance(SymInt(3, t), SymbolicConst) and term_of(SymInt(3, t)) is t
  assert term_of(3) is None and not isinstance(3, SymbolicConst)

def test_every_rule_given_its_own_budget_exists():
  """RULE_BUDGET_SCALE and RULE_PATH_BUDGET name rules by key: a key that names no rule (tinygrad moved a line) would
  silently drop the budget"""
  from uopcheck.settings import RULE_BUDGET_SCALE, RULE_PATH_BUDGET
  from uopcheck.fuzz.rule_verify import all_rules
  keys = {r.key for r in all_rules()}
  for named in (RULE_BUDGET_SCALE, RULE_PATH_BUDGET): assert named and set(named) <= keys, set(named) - keys

def test_an_instance_the_budget_stopped_before_the_rule_fired_is_never_n_a():
  """The rule below fires only where c == 12345, not at the first values run: with no budget left to flip that decision,
  the instance is undecided -- it was 'n/a' ("the rule never fires"), and a dtype whose other instances were proved was
  then reported proved without it (``symbolic.py:257`` at int8: two of its five instance shapes never explored)"""
  from uopcheck.fuzz.rule_verify import explore, Budget, Decision
  rule = Rule("test:late", ("test",), UPat.var("x") + UPat.cvar("c"), lambda x, c: x if c.arg == 12345 else None)
  cut = explore(rule, dtypes.int32, (), z3.Context(), queries=Budget(0, 0))
  assert cut.fired == 0 and cut.verdict == Decision.BOUNDED, cut
  whole = explore(rule, dtypes.int32, (), z3.Context())
  assert whole.verdict == Decision.REFUTED, whole   # x+12345 is not x: with a budget the flip is run and refutes it

def test_a_raising_rule_is_bounded_by_the_budget_and_never_read_off_its_message():
  """a path on which the rule raises is undecided for a typed cause (``Undecided``), no longer by matching words of the
  message: with the budget spent before z3 could tell whether the input is defined, the instance is bounded by the
  budget (it was 'unknown': the message said "the rule raised"); with budget, a raise on a defined input is reported
  as such"""
  from uopcheck.fuzz.rule_verify import explore, Budget, Decision
  rule = Rule("test:raises", ("test",), UPat.var("x") + UPat.cvar("c"), lambda x, c: 1 // 0)
  spent = explore(rule, dtypes.int32, (), z3.Context(), queries=Budget(0, 0))
  assert spent.verdict == Decision.BOUNDED and "budget" in spent.why and "ZeroDivisionError" in spent.why, spent
  raised = explore(rule, dtypes.int32, (), z3.Context())
  assert raised.verdict == Decision.BOUNDED and raised.why.startswith("the rule raises on a defined input"), raised

def test_no_dtype_is_left_out_of_the_table_for_want_of_budget(monkeypatch):
  """a rule's budget is spent dtype after dtype: the dtypes it no longer reaches are undecided, never left out of the
  rule x dtype table as n/a (the rule below fires only at c == 12345, so every instance needs a flip to fire)"""
  import uopcheck.fuzz.rule_verify as rv
  rule = Rule("test:late", ("test",), UPat.var("x") + UPat.cvar("c"), lambda x, c: x if c.arg == 12345 else None)
  monkeypatch.setattr(rv, "MAX_QUERIES", 3)
  v = verify_rule(rule, with_floats=False)
  assert {"weakint", "int", "long", "unsigned long"} <= set(v.dtypes) and v.dtypes["unsigned long"] == "bounded", v
  assert "proved" not in v.dtypes.values(), v

def test_a_rule_dividing_by_a_symbol_is_explored_with_exact_ints():
  """c0*x<c1 -> x<ceil(c1/|c0|) divides by the symbol |c0| in its own code: as 130-bit vectors one instance cost 96M
  resource units and the rule stayed 'bounded' at every sized dtype; as exact Ints it is proved at all of them"""
  from uopcheck.fuzz.rule_verify import divides_symbols, run_rule
  rule = RULES["tinygrad/uop/symbolic.py:275"]
  _, res = run_rule(rule, dtypes.int8, (), {}, z3.Context())
  assert divides_symbols(res)
  _, plain = run_rule(_rule("# x*1 -> x"), dtypes.int8, (), {}, z3.Context())
  assert not divides_symbols(plain)
  v = verify_rule(rule, with_floats=False)
  assert v.verdict == "proved" and {"weakint", "signed char", "unsigned long"} <= set(v.dtypes), v

def test_a_cheap_refutation_is_reached_past_costly_instances():
  """fold_const_alu over 16 binary ops: FLOORMOD and MUL instances spent the rule's whole budget at weakint and int8, so
  no sized dtype was decided; the scouting pass reaches the CDIV/MAX counterexamples (a weak constant outside the node's
  dtype, folded before it is committed) at every sized int, each confirmed by numpy"""
  v = verify_rule(RULES["tinygrad/uop/symbolic.py:150"], with_floats=False)
  sized = ["signed char", "short", "int", "long", "unsigned char", "unsigned short", "unsigned int", "unsigned long"]
  assert all(v.dtypes[d] == "refuted" for d in sized), v.dtypes
  assert v.counterexample["confirmed"] and v.dtypes["bool"] == "proved", v

def test_a_dtype_a_scout_refuted_spends_no_full_budget_on_the_instances_before_it(monkeypatch):
  """a refutation decides its dtype (refuted is the worst verdict): the scouting pass found one at an instance past an
  undecided one, and the real pass still gave that undecided instance the rule's full budget -- z3 time and budget the
  dtypes after it then lacked. Here ``explore`` is replaced: each dtype's first instance is never decided, its second
  refutes at once"""
  import uopcheck.fuzz.rule_verify as rv
  order: dict[str, list] = {}
  full_budget_on_the_undecided_one: list[str] = []
  def explore(rule, dt, plan, ctx, budget=0, queries=None, int_syms=False):
    seen = order.setdefault(dt.name, [])
    if plan not in seen: seen.append(plan)
    if (i := seen.index(plan)) == 0:
      if queries.parent is None: full_budget_on_the_undecided_one.append(dt.name)
      return rv.InstanceVerdict(rv.Decision.UNKNOWN, why="z3: canceled")
    if i == 1: return rv.InstanceVerdict(rv.Decision.REFUTED, why="values differ", counterexample={"confirmed": True})
    return rv.InstanceVerdict(rv.Decision.PROVED)
  monkeypatch.setattr(rv, "explore", explore)
  v = verify_rule(RULES["tinygrad/uop/symbolic.py:140"], with_floats=False)
  two = [d for d, plans in order.items() if len(plans) >= 2]
  assert "long" in two and all(v.dtypes[d] == "refuted" for d in two), (v.dtypes, order)
  assert not set(full_budget_on_the_undecided_one) & set(two), full_budget_on_the_undecided_one
  assert "weakint" not in two and v.dtypes["weakint"] == "unknown"   # one instance, never decided: the real pass tried it

def test_ternary_constant_folds_are_proved_at_every_int_dtype():
  """fold_const_alu over WHERE and MULACC: undecided at every sized int while each MULACC path condition held a 130-bit
  multiply-overflow guard; with magnitude bounds the guard is gone and the fold is proved at every dtype"""
  v = verify_rule(RULES["tinygrad/uop/symbolic.py:151"], with_floats=False)
  assert v.verdict == "proved" and {"signed char", "long", "unsigned long", "bool"} <= set(v.dtypes), v

def _instance(rule:Rule, dt, op):
  """the first instance of ``rule`` at ``dt`` whose root is ``op``, as verify_rule builds it"""
  from uopcheck.fuzz.rule_verify import run_rule, Instances, NoInstance, divides_by_variable, _plain_shape
  ctx = z3.Context()
  def make(plan):
    try: b, res = run_rule(rule, dt, plan, {}, ctx)
    except NoInstance: return None
    b.res, b.shape = res, _plain_shape(res.before)
    return b
  plan, b = next((p, b) for p, b in Instances(make, 64) if b.res.before is not None and b.res.before.op is op)
  return plan, b, ctx, divides_by_variable(b.res.before)

def test_two_decisions_compared_are_one_recorded_decision():
  """``x.vmin == x.vmax`` of a comparison node compares two SymBools: Python compared the objects (always unequal), so
  vmin == vmax folding (``symbolic.py:257``) never fired on CMPLT/CMPNE and those instances were silently 'n/a'"""
  from uopcheck.fuzz.rule_verify import explore, Decision
  rule = RULES["tinygrad/uop/symbolic.py:257"]
  for op in (Ops.CMPLT, Ops.CMPNE):
    plan, _, ctx, _ = _instance(rule, dtypes.int8, op)
    v = explore(rule, dtypes.int8, plan, ctx)
    assert v.fired > 0 and v.verdict == Decision.PROVED, (op, v)

def test_range_analysis_of_a_division_by_a_variable_is_explored_with_exact_ints():
  """vmin == vmax folding of x//y at int8 reads tinygrad's range analysis, which divides bounds by bounds: as 130-bit
  vectors 4 paths spent the rule's whole budget; with exact Int symbols its 37 paths are proved"""
  from uopcheck.fuzz.rule_verify import explore, Decision, Budget
  rule = RULES["tinygrad/uop/symbolic.py:257"]
  plan, _, ctx, by_variable = _instance(rule, dtypes.int8, Ops.FLOORDIV)
  assert by_variable
  v = explore(rule, dtypes.int8, plan, ctx, budget=64, queries=Budget(2400, 60_000_000), int_syms=True)
  assert v.verdict == Decision.PROVED and v.paths > 24, v   # more paths than the default budget: the rule names its own

def test_a_bool_variable_lies_inside_its_declared_range_in_z3():
  """a bool variable had no bounds in the z3 model: z3 then refuted vmin == vmax folding at bool with p1=True where the
  range was [False, False], a counterexample the confirmation rejected ('unknown')"""
  from uopcheck.spec.z3model import Z3Model, check_rewrite, Proved
  p = UOp.variable("p1", False, False, dtypes.bool)
  m = Z3Model(OverflowReading.UNDEFINED)
  v, _ = m.translate(p)
  s = z3.Solver(ctx=m.ctx)
  s.add(*m.bounds, v)
  assert s.check() == z3.unsat
  assert isinstance(check_rewrite(p, p.const_like(False), OverflowReading.UNDEFINED), Proved)

def test_a_bool_operand_has_symbolic_bounds_like_any_variable():
  """a bool variable was built with the fixed range [False, True], so a rule reading a bool operand's vmin/vmax never saw
  a narrower one: vmin == vmax folding of a comparison of two bools never fired ('n/a'). In tinygrad a bool operand is a
  comparison, whose range may be one value."""
  from uopcheck.fuzz.rule_verify import explore, Decision
  rule = RULES["tinygrad/uop/symbolic.py:257"]
  for op in (Ops.CMPLT, Ops.CMPNE):
    plan, b, ctx, _ = _instance(rule, dtypes.bool, op)
    assert all(0 <= int.__int__(s) <= 1 for s in b.syms.values()), b.syms   # the first run's values lie in the domain
    v = explore(rule, dtypes.bool, plan, ctx)
    assert v.fired > 0 and v.verdict == Decision.PROVED, (op, v)

def test_rules_verify_workers_die_with_their_parent():
  """a ``rules verify`` killed by its pid (a script's ``kill``, ``kill -9``) left its pool workers computing to the end of
  their rule -- minutes of z3 for ``symbolic.py:140`` -- as they ignore SIGINT by design; they now die with it"""
  import os, signal, subprocess, sys, time
  code = ("from uopcheck.settings import apply_environment; apply_environment()\n"
          "from uopcheck.fuzz.rule_verify import verify_all\n"
          "verify_all(['tinygrad/uop/symbolic.py:140'], workers=1, progress=False)")
  parent = subprocess.Popen([sys.executable, "-c", code])
  def children() -> list[int]:
    out = []
    for d in os.listdir("/proc"):
      try: fields = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
      except (OSError, IndexError): continue
      if d.isdigit() and int(fields[1]) == parent.pid and fields[0] != "Z": out.append(int(d))
    return out
  def running(pid:int) -> bool:
    try: return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError: return False
  try:
    deadline = time.time() + 60
    while not (workers := children()) and time.time() < deadline: time.sleep(0.2)
    assert workers, "no pool worker started"
    time.sleep(3)   # the worker is inside its rule
  finally:
    parent.send_signal(signal.SIGKILL)
    parent.wait()
  deadline = time.time() + 10
  while any(running(w) for w in workers) and time.time() < deadline: time.sleep(0.2)
  left = [w for w in workers if running(w)]
  for w in left: os.kill(w, signal.SIGKILL)
  assert not left, "a pool worker outlived its killed parent"
