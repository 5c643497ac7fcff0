"""The built wheel is the product: it carries the data uopcheck reads beside its code (the shipped findings corpus, the
reviewed refutations, the harvested index seeds), and run from outside the checkout it knows its known bugs as known.
Without the package data an installed uopcheck reported every reviewed refutation as new (exit 1) and audited no corpus."""
from __future__ import annotations
import json, os, pathlib, shutil, subprocess, sys, zipfile
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ["pyproject.toml", "README.md", "uopcheck", "spec", "ref", "fast", "fuzz", "amd", "training"]

def _run(cmd:list[str], cwd:pathlib.Path, env:dict|None=None, timeout:float=300) -> subprocess.CompletedProcess:
  return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)

@pytest.mark.slow
def test_the_wheel_carries_its_data_and_runs_outside_the_checkout(tmp_path):
  src, dist, site, run = (tmp_path / d for d in ("src", "dist", "site", "run"))
  run.mkdir()
  src.mkdir()
  for name in SOURCES:   # a copy: building in the checkout would leave build/ and egg-info there
    if (ROOT / name).is_dir(): shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    else: shutil.copy2(ROOT / name, src / name)
  p = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)], tmp_path)
  assert p.returncode == 0, p.stderr[-2000:]
  wheel = next(dist.glob("uopcheck-*.whl"))
  names = set(zipfile.ZipFile(wheel).namelist())
  shipped = {f"uopcheck/fuzz/findings/{f.name}" for f in (ROOT / "fuzz" / "findings").glob("*.json")}
  assert shipped and shipped <= names, sorted(shipped - names)[:5]
  assert {"uopcheck/fuzz/rules_known.json", "uopcheck/fuzz/index_seeds.json", "uopcheck/training/mi350x.sh"} <= names
  p = _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target", str(site), str(wheel)], tmp_path)
  assert p.returncode == 0, p.stderr[-2000:]
  env = {**os.environ, "PYTHONPATH": str(site)}   # ahead of the checkout's editable install
  where = _run([sys.executable, "-c", "import uopcheck.fuzz.findings_io as f; print(f.SHIPPED_FINDINGS)"], run, env)
  assert where.stdout.strip() == str(site / "uopcheck" / "fuzz" / "findings"), (where.stdout, where.stderr[-500:])
  # a reviewed refutation is known (exit 0), not new: the wheel's rules_known.json was read
  p = _run([sys.executable, "-m", "uopcheck.cli", "rules", "verify", "--only", "tinygrad/uop/symbolic.py:116", "--report", "json",
            "--report-dir", str(tmp_path / "rules")], run, env)
  summary = json.loads((tmp_path / "rules" / "rules_verify.json").read_text())["summary"]
  assert p.returncode == 0 and summary["refuted_known"] == ["tinygrad/uop/symbolic.py:116"] and not summary["refuted_new"], p.stderr[-1500:]
  # the installed corpus audits whole: every finding re-derived on this tinygrad
  p = _run([sys.executable, "-m", "uopcheck.cli", "findings", "audit", str(site / "uopcheck" / "fuzz" / "findings"), "--report", "json",
            "--report-dir", str(tmp_path / "audit")], run, env)
  assert p.returncode == 0, (p.stdout[-1500:], p.stderr[-1500:])
  rows = json.loads((tmp_path / "audit" / "findings_audit.json").read_text())["findings"]
  assert sorted(r["file"] for r in rows) == sorted(pathlib.Path(n).name for n in shipped), rows
  assert all(r["verdict"] == "confirmed" for r in rows), [r for r in rows if r["verdict"] != "confirmed"]
