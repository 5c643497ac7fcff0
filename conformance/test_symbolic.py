"""z3-backed symbolic checks: the model's semantics, refinement, vmin/vmax soundness, the weakint boundary,
and replay of the symbolic findings shipped in fuzz/findings/ (each a real tinygrad 0.14.0 bug: xfail strict)."""
from __future__ import annotations
import json, pathlib
import pytest
from hypothesis import given, settings, HealthCheck
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec.ints import OverflowReading
from uopcheck.spec.z3model import check_rewrite, check_bounds, Proved, Refuted, Unknown
from uopcheck.fuzz.symbolic import int_expr, check_expr, load_findings, replay, LAYOUT, confirm, finding_json, attribute, load_expr, audit
from uopcheck.fuzz.exhaustive import declarations
from uopcheck.fuzz.exhaustive import exhaustive_check
from conformance.profiles import examples

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

@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(int_expr(depth=3, dt=dtypes.weakint))
def test_symbolic_fuzz_check_runs(e):
  """The checker returns a verdict for every random weakint expression (a refutation here is reported, not hidden)."""
  v, s = check_expr(e, W, timeout_ms=1000)
  assert v.kind in ("proved", "refuted", "unknown", "unchanged")
  if v.kind == "proved" and v.how == "exhaustive": assert exhaustive_check(e, s, limit=1 << 20, ub_is_undefined=False)[0]

def test_symbolic_corrupt_finding_file_is_skipped_with_one_line(tmp_path):
  good = next(SHIPPED_DIR.glob("symbolic-*.json"))
  (tmp_path / good.name).write_bytes(good.read_bytes())
  (tmp_path / "symbolic-deadbeef.json").write_text("{not json")
  (tmp_path / "symbolic-trunc.json").write_text(good.read_text()[:200])
  found, problems = load_findings(tmp_path)
  assert [p.name for p, _ in found] == [good.name]                    # the good one still loads
  assert len(problems) == 2 and all("\n" not in p and "corrupt finding file" in p for p in problems)
  assert any(p.startswith("symbolic-deadbeef.json:") for p in problems)

def test_symbolic_save_finding_keeps_the_smaller(tmp_path):
  e = load_expr(SHIPPED[0][1])  # a real refutation: rebuilt, confirmed, attributed and signed from scratch
  v, s = check_expr(e, W)
  assert v.kind == "refuted" and confirm(e, s, v, W) is None
  d = attribute(finding_json(e, s, v, W), e, W)
  assert d["signature"] == SHIPPED[0][1]["signature"]                        # the signature is the bug's, not the run's
  from uopcheck.fuzz.findings_store import DirectoryStore
  assert DirectoryStore(tmp_path, LAYOUT).save(d) is not None
  big = {**d, "expr": {**d["expr"], "nodes": d["expr"]["nodes"] + [d["expr"]["nodes"][0]]}}
  assert DirectoryStore(tmp_path, LAYOUT).save(big) is None                               # a larger one with the same signature is not kept
  assert load_findings(tmp_path)[0][0][1]["expr"] == d["expr"]

def test_symbolic_same_named_variables_are_one_value():
  """Two declarations of one name are one runtime value: both ranges apply at once (the false findings of old came from
  treating them as one variable with the first range only)."""
  a_wide, a_narrow = UOp.variable("a", 0, 100), UOp.variable("a", 0, 3)
  e = (a_wide < 50).where(UOp.const(1, dtypes.weakint), a_wide)         # a < 50 always, since a is also in [0, 3]
  e = e + a_narrow * 0
  assert isinstance(check_rewrite(e, UOp.const(1, dtypes.weakint) + a_narrow * 0), Proved)
  assert exhaustive_check(e, UOp.const(1, dtypes.weakint) + a_narrow * 0)[0]
  # across dtypes: a as uint8 in [200, 255] and as int8 in [0, 5] is no value at all: vacuous, never a counterexample
  x8, xi8 = UOp.variable("x", 200, 255, dtype=dtypes.uint8), UOp.variable("x", 0, 5, dtype=dtypes.int8)
  e2 = x8.cast(dtypes.int32) + xi8.cast(dtypes.int32)
  assert isinstance(check_rewrite(e2, UOp.const(0, dtypes.int32)), Proved)
  assert confirm(e2, UOp.const(0, dtypes.int32), check_expr(e2, W)[0], W) is not None or check_expr(e2, W)[0].kind != "refuted"

def test_symbolic_confirmation_rejects_out_of_range_counterexamples():
  a = UOp.variable("a", 0, 3)
  e, s = a + 1, a + 2
  from uopcheck.fuzz.symbolic import Verdict
  bogus = Verdict("refuted", "z3", Refuted({"a": 7}, 8, 9, "values differ"))
  assert "outside its declared range" in confirm(e, s, bogus, W)
  agree = Verdict("refuted", "z3", Refuted({"a": 1}, 2, 2, "values differ"))
  assert confirm(a + 1, (a + 2) - 1, agree, W).startswith("numpy: both sides give")

def test_symbolic_confirmation_does_not_take_the_evaluator_s_int64_limit_for_undefined():
  """x -> (x*4)//4 at weakint x = 2**62: both are 2**62 (weakint is exact), but numpy holds weakint as int64 and calls the
  rewrite's x*4 = 2**64 undefined. That 'undefined' is the evaluator's limit: no refutation is confirmed on it. A rewrite that
  really is undefined there (a division by zero) still is."""
  from uopcheck.fuzz.symbolic import Verdict
  x = UOp.variable("x", 0, 2**62)
  claimed = Verdict("refuted", "z3", Refuted({"x": 2**62}, 2**62, "undefined", "the rewrite is undefined"))
  why = confirm(x, (x * 4) // 4, claimed, W)
  assert why is not None and "evaluator's limit" in why and str(2**64) in why, why
  z = UOp.variable("z", 0, 0)
  assert confirm(x, x + 1 // (z + 0 * x) * 0, Verdict("refuted", "z3", Refuted({"x": 1, "z": 0}, 1, "undefined", "undefined")), W) is None

@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(int_expr(depth=4))
def test_symbolic_fuzzer_never_draws_two_variables_of_one_name(e):
  decl = declarations(e)
  by_name: dict = {}
  for name, dt, lo, hi in decl: by_name.setdefault(name, set()).add((dt, lo, hi))
  assert all(len(v) == 1 for v in by_name.values()), by_name

def test_symbolic_finding_files_are_data_not_code(tmp_path):
  """A crafted finding whose expression is Python (the old pyrender format) or an arg that names a callable is refused
  with one line, and nothing runs."""
  marker = tmp_path / "pwned"
  payload = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')\nast = UOp.const(1, dtypes.weakint)"
  good = json.loads(next(SHIPPED_DIR.glob("symbolic-*.json")).read_text())
  (tmp_path / "symbolic-code.json").write_text(json.dumps({**good, "expr": payload}))
  evil = json.loads(json.dumps(good))
  evil["expr"]["nodes"][0]["arg"] = {"dataclass": "os.system", "fields": {"command": "touch " + str(marker)}}
  (tmp_path / "symbolic-arg.json").write_text(json.dumps(evil))
  evil2 = json.loads(json.dumps(good))
  evil2["expr"]["nodes"][0]["op"] = "__class__"
  (tmp_path / "symbolic-op.json").write_text(json.dumps(evil2))
  found, problems = load_findings(tmp_path)
  assert not found and len(problems) == 3 and all("\n" not in p for p in problems), problems
  assert not marker.exists()

SHIPPED_DIR = FINDINGS
SHIPPED, SHIPPED_PROBLEMS = load_findings(FINDINGS)

def test_symbolic_findings_corpus_is_shipped_and_each_confirms():
  """Every shipped finding is re-confirmed here, independently of how it was found: an assignment inside every variable's
  own range where the numpy semantics disagree (or a dtype change), and no name declared twice."""
  assert not SHIPPED_PROBLEMS, SHIPPED_PROBLEMS
  assert len(SHIPPED) >= 3, "fuzz/findings/ should hold the symbolic findings found so far"
  for p, d in SHIPPED:
    e, s = load_expr(d), load_expr(d, "simplified")
    names = [n for n, *_ in declarations(e, s)]
    # one name, one range (the codegen pipeline retypes a variable when it lowers weakint: same name and range, sized dtype)
    assert len(set(names)) == len({(n, lo, hi) for n, dt, lo, hi in declarations(e, s)}), f"{p.name}: a name declared twice"
    assert audit(d) is None, f"{p.name}: {audit(d)}"   # in range, numpy disagrees, python_alu gives the recorded values

def test_symbolic_audit_flags_a_false_finding():
  d = json.loads(json.dumps(next(d for _, d in SHIPPED if d["assignment"])))
  name = next(iter(d["assignment"]))
  _, hi = next((lo, hi) for n, _, lo, hi in declarations(load_expr(d)) if n == name)
  assert "outside its declared range" in audit({**d, "assignment": {**d["assignment"], name: hi + 1000}})
  assert audit({**d, "before": str(int(d["before"]) + 1)}) is not None   # a recorded value python_alu does not reproduce

@pytest.mark.parametrize("path,finding", SHIPPED, ids=[p.name for p, _ in SHIPPED])
@pytest.mark.xfail(strict=True, reason="a real tinygrad 0.14.0 unsound simplification (fuzz/findings/)")
def test_symbolic_replay_finding(path, finding):
  v = replay(finding)
  assert v.kind in ("proved", "unchanged"), f"{finding['rule']}: {v.detail}"

def test_a_symbolic_finding_whose_shrink_the_budget_cut_is_labelled_unshrunk(tmp_path):
  """a campaign's finish marks a failure whose shrink the deadline cut (Failure.cut_short) with the UNSHRUNK note; the
  report lists it as UNSHRUNK, not NEW, counts it, and the saved file stays a valid finding with the same signature"""
  from uopcheck.fuzz.symbolic import CampaignStats, result
  from uopcheck.fuzz.campaign import UNSHRUNK
  from uopcheck.results import RENDERERS
  src = [json.loads(f.read_text()) for f in sorted(FINDINGS.glob("symbolic-*.json"))[:2]]
  st = CampaignStats()
  from uopcheck.fuzz.findings_store import DirectoryStore
  st.file_finding({**src[0], "shrink": UNSHRUNK}, {}, DirectoryStore(tmp_path, LAYOUT))
  st.file_finding(src[1], {}, DirectoryStore(tmp_path, LAYOUT))
  res = result(st, {"minutes": 1, "seed": None, "reading": "wrap", "findings_dir": str(tmp_path)})
  assert res.data["unshrunk"] == [src[0]["signature"]]
  text = RENDERERS["term"].render(res)
  assert f"UNSHRUNK symbolic-{src[0]['signature']}" in text and f"NEW symbolic-{src[1]['signature']}" in text
  assert "1 of 2 new findings UNSHRUNK" in text
  found, problems = load_findings(tmp_path)
  assert not problems and {d["signature"] for _, d in found} == {d["signature"] for d in src}
