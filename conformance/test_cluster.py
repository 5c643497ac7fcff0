"""Graph campaigns on a real Dask cluster (an embedded LocalCluster of 2 worker processes) with hypothesis' example
database shared through a real redis-server: findings come back to the client and are written once; a worker lost
mid-case (a segfault, a hang the client kills) loses no finding; a message that is not a finding is never written."""
from __future__ import annotations
import json, pathlib, shutil, socket, subprocess, sys, time
import pytest
from uopcheck.fuzz.graph import load_graph_findings, check_program

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAULTS = ROOT / "conformance" / "fault_schedulers.py"
pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install uopcheck[cluster])")

@pytest.fixture
def redis_url(tmp_path):
  """a real redis-server on a free port, no persistence, stopped after the test"""
  if shutil.which("redis-server") is None: pytest.skip("redis-server is not installed (Debian package redis-server; `make redis`)")
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  import redis
  client = redis.Redis(port=port)
  for _ in range(100):
    try:
      client.ping()
      break
    except redis.ConnectionError: time.sleep(0.05)
  yield f"redis://127.0.0.1:{port}/0", client
  proc.terminate()
  proc.wait(10)

def _campaign(tmp_path, *extra, minutes="0.5") -> tuple[subprocess.CompletedProcess, dict, float]:
  cmd = [sys.executable, "-m", "uopcheck.cli", "fuzz", "graph", "--cluster", "local", "--workers", "2", "--minutes", minutes,
         "--shard-minutes", "0.2", "--findings", str(tmp_path / "f"), "--report-dir", str(tmp_path / "r"), *extra]
  st = time.perf_counter()
  p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
  wall = time.perf_counter() - st
  assert (tmp_path / "r" / "graph_campaign.json").exists(), p.stdout[-2000:] + p.stderr[-3000:]
  return p, json.loads((tmp_path / "r" / "graph_campaign.json").read_text()), wall

@pytest.mark.slow
def test_two_dask_workers_share_a_redis_example_database_and_the_client_writes_each_finding_once(tmp_path, redis_url):
  url, redis_client = redis_url
  p, rep, wall = _campaign(tmp_path, "--self-test-bug", "--db", url)
  assert p.returncode == 1 and rep["new"], (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
  assert rep["cluster"] == "local" and rep["shards"] >= 4 and rep["workers_used"] == 2 and rep["cases"] > 20, rep
  found, problems = load_graph_findings(tmp_path / "f")
  assert not problems and sorted(d["signature"] for _, d in found) == sorted(rep["new"])   # one file per signature, each reported
  from uopcheck.fuzz.graph_campaign import _broken_scheduler
  stock_ok = 0
  for path, d in found:   # confirmed independently here: each reproduces under the broken scheduler
    assert path.name == f"graph-{d['signature']}.json" and not check_program(d["program"], scheduler=_broken_scheduler).ok, path.name
    stock_ok += check_program(d["program"]).ok
  assert stock_ok >= 1   # the planted bug was found (a finding may also be a real tinygrad bug that stock rangeify has too)
  from uopcheck.fuzz.findings_io import REDIS_KEY_PREFIX
  assert any(k.startswith(REDIS_KEY_PREFIX) for k in redis_client.scan_iter()), "the workers stored no example in Redis"
  assert wall < 30 + 60, f"--minutes 0.5 took {wall:.0f} s"

@pytest.mark.slow
@pytest.mark.parametrize("fault,kind", [("segfault", "crash"), ("hang_in_native_code", "hang")])
def test_a_worker_lost_mid_case_loses_no_finding(tmp_path, fault, kind):
  p, rep, wall = _campaign(tmp_path, "--scheduler", f"{FAULTS}:{fault}", "--case-timeout", "3", minutes="0.4")
  found, problems = load_graph_findings(tmp_path / "f")
  assert not problems and kind in {d["failure"] for _, d in found}, (p.stdout[-1500:], p.stderr[-1500:])
  assert all(d["program"]["steps"] for _, d in found)   # each is a reproducer
  assert p.returncode == 1 and rep["lost_cases"] and rep["worker_restarts"] >= 1, rep
  assert len({d["signature"] for _, d in found}) == len(found)
  assert wall < 24 + 60, f"--minutes 0.4 took {wall:.0f} s"

def test_the_client_writes_only_findings_it_can_parse(tmp_path):
  """messages from the network are data: a non-finding, a signature that is a path, a broken program -- none is written;
  a known signature is counted, not written; the same finding twice is one file"""
  from uopcheck.fuzz.cluster import _Collector
  from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS
  good = {**json.loads(sorted(SHIPPED_FINDINGS.glob("graph-*.json"))[0].read_text()), "signature": "abc123def456"}
  col = _Collector(str(tmp_path), {"0123456789ab": "graph-0123456789ab.json"}, None)
  col.message(json.dumps({"finding": good, "shard": 0}))
  col.message(json.dumps({"finding": good, "shard": 1}))
  col.message(json.dumps({"finding": {**good, "signature": "../../evil"}, "shard": 0}))
  col.message(json.dumps({"finding": {**good, "signature": "fedcba987654", "program": {"steps": "rm -rf /"}}, "shard": 0}))
  col.message(json.dumps({"finding": [1, 2, 3], "shard": 0}))
  col.message(json.dumps({"finding": {**good, "signature": "0123456789ab"}, "shard": 0}))
  col.message(json.dumps({"cases": 7, "shard": 0}))
  assert sorted(f.name for f in tmp_path.iterdir()) == ["graph-abc123def456.json"]
  assert len(col.rejected) == 3 and col.got["new"] == {"abc123def456"} and col.got["known"] == {"graph-0123456789ab.json"} and col.cases == 7

def test_an_unreachable_redis_or_scheduler_is_a_one_line_usage_error(tmp_path):
  for extra, needle in ((["--cluster", "local", "--db", "redis://127.0.0.1:1/0"], "redis://127.0.0.1:1/0"),
                        (["--cluster", "tcp://127.0.0.1:1"], "tcp://127.0.0.1:1")):
    p = subprocess.run([sys.executable, "-m", "uopcheck.cli", "fuzz", "graph", "--minutes", "0.1", "--findings", str(tmp_path / "f"),
                        "--report-dir", str(tmp_path / "r"), *extra], capture_output=True, text=True, cwd=ROOT, timeout=180)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1 and needle in lines[0], (p.returncode, p.stderr[-1500:])
