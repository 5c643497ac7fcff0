"""compare-schedulers: correctness beside cost, for two schedulers, as a table, JSON and a plot."""
from __future__ import annotations
import json, sys
from conformance.isolated import run_cli

BROKEN = "uopcheck.fuzz.graph_campaign:_broken_scheduler"   # rangeify, then every float MAX in a kernel becomes ADD

def test_compare_schedulers_names_the_wrong_one_and_measures_both(tmp_path):
  cmd = [sys.executable, "-m", "uopcheck.cli", "compare-schedulers", "rangeify", BROKEN, "--graphs", "matmul_relu_sum", "matmul",
         "--fuzz", "2", "--seed", "3", "--report-dir", str(tmp_path / "r"), "--quiet"]
  p = run_cli(cmd, tmp_path, 300)
  rep = json.loads((tmp_path / "r" / "compare_schedulers.json").read_text())
  rows = {r["case"]: r for r in rep["rows"]}
  assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]     # a wrong scheduler is a finding
  assert rows["matmul_relu_sum"]["a"]["ok"] and not rows["matmul_relu_sum"]["b"]["ok"]   # relu's MAX is broken only under B
  assert rows["matmul"]["a"]["ok"] and rows["matmul"]["b"]["ok"]        # no MAX in a matmul: both agree with the reference
  for side in ("a", "b"):   # tinygrad's own estimates, measured on a warm run
    m = rows["matmul"][side]
    assert m["kernels"] >= 1 and m["bytes"] >= 3 * 16 * 16 * 4 and m["ops"] >= 16 ** 3 and m["run_s"] > 0
  assert rows["matmul"]["a"]["compile_s"] > 0   # B's matmul kernels are A's (same AST): already compiled, so no time there
  assert len([r for r in rep["rows"] if r["source"] == "fuzz"]) == 2
  assert "FAIL matmul_relu_sum" in p.stdout and "B/A:" in p.stdout
  assert (tmp_path / "r" / "compare_schedulers.png").stat().st_size > 1000

def test_compare_schedulers_usage_errors(tmp_path):
  same = run_cli([sys.executable, "-m", "uopcheck.cli", "compare-schedulers", "rangeify", "rangeify"], tmp_path, 60)
  assert same.returncode == 2 and "both" in same.stderr and len(same.stderr.strip().splitlines()) == 1
  bad = run_cli([sys.executable, "-m", "uopcheck.cli", "compare-schedulers", "rangeify", "nope.mod:fn", "--graphs", "matmul"], tmp_path, 60)
  assert bad.returncode == 2 and "cannot load scheduler" in bad.stderr
