"""Bounded model checking of the memory, Invalid-gate, range, reduction, stack and weak-commit rules (fuzz/bounded_verify.py):
tinygrad's own rules come out bounded, and a mutant of each kind -- one wrong lane, one wrong address, one masked lane
made live, one range fold off by one -- is refuted and confirmed."""
from __future__ import annotations
import numpy as np
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, UPat
from tinygrad.dtype import dtypes, Invalid
from uopcheck.fuzz.rule_verify import all_rules, Rule, verify_rule, summary
from uopcheck.fuzz.bounded_verify import verify_bounded_rule, no_value_semantics, check_instance, BoundedBuilder, K, SPACES
from uopcheck.fuzz.rule_verify import estimate_plans

RULES = {r.key: r for r in all_rules()}
def _rule(line:str) -> Rule: return RULES[f"tinygrad/uop/{line}"]

invalid_pat = UPat(Ops.CONST, arg=Invalid, name="i")
invalid_gate = UPat.var("cond").where(UPat.var("x"), invalid_pat)

def _verdicts(rule:Rule) -> dict[str, str]: return {k: v.verdict for k, v in verify_bounded_rule(rule).items()}

def test_store_of_its_own_load_is_bounded_at_every_element_dtype():
  out = verify_bounded_rule(_rule("symbolic.py:452"))   # store(idx, load(idx)) -> NOOP
  assert {k: v.verdict for k, v in out.items()} == {"weakint": "bounded", "int": "bounded", "float": "bounded"}, out
  assert all(v.fired > 0 and v.complete for v in out.values()), out

def test_a_store_to_the_next_address_is_refuted_and_confirmed():
  pat = UPat.store(UPat(Ops.INDEX, name="index"), UPat.var("v"))
  bad = Rule("test:store-next", ("test",), pat,
             lambda index, v: index.src[0].index(index.src[1] + 1).store(v) if index.src[1].op is not Ops.ADD else None)
  out = verify_bounded_rule(bad)
  v = next(v for v in out.values() if v.verdict == "refuted")
  assert v.counterexample["confirmed"], v
  good = Rule("test:store-same", ("test",), pat,
              lambda index, v: index.src[0].index(index.src[1] + 0).store(v) if index.src[1].op is not Ops.ADD else None)
  assert set(_verdicts(good).values()) == {"bounded"}

def test_a_masked_lane_made_live_is_refuted():
  """cond.where(x, Invalid)+y -> cond.where(x+y, y): where cond is false the original is Invalid, the rewrite a value"""
  pat = UPat(Ops.ADD, src=(invalid_gate, UPat.var("y")), name="alu")
  bad = Rule("test:unmask", ("test",), pat, lambda cond, x, y, alu, i: cond.where(x + y, y))
  out = verify_bounded_rule(bad)
  assert "refuted" in {v.verdict for v in out.values()}, out
  cex = next(v.counterexample for v in out.values() if v.verdict == "refuted")
  assert cex["value_before"] == "Invalid" and cex["value_after"] != "Invalid" and cex["confirmed"], cex
  assert set(_verdicts(_rule("symbolic.py:80")).values()) == {"bounded"}   # tinygrad's own: the op moves inside the gate

def test_a_gated_load_s_alternative_is_what_the_masked_lane_reads():
  pat = UPat(Ops.LOAD, src=(UPat(Ops.INDEX, src=(UPat(), invalid_pat)),), allow_any_len=True, name="x")
  bad = Rule("test:alt-one", ("test",), pat, lambda x, i: x.const_like(1))   # tinygrad's rule gives alt or 0
  assert "refuted" in _verdicts(bad).values()
  assert set(_verdicts(_rule("symbolic.py:94")).values()) == {"bounded"}

def test_range_folds_are_bounded_and_an_off_by_one_is_refuted():
  assert _verdicts(_rule("symbolic.py:290")) == {"weakint": "bounded"}   # r % end -> r, with a variable end
  pat = UPat(Ops.RANGE, src=UPat.var("end"), name="r") // UPat.var("end")
  assert _verdicts(Rule("test:range-div", ("test",), pat, lambda r, end: r.const_like(1))) == {"weakint": "refuted"}

def test_a_reduction_rewrite_is_checked_lane_by_lane():
  # sum(x*c) -> sum(x)*c: right for ints; for floats only the sign of a zero moves (the sum starts at +0.0, x*c may be -0.0)
  out = verify_bounded_rule(_rule("symbolic.py:468"))
  assert out["weakint"].verdict == out["int"].verdict == "bounded", out
  f = out["float"]
  assert f.verdict == "refuted" and f.counterexample["zero_sign_only"] and f.counterexample["confirmed"], f
  pat = (UPat.var("x") * UPat.cvar("c")).reduce(arg=Ops.ADD, name="r", allow_any_len=True)
  bad = Rule("test:reduce-drop-c", ("test",), pat, lambda x, c, r: r.replace(src=(x,) + r.src[1:]))   # forgets the constant
  assert "refuted" in _verdicts(bad).values()

def test_stores_commit_their_value_at_the_buffer_s_dtype():
  """weak.py:36 commits a weak float stored to an int buffer; the spec's cast leaves inf undefined there, so the rule is
  bounded -- storing raw numpy bits (inf -> INT_MIN) once made this a false refutation"""
  assert set(_verdicts(_rule("weak.py:36")).values()) == {"bounded"}

def test_rules_with_no_value_semantics_say_why_and_others_do_not():
  for line in ("symbolic.py:304", "symbolic.py:308", "symbolic.py:435", "symbolic.py:436"):
    assert "no value semantics" in (no_value_semantics(_rule(line)) or ""), line
  assert no_value_semantics(_rule("symbolic.py:452")) is None

def test_evaluator_treats_invalid_as_a_value_of_its_own():
  v = UOp.variable("v1", 0, K)
  c = UOp.variable("b1", False, True, dtypes.bool)
  assert check_instance(v.valid(c), v)[0] == "refuted"           # a masked lane made live
  assert check_instance(v.valid(c) + 1, (v + 1).valid(c))[0] == "bounded"
  assert check_instance(v.valid(c), v.valid(c.logical_not()))[0] == "refuted"

def test_builder_spans_the_stated_bound():
  b = BoundedBuilder(())
  x = b.variable(dtypes.weakint)
  assert x.op is not Ops.CONST and -K <= x.vmin <= x.vmax <= K
  assert np.all([abs(c) <= K for c in (x.vmin, x.vmax)])

def test_full_verdict_carries_the_bounded_part_and_the_summary_counts_it():
  vs = [verify_rule(_rule("symbolic.py:452")), verify_rule(_rule("symbolic.py:468")), verify_rule(_rule("symbolic.py:435"))]
  assert [v.verdict for v in vs] == ["bounded", "refuted", "n/a"], vs
  assert vs[0].bounded_verdict == "bounded" and vs[0].int_verdict == vs[0].float_verdict == "n/a"
  s = summary(vs, {})
  assert s["bounded_rules"] == 2 and s["bounded_bounded"] == 1 and s["bounded_refuted"] == 1
  assert s["refuted_new"] == ["bounded:tinygrad/uop/symbolic.py:468"] and s["no_verdict"] == ["tinygrad/uop/symbolic.py:435"]
  assert "no value semantics" in s["no_verdict_why"]["tinygrad/uop/symbolic.py:435"]
  assert summary(vs, {"bounded:tinygrad/uop/symbolic.py:468": "reviewed"})["refuted_new"] == []

def test_knuth_estimate_is_exact_on_a_uniform_tree_and_seeded():
  """every descent of a tree with 3 then 4 options has the product 12: the estimate is exact, and the same each run"""
  def make(rng):
    b = BoundedBuilder(())
    b.rng = rng
    b.choose([1, 2, 3]), b.choose("abcd")
    return b
  assert estimate_plans(make, 20, "seed") == 12.0
  def uneven(rng):   # 1 leaf under the first option, 9 under the second: 10 leaves; the estimate varies but is seeded
    b = BoundedBuilder(())
    b.rng = rng
    if b.choose([0, 1]) == 1: b.choose(list(range(9)))
    return b
  assert estimate_plans(uneven, 50, "s") == estimate_plans(uneven, 50, "s")
  assert 7 < estimate_plans(uneven, 400, "s") < 13   # mean 10, the mean of 400 descents within 3 of it

def test_a_space_past_its_cap_falls_back_to_a_smaller_one_and_says_which():
  """symbolic.py:80 (a binary op moves inside an Invalid gate) has ~400K plans at weakint in the k=2 space: it is checked
  completely in a smaller one, labelled; with every cap at 50 plans no space fits and the verdict says it was cut"""
  out = verify_bounded_rule(_rule("symbolic.py:80"))
  assert all(v.verdict == "bounded" and v.complete for v in out.values()), out
  assert out["weakint"].space in {s.label for s in SPACES[1:]}, out
  cut = verify_bounded_rule(_rule("symbolic.py:80"), cap=50)
  assert all(v.space == SPACES[-1].label and not v.complete and "first 50 plans" in v.why for v in cut.values()), cut
  v = verify_rule(_rule("symbolic.py:80"), with_floats=True)
  assert set(v.bounded_spaces) == {"weakint", "int", "float"} and v.bounded_complete, v

def test_lowering_a_weak_left_shift_of_a_negative_value_is_refuted_under_c_s_reading():
  """weak.py:59 (lower_weak_node) lowers a weakint SHL of two int32 values taken as weak to a long SHL: weakint -1 << 0 is
  -1, while C leaves a left shift of a negative long undefined (C11 6.5.7p4; clang's -fsanitize=shift agrees). Found in the
  plain space, which has the (weakint)int operand shape; the wrap reading is fine."""
  out = verify_bounded_rule(_rule("weak.py:59"))
  v = out["weakint"]
  assert v.verdict == "refuted" and v.counterexample["confirmed"] and v.counterexample["reading"] == "undefined", v
  assert "<<" in v.counterexample["before"] and v.counterexample["assignment"]["v1"] < 0, v.counterexample
  assert out["int"].verdict == "bounded", out
