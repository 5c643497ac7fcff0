"""Rule coverage: pytest --rule-cov collects which rules fired (per test), reports term/JSON/HTML, the HTML renders in
headless Chromium as a person would see it, and `uopcheck coverage -- CMD` merges data across processes."""
from __future__ import annotations
import json, pathlib, shutil, subprocess, sys
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

@pytest.fixture(scope="module")
def covered(tmp_path_factory):
  out = tmp_path_factory.mktemp("rulecov")
  r = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "conformance/test_movement.py"), "-q", "-p", "no:warnings", "-k",
                      "float32 and (pad or permute)",
                      "--rule-cov=symbolic", "--rule-cov-report=term", "--rule-cov-report=json", "--rule-cov-report=html", "--rule-cov-report=lcov",
                      "--rule-cov-dir", str(out),
                      "-p", "uopcheck.rulecov.plugin"], capture_output=True, text=True, cwd=ROOT)
  assert r.returncode == 0, r.stdout[-2000:]
  return out, r.stdout, json.loads((out / "rulecov.report.json").read_text())

def test_rule_cov_terminal_table_and_json(covered):
  _, stdout, rep = covered
  assert "uopcheck rule coverage" in stdout and "never fired" in stdout
  sym = rep["matchers"]["uop.symbolic.symbolic"] if "uop.symbolic.symbolic" in rep["matchers"] else max(rep["matchers"].values(),
                                                                                                        key=lambda m: m["rules"])
  assert sym["rules"] > 10 and 0 < sym["fired"] < sym["rules"]
  fired = [k for k, r in rep["rules"].items() if r["hits"]]
  assert fired and all(k.startswith("tinygrad/uop/") and ":" in k for k in fired)   # spec/rule_id.py: the one rule name
  assert rep["never_fired"] and all(rep["rules"][k]["hits"] == 0 for k in rep["never_fired"])
  # the 'rules hit only by' view: the tests that exercised a fired rule
  assert any(t.startswith("conformance/test_movement.py::") for k in fired for t in rep["rules"][k]["tests"])

def test_rule_cov_index_has_totals_sorting_never_fired_and_the_command(covered):
  out, _, rep = covered
  index = (out / "html" / "index.html").read_text()
  n, f = len(rep["rules"]), sum(1 for r in rep["rules"].values() if r["hits"])
  assert f"<td><b>TOTAL</b></td><td><b>{n}</b></td><td><b>{f}</b></td>" in index      # the totals row
  assert "onclick='srt(this)'" in index and "function srt(" in index                    # sortable columns
  assert f"never fired ({len(rep['never_fired'])})" in index and rep["never_fired"][0] in index
  assert "command: <code>pytest " in index and "created " in index

def test_rule_cov_lcov_lists_every_rule_line_with_its_hits(covered):
  out, _, rep = covered
  records = (out / "rulecov.lcov").read_text().split("end_of_record")
  das = {}
  for rec in records:
    sf = next((ln[3:] for ln in rec.splitlines() if ln.startswith("SF:")), None)
    if sf is None: continue
    assert pathlib.Path(sf).is_file()
    for ln in rec.splitlines():
      if ln.startswith("DA:"):
        line, hits = map(int, ln[3:].split(","))
        das[(sf.split("tinygrad/")[-1], line)] = hits
  for r in rep["rules"].values():   # every rule is a DA line; a fired rule's line has hits
    assert (r["file"], r["line"]) in das and (das[(r["file"], r["line"])] > 0) >= (r["hits"] > 0)

@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium (make test installs it)")
def test_rule_cov_html_renders_in_headless_chromium(covered, tmp_path):
  out, _, rep = covered
  flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
  page = next((out / "html").glob("uop_symbolic.py.html"))
  dom = subprocess.run(["chromium", *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
  assert "uop/symbolic.py" in dom and "class=\"hit\"" in dom and "class=\"miss\"" in dom   # annotated source, green and red rows
  some = next(k for k in rep["never_fired"] if k.startswith("tinygrad/uop/symbolic.py"))
  assert f">{some.split(':')[1]}</td><td class=\"n\">0</td>" in dom                       # a never-fired rule shows 0 hits on its line
  index = subprocess.run(["chromium", *flags, "--dump-dom", (out / "html" / "index.html").as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
  assert "uopcheck rule coverage" in index and "uop_symbolic.py.html" in index and "TOTAL" in index
  shot = tmp_path / "shot.png"
  subprocess.run(["chromium", *flags, f"--screenshot={shot}", "--window-size=1200,800", page.as_uri()], capture_output=True, timeout=120)
  assert shot.exists() and shot.stat().st_size > 5000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

def test_uopcheck_coverage_merges_processes(tmp_path):
  code = "import uopcheck; from tinygrad.uop.ops import UOp; a=UOp.variable('a',0,10); print((a*3+a*4).simplify())"
  cmd = [sys.executable, "-m", "uopcheck.cli", "coverage", "--dir", str(tmp_path), "--report", "json", "--",
         sys.executable, "-c", f"import subprocess, sys; {code}; subprocess.run([sys.executable, '-c', {code!r}], check=True)"]
  r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
  assert r.returncode == 0, r.stdout + r.stderr
  assert len(list(tmp_path.glob("rulecov.*.json"))) - 1 == 2          # one data file per process (+ the report)
  rep = json.loads((tmp_path / "rulecov.report.json").read_text())
  assert any(r["hits"] >= 2 for r in rep["rules"].values())             # hits summed across both processes

def test_codegen_rules_of_a_many_kernel_realize_are_counted(tmp_path):
  """tinygrad compiles several kernels at once in spawned workers that run with TRACK_MATCH_STATS=0; under
  coverage uopcheck compiles in-process, so the codegen rules those kernels fire are counted. Forcing the workers
  back on (PARALLEL=2) shows what would be lost."""
  import os
  code = ("import uopcheck; from tinygrad import Tensor; a = Tensor.ones(16, 16).contiguous(); "
          "Tensor.realize((a.exp() @ a).sum(0), (a + 1).max(1), a.log().sum())")
  def fired(d, **env) -> int:
    d.mkdir()
    cmd = [sys.executable, "-m", "uopcheck.cli", "coverage", "--dir", str(d), "--report", "json", "--matchers", "codegen", "--", sys.executable,
           "-c", code]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=d, env={k: v for k, v in {**os.environ, **env}.items() if k != "PARALLEL" or env})
    assert r.returncode == 0, r.stdout + r.stderr
    return sum(1 for v in json.loads((d / "rulecov.report.json").read_text())["rules"].values() if v["hits"])
  default, with_workers = fired(tmp_path / "default"), fired(tmp_path / "workers", PARALLEL="2")
  assert default > with_workers > 0, (default, with_workers)

def test_combine_reads_data_files_only_and_a_new_run_starts_empty(tmp_path):
  """the report (rulecov.report.json) sits beside the data files: a second run in the same directory must neither read it
  as data (it has no 'hits': it crashed) nor add up the first run's hits"""
  from uopcheck import rulecov
  from uopcheck.rulecov import plugin
  (tmp_path / "rulecov.111.json").write_text(json.dumps({"hits": {"tinygrad/uop/symbolic.py:1": 2}, "tests": {}}))
  (tmp_path / "rulecov.report.json").write_text(json.dumps({"rules": {}, "matchers": {}, "never_fired": []}))
  assert [f.name for f in rulecov.data_files(tmp_path)] == ["rulecov.111.json"]
  assert rulecov.combine(tmp_path)["hits"] == {"tinygrad/uop/symbolic.py:1": 2}
  class Cfg:
    getoption = staticmethod(lambda name: {"--rule-cov": "all", "--rule-cov-dir": str(tmp_path)}[name])
  plugin.pytest_sessionstart(type("Session", (), {"config": Cfg()})())
  assert rulecov.data_files(tmp_path) == [] and (tmp_path / "rulecov.report.json").exists()

def test_fail_under_fails_a_run_that_fires_too_few_rules(tmp_path):
  """as coverage.py's --fail-under: the reports are written, then exit 1 when the rules fired are under the percent"""
  code = "import uopcheck; from tinygrad.uop.ops import UOp; a=UOp.variable('a',0,10); print((a*3+a*4).simplify())"
  def run(pct:str, d:str):
    cmd = [sys.executable, "-m", "uopcheck.cli", "coverage", "--dir", str(tmp_path / d), "--report", "json", "--matchers", "symbolic",
           "--fail-under", pct, "--", sys.executable, "-c", code]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
  low, high = run("0.5", "a"), run("99", "b")
  assert low.returncode == 0, low.stdout + low.stderr
  assert high.returncode == 1 and "under --fail-under 99%" in high.stderr and (tmp_path / "b" / "rulecov.report.json").exists()
