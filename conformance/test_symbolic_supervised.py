"""The symbolic fuzzer on the one supervisor (fuzz/supervisor.py): ``--workers N`` processes and ``--cluster`` Dask shards,
like the graph fuzzer -- every worker's counts reach the report, every finding is confirmed here from its file, and a
case that took a worker down is re-run in a fresh process before it is filed (a worker killed or stopped from outside
is an external fault, never a finding)."""
from __future__ import annotations
import json, os, pathlib, signal, subprocess, sys, time
import pytest
from conformance.campaign_processes import running_case_pid
from uopcheck.fuzz.symbolic import load_findings, audit, FILE_PREFIX
from uopcheck.fuzz.findings_io import load_dir

ROOT = pathlib.Path(__file__).resolve().parent.parent

def _cmd(tmp_path, *extra:str) -> list[str]:
  return [sys.executable, "-m", "uopcheck.cli", "fuzz", "symbolic", "--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db"),
          "--report-dir", str(tmp_path / "r"), *extra]

def _report(tmp_path) -> dict: return json.loads((tmp_path / "r" / "fuzz_symbolic.json").read_text())

def _confirmed_findings(tmp_path, rep:dict) -> None:
  """every new finding is a file, and each holds up when re-checked from scratch here (symbolic.audit)"""
  found, problems = load_findings(tmp_path / "f")
  assert not problems, problems
  assert sorted(d["signature"] for _, d in found) == sorted(k for k in rep["new"] if "-" not in k)
  for path, d in found: assert audit(d) is None, (path.name, audit(d))

@pytest.mark.slow
def test_two_symbolic_workers_each_report_their_counts_and_every_finding_holds_up(tmp_path):
  p = subprocess.run(_cmd(tmp_path, "--workers", "2", "--minutes", "0.4", "--seed", "5"), capture_output=True, text=True, cwd=ROOT, timeout=300)
  rep = _report(tmp_path)
  assert p.returncode == (1 if rep["new"] else 0), (p.returncode, p.stderr[-2000:])
  assert rep["workers"] == 2 and rep["cases"] > 50 and rep["worker_restarts"] == 0 and not rep["lost_cases"], rep
  # each case is checked once (twice for a weakint one: simplify and the pipeline); a worker whose counts did not reach the
  # report would leave about half the cases unchecked
  assert rep["checked"] >= 0.9 * rep["cases"] and rep["seeds"] > 0, rep   # worker 0 also ran the harvested index seeds
  assert not list((tmp_path / "f").glob(".current-*.json"))   # each worker removed its running-case file
  _confirmed_findings(tmp_path, rep)

@pytest.mark.slow
@pytest.mark.parametrize("sig,kind", [("SIGKILL", "crash"), ("SIGSTOP", "hang")])
def test_a_symbolic_worker_killed_or_stopped_from_outside_is_an_external_fault(tmp_path, sig, kind):
  """the supervisor sees the worker die (or its case run past --case-timeout), re-runs the expression it was checking in
  a fresh process, which finishes: an external-fault record that holds the expression, no finding, and the worker restarted"""
  proc = subprocess.Popen(_cmd(tmp_path, "--workers", "2", "--minutes", "0.5", "--seed", "9", "--case-timeout", "15", "--no-pipeline"),
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
  try:
    time.sleep(1.0)
    os.kill(running_case_pid(tmp_path / "f", proc, wid=1), getattr(signal, sig))
    out, err = proc.communicate(timeout=300)
  finally:
    if proc.poll() is None: os.killpg(proc.pid, signal.SIGKILL)
  rep = _report(tmp_path)
  external, problems = load_dir(tmp_path / "f", f"{FILE_PREFIX['external-fault']}-*.json", lambda d: None)
  # the one killed or stopped; a case slow enough on a loaded machine to pass --case-timeout is also a (clean) external fault
  assert not problems and kind in [d["failure"] for _, d in external], (rep["lost_cases"], err[-2000:])
  assert rep["external_faults"] and rep["worker_restarts"] >= 1 and not rep["reproducers"], rep
  assert "external faults (re-ran clean, not findings): " in out
  assert not list((tmp_path / "f").glob("crash-symbolic-*.json")) and not list((tmp_path / "f").glob("hang-symbolic-*.json"))
  from uopcheck.fuzz.symbolic import validate_case
  d = next(d for _, d in external if d["failure"] == kind)
  validate_case({"expr": d["expr"], "reading": d["reading"], "pipeline": d["pipeline"]})   # kept as a reproducer, for a person
  assert proc.returncode == (1 if rep["new"] else 0), (proc.returncode, err[-2000:])
  _confirmed_findings(tmp_path, rep)

def test_a_lost_symbolic_case_is_rerun_in_a_fresh_process_and_filed_by_what_it_did():
  """the re-run itself (fuzz/lost_case.py, --fuzzer symbolic): a case that finishes is an external fault; one the re-run
  cannot even read is no reproduction either (the re-run exits non-zero: a crash reproducer would be false, so a bad case
  is refused before it is started)"""
  from uopcheck.fuzz.lost_case import LostCaseCheck
  from uopcheck.fuzz.symbolic import FUZZER
  from uopcheck.spec import uop_json
  from tinygrad.uop.ops import UOp
  from tinygrad.dtype import dtypes
  x = UOp.variable("x", 0, 100, dtype=dtypes.weakint)
  case = {"expr": uop_json.encode((x * 4 + 2) // 2), "reading": "undefined", "pipeline": True, "started": 0.0}
  FUZZER.validate_case(case)
  check = LostCaseCheck(case, "crash", "worker 0: crash: test", timeout=60, fuzzer="symbolic").start()
  while check.poll() is None: time.sleep(0.2)
  d = check.record(None)
  assert check.outcome is not None and check.outcome["reproduced"] is None, check.outcome
  assert d["kind"] == "external-fault" and d["failure"] == "crash" and FUZZER.classify(d, {}) == ("external", d["signature"])
  for bad in ({**case, "expr": {"nodes": [["ADD", "int", []]]}}, {**case, "reading": "saturate"}, {**case, "pipeline": "yes"}):
    with pytest.raises(Exception): FUZZER.validate_case(bad)

def test_the_client_checks_symbolic_findings_and_lost_cases_from_shards_as_data(tmp_path):
  """a cluster client running the symbolic fuzzer: a shipped finding is written once; a finding whose expression does not
  parse and a lost case holding no expression are refused, and nothing is re-run for them"""
  from uopcheck.fuzz.cluster import _Collector
  from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS
  good = json.loads(sorted(SHIPPED_FINDINGS.glob("symbolic-*.json"))[0].read_text())
  col = _Collector(str(tmp_path), {}, None, fuzzer="symbolic")
  col.message(json.dumps({"finding": good, "shard": 0}))
  col.message(json.dumps({"finding": good, "shard": 1}))
  col.message(json.dumps({"finding": {**good, "expr": {"nodes": "rm -rf /"}}, "shard": 0}))
  col.message(json.dumps({"lost": {"case": {"program": {"steps": []}}, "pending": None}, "why": "crash", "shard": 0}))
  col.message(json.dumps({"lost": {"case": {"expr": good["expr"], "reading": "undefined", "pipeline": 1}}, "why": "crash", "shard": 0}))
  assert sorted(f.name for f in tmp_path.iterdir()) == [f"symbolic-{good['signature']}.json"]
  assert len(col.rejected) == 3 and not col.checks and col.got["new"] == {good["signature"]}, col.rejected

@pytest.mark.slow
def test_symbolic_shards_on_a_local_dask_cluster(tmp_path):
  pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install uopcheck[cluster])")
  p = subprocess.run(_cmd(tmp_path, "--cluster", "local", "--workers", "2", "--minutes", "0.5", "--shard-minutes", "0.2", "--seed", "4"),
                     capture_output=True, text=True, cwd=ROOT, timeout=400)
  rep = _report(tmp_path)
  assert p.returncode == (1 if rep["new"] else 0), (p.returncode, p.stderr[-2000:])
  assert rep["cluster"] == "local" and rep["shards"] >= 4 and rep["cases"] > 50, rep
  assert rep["checked"] >= 0.9 * rep["cases"], rep   # every shard's counts came back with its result
  _confirmed_findings(tmp_path, rep)
