"""The suite under pytest-xdist (``make test`` runs ``-n auto``) reports what a serial run reports: the conformance summary
counts every worker's cases, rule coverage combines every worker's data (the same rules fire), and the compiler's
warnings of every worker's compiles land in the one summary line."""
from __future__ import annotations
import json, os, pathlib, re, subprocess, sys
import pytest
from conformance.test_compiler_output import WARNING, noisy_cc  # noqa: F401  (a fixture)

ROOT = pathlib.Path(__file__).resolve().parent.parent

def _run(workers:int, out:pathlib.Path, cc:str) -> tuple[str, dict]:
  out.mkdir()
  env = {**os.environ, "CC": cc, "CACHELEVEL": "0", "UOPCHECK_REPORT_DIR": str(out)}
  for k in ("UOPCHECK_CC_WRAPPER", "UOPCHECK_REAL_CC", "UOPCHECK_CC_LOG", "PYTEST_XDIST_WORKER", "DEBUG"): env.pop(k, None)
  r = subprocess.run([sys.executable, "-m", "pytest", "conformance/test_movement.py", "-q", "-p", "no:warnings", "-p", "no:cacheprovider",
                      "-k", "float32 and (pad or permute or flip)", "-n", str(workers),
                      "--rule-cov=symbolic", "--rule-cov-report=json", "--rule-cov-dir", str(out / "rulecov")],
                     capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
  assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
  return r.stdout + r.stderr, json.loads((out / "rulecov" / "rulecov.report.json").read_text())

@pytest.mark.slow
def test_xdist_run_reports_what_a_serial_run_reports(tmp_path, noisy_cc):  # noqa: F811
  serial, serial_cov = _run(0, tmp_path / "n0", noisy_cc)
  par, par_cov = _run(2, tmp_path / "n2", noisy_cc)
  assert "bringing up nodes" in par   # really distributed
  def cases(out):
    m = re.search(r"cases: (\d+)  ref==fast: (\d+)", out)
    assert m is not None, out[-2000:]
    return m.groups()
  assert cases(par) == cases(serial) and int(cases(serial)[0]) >= 6, (cases(serial), cases(par))
  assert [r["name"] for r in json.loads((tmp_path / "n2" / "conformance.json").read_text())] == \
         sorted(r["name"] for r in json.loads((tmp_path / "n0" / "conformance.json").read_text()))
  def fired(cov):
    return {k for k, r in cov["rules"].items() if r["hits"]}
  assert fired(par_cov) == fired(serial_cov) and len(fired(serial_cov)) > 10   # each worker's data combined, none lost
  assert len(list((tmp_path / "n2" / "rulecov").glob("rulecov.[0-9]*.json"))) == 3   # two workers and the controller
  # every worker's compiles went through the controller's wrapper: one summary line, no warning in the test output
  for out in (serial, par):
    lines = [ln for ln in out.splitlines() if WARNING in ln]
    assert len(lines) == 1 and re.match(r"\s*\d+x ", lines[0]), lines[:5]
  def n(out):
    return int(next(ln for ln in out.splitlines() if WARNING in ln).split("x")[0].strip())
  assert n(par) >= n(serial) > 0   # (the workers compile the same kernels, each in its own process)
