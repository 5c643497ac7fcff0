"""The graph campaign under failure: a candidate scheduler is compared with stock rangeify and the reference, a case that
hangs (in Python or in native code) or kills its worker is a finding and the campaign goes on, and --minutes holds."""
from __future__ import annotations
import json, pathlib, sys, time
import pytest
from uopcheck.fuzz.graph import check_program, load_graph_findings
from conformance.isolated import run_cli

pytestmark = pytest.mark.slow   # every test here runs a real campaign in a subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAULTS = ROOT / "conformance" / "fault_schedulers.py"
CANDIDATE = ROOT.parent / "shared" / "candidates" / "rangeify2.py"
RELU_SUM = {"inputs": [{"shape": [4, 4], "dtype": "float32", "seed": 3, "kind": "normal"}],
            "steps": [["unary", "relu", 0], ["reduce", "max", 1, [1], False]], "outputs": [2]}

def test_verdict_names_the_wrong_scheduler():
  broken, stock = "uopcheck.fuzz.graph_campaign:_broken_scheduler", f"{FAULTS}:_stock"
  assert check_program(RELU_SUM).ok
  v = check_program(RELU_SUM, candidate=broken)
  assert (v.ok, v.wrong, v.kind) == (False, "candidate", "mismatch")
  v = check_program(RELU_SUM, scheduler=broken, candidate=stock)
  assert (v.ok, v.wrong, v.kind) == (False, "stock", "mismatch")
  v = check_program(RELU_SUM, scheduler=broken, candidate=broken)
  assert (v.ok, v.wrong, v.kind) == (False, "both", "mismatch")

def _campaign(tmp_path, *extra, minutes="0.4", timeout=240):
  cmd = [sys.executable, "-m", "uopcheck.cli", "fuzz", "graph", "--minutes", minutes, "--workers", "1", "--seed", "2",
         "--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db"), *extra]
  st = time.perf_counter()
  p = run_cli(cmd, tmp_path, timeout)
  wall = time.perf_counter() - st
  report = json.loads((tmp_path / "reports" / "latest" / "graph_campaign.json").read_text())
  return p, report, wall

@pytest.mark.skipif(not CANDIDATE.exists(), reason="../shared/candidates/rangeify2.py is not beside this checkout")
def test_campaign_fuzzes_a_candidate_scheduler(tmp_path):
  p, report, _ = _campaign(tmp_path, "--scheduler", f"{CANDIDATE}:get_kernel_graph", minutes="0.5")
  assert report["cases"] > 0 and report["candidate"].endswith("rangeify2.py:get_kernel_graph"), p.stderr[-2000:]
  assert p.returncode == (3 if report["uopcheck_internal"] else 1 if report["new"] else 0)
  for f in report["findings"]: assert f["wrong_scheduler"] in ("stock", "candidate", "both"), f

@pytest.mark.parametrize("fault,kind", [("hang_in_python", "hang"), ("hang_in_native_code", "hang"), ("segfault", "crash")])
def test_hangs_and_crashes_are_findings_and_minutes_hold(tmp_path, fault, kind):
  p, report, wall = _campaign(tmp_path, "--scheduler", f"{FAULTS}:{fault}", "--case-timeout", "3", minutes="0.5")
  found, problems = load_graph_findings(tmp_path / "f")
  kinds = {d["failure"] for _, d in found}
  assert kind in kinds and not problems, (kinds, p.stdout[-1500:], p.stderr[-1500:])
  assert all(d["program"]["steps"] for _, d in found)               # each is a reproducer
  assert p.returncode == 1 and report["new"]
  assert report["worker_restarts"] >= 1 and report["lost_cases"]   # the worker went down, the campaign went on
  assert wall < 0.5 * 60 + 45, f"--minutes 0.5 took {wall:.0f} s"    # start-up, the kill grace and the report included

def test_a_failure_still_being_shrunk_when_the_campaign_stops_is_named_in_the_report(tmp_path):
  """a worker's pending failure (confirmed, not yet shrunk nor signed) is kept on disk and named, never silently left"""
  import time
  from uopcheck.fuzz.graph_campaign import summarize, result
  from uopcheck.results.render import TERM
  (tmp_path / ".pending-graph-4242.json").write_text('{"kind": "pending"}')
  got: dict[str, set] = {k: set() for k in ("new", "known", "internal", "flaky")}
  s = summarize(str(tmp_path), got, time.time(), True, {}, minutes=1, workers=1, seed=0, seconds=1.0, cases=3, scheduler=None,
                candidate=None, case_timeout=60.0, profile="small", restarts=0, lost=[])
  assert s["unfinished"] == [str(tmp_path / ".pending-graph-4242.json")]
  assert ".pending-graph-4242.json" in TERM.render(result(s)) and "unfinished" in TERM.render(result(s))
