"""z3-backed symbolic checks: the model's semantics, refinement, vmin/vmax soundness, the weakint boundary,
and replay of the symbolic findings shipped in fuzz/findings/ (each a real tinygrad 0.14.0 bug: xfail strict)."""
from __future__ import annotations
import json, pathlib
import pytest
from hypothesis import given, settings, HealthCheck
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec import SpecError
from uopcheck.spec.ints import OverflowReading
from uopcheck.spec.z3model import check_rewrite, check_bounds, Proved, Refuted, Unknown
from uopcheck.fuzz.symbolic import int_expr, check_expr, load_findings, replay, save_finding
from uopcheck.fuzz.exhaustive import exhaustive_check

FINDINGS = pathlib.Path(__file__).resolve().parent.parent / "fuzz" / "findings"
W, U = OverflowReading.WRAP, OverflowReading.UNDEFINED

def test_symbolic_model_proves_sound_and_refutes_unsound():
  a = UOp.variable("a", -5, 10)
  assert isinstance(check_rewrite((a * 3 + 7) // 3, a + 2), Proved)
  r = check_rewrite((a * 3 + 7) // 3, a + 3)
  assert isinstance(r, Refuted) and r.reason == "values differ" and r.before != r.after

def test_symbolic_signed_overflow_has_two_readings():
  x = UOp.variable("x", 0, 2**31 - 1, dtype=dtypes.int32)
  assert isinstance(check_rewrite((x + 1) - 1, x, U), Proved)     # removes an overflow: a refinement
  r = check_rewrite(x, (x + 1) - 1, U)                             # introduces one: refuted under C's reading...
  assert isinstance(r, Refuted) and "introduces UB" in r.reason and r.assignment == {"x": 2**31 - 1}
  assert isinstance(check_rewrite(x, (x + 1) - 1, W), Proved)     # ...but sound under wrap-around

def test_symbolic_division_semantics():
  x = UOp.variable("x", -20, 20, dtype=dtypes.int32)
  # CDIV truncates, FLOORDIV floors: they differ for negative x
  r = check_rewrite(x // 4, x.alu(Ops.CDIV, UOp.const(4, dtypes.int32)))
  assert isinstance(r, Refuted) and r.assignment["x"] < 0 and r.assignment["x"] % 4 != 0
  y = UOp.variable("y", -3, 3, dtype=dtypes.int32)
  r = check_rewrite(x + y - y, (x * y) // y, W)
  assert isinstance(r, Refuted) and "UB" in r.reason and r.assignment["y"] == 0  # division by zero is undefined

def test_symbolic_dtype_change_is_refuted():
  x = UOp.variable("x", 0, 10, dtype=dtypes.int32)
  r = check_rewrite(x, x.cast(dtypes.int64))
  assert isinstance(r, Refuted) and "changes the dtype" in r.reason

def test_symbolic_unsupported_is_unknown_not_a_pass():
  f = UOp.variable("f", 0, 1, dtype=dtypes.float32)
  assert isinstance(check_rewrite(f + 0.0, f), Unknown)

def test_symbolic_vmin_vmax_sound_on_weakint():
  a, b = UOp.variable("a", -7, 9), UOp.variable("b", 1, 5)
  for e in [a * b + 3, (a // b) % 4, a.maximum(b) - b, (a < b).where(a, b * 2)]:
    assert isinstance(check_bounds(e, e.vmin, e.vmax), Proved), e.render(simplify=False)

@pytest.mark.xfail(strict=True, reason="tinygrad 0.14.0: vmin/vmax of a uint subtraction ignores wrap-around")
def test_symbolic_vmin_vmax_of_uint_wraparound():
  u = UOp.variable("u", 0, 3, dtype=dtypes.uint32)
  e = u - 1
  assert isinstance(check_bounds(e, e.vmin, e.vmax), Proved), f"claims [{e.vmin}, {e.vmax}]"

@pytest.mark.xfail(strict=True, reason="tinygrad 0.14.0: vmin/vmax of a narrowing cast assumes the value fits")
def test_symbolic_vmin_vmax_of_narrowing_cast():
  a = UOp.variable("a", 0, 2**32)
  e = a.cast(dtypes.int32)
  assert isinstance(check_bounds(e, e.vmin, e.vmax), Proved), f"claims [{e.vmin}, {e.vmax}]"

def test_symbolic_weak_lowering_of_index_math_is_sound():
  """'lower, then run' == the mathematical weakint value, for index-like expressions (tinygrad picks int32/int64 from bounds)."""
  from tinygrad.uop.ops import graph_rewrite
  from tinygrad.uop.weak import pm_lower_index_dtype
  a, b = UOp.variable("a", 0, 2**20), UOp.variable("b", 0, 4096)
  for e in [a * 4096 + b, a * 3 - b, (a + b) // 8]:
    lowered = graph_rewrite(e.cast(dtypes.int64), pm_lower_index_dtype, ctx={})
    assert lowered.dtype == dtypes.int64
    assert isinstance(check_rewrite(e.cast(dtypes.int64), lowered, U, timeout_ms=20000, weak_bits=96), Proved), lowered.render(simplify=False)

def test_symbolic_exhaustive_and_z3_agree():
  a = UOp.variable("a", -20, 20, dtype=dtypes.int8)
  for before, after in [((a * 3) // 3, a), (a + 0, a), (a.maximum(a), a)]:
    ex = exhaustive_check(before, after, ub_is_undefined=False)
    z = check_rewrite(before, after, W)
    assert ex is not None and ex[0] == isinstance(z, Proved), (before.render(simplify=False), ex, z)

@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(int_expr(depth=3, dt=dtypes.weakint))
def test_symbolic_fuzz_check_runs(e):
  """The checker returns a verdict for every random weakint expression (a refutation here is reported, not hidden)."""
  v, s = check_expr(e, W, timeout_ms=1000)
  assert v.kind in ("proved", "refuted", "unknown", "unchanged")
  if v.kind == "proved" and v.how == "exhaustive": assert exhaustive_check(e, s, limit=1 << 20, ub_is_undefined=False)[0]

def test_symbolic_corrupt_finding_file_is_named(tmp_path):
  (tmp_path / "symbolic-deadbeef.json").write_text("{not json")
  with pytest.raises(SpecError, match=r"symbolic-deadbeef.json: corrupt finding file"): load_findings(tmp_path)

def test_symbolic_save_finding_keeps_the_smaller(tmp_path):
  d = {"expr": "ast = " + "x" * 50, "reason": "values differ", "dtype": "dtypes.int", "rule": "r:1", "simplified": "", "reading": "wrap"}
  assert save_finding(d, tmp_path) is not None
  assert save_finding({**d, "expr": "ast = " + "x" * 80}, tmp_path) is None
  assert save_finding({**d, "expr": "ast = x"}, tmp_path) is not None
  assert json.loads(next(tmp_path.glob("*.json")).read_text())["expr"] == "ast = x"

SHIPPED = load_findings(FINDINGS) if FINDINGS.exists() else []

def test_symbolic_findings_corpus_is_shipped():
  assert len(SHIPPED) >= 3, "fuzz/findings/ should hold the symbolic findings found so far"
  assert all(d.get("confirmed_by_numpy") for _, d in SHIPPED), "every shipped finding is confirmed by the numpy semantics too"

@pytest.mark.parametrize("path,finding", SHIPPED, ids=[p.name for p, _ in SHIPPED])
@pytest.mark.xfail(strict=True, reason="a real tinygrad 0.14.0 unsound simplification (fuzz/findings/)")
def test_symbolic_replay_finding(path, finding):
  v = replay(finding)
  assert v.kind in ("proved", "unchanged"), f"{finding['rule']}: {v.detail}"
