"""Hypothesis profiles dev / ci / nightly scale every property test's stated example count; chosen by environment or
pytest's --hypothesis-profile."""
import os, pathlib, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CODE = "from uopcheck.settings import register_hypothesis_profiles as r; r(); from conformance.profiles import examples; print(examples(300))"

def _examples(profile:str) -> subprocess.CompletedProcess:
  env = {**os.environ, "UOPCHECK_HYPOTHESIS_PROFILE": profile}
  return subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)

def test_profiles_scale_the_stated_example_counts():
  assert [_examples(p).stdout.strip() for p in ("dev", "ci", "nightly")] == ["75", "300", "3000"]
  bad = _examples("sometimes")
  assert bad.returncode != 0 and "UOPCHECK_HYPOTHESIS_PROFILE='sometimes'" in bad.stderr

def test_pytest_option_selects_the_profile(tmp_path):
  t = ROOT / "conformance" / f"test_zz_profile_probe_{os.getpid()}.py"
  t.write_text("from hypothesis import settings\ndef test_probe():\n  assert settings.default.max_examples == 25\n")
  try:
    r = subprocess.run([sys.executable, "-m", "pytest", str(t), "-q", "-p", "no:cacheprovider", "--hypothesis-profile", "dev"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
  finally: t.unlink()
  assert r.returncode == 0, r.stdout[-2000:]

def test_campaign_profiles_scale_the_shrink_budget(monkeypatch, tmp_path):
  """a campaign runs to its deadline under any profile; the profile sets how many property calls shrink one finding"""
  import time
  from hypothesis import strategies as st
  from uopcheck.fuzz.campaign import Campaign
  budgets = {}
  for prof in ("dev", "ci", "nightly"):
    monkeypatch.setenv("UOPCHECK_HYPOTHESIS_PROFILE", prof)
    budgets[prof] = Campaign(st.integers(), lambda x: None, lambda f: None, time.perf_counter(), tmp_path / "p.json", shrink_budget=200).shrink_budget
  assert budgets == {"dev": 50, "ci": 200, "nightly": 800}

def test_fuzz_option_selects_the_campaign_profile(tmp_path):
  import json
  env = {k: v for k, v in os.environ.items() if k != "UOPCHECK_HYPOTHESIS_PROFILE"}
  r = subprocess.run([sys.executable, "-m", "uopcheck.cli", "fuzz", "graph", "--minutes", "0.05", "--hypothesis-profile", "nightly", "--seed", "1",
                      "--findings", str(tmp_path / "f"), "--report-dir", str(tmp_path / "r")], capture_output=True, text=True, env=env, cwd=ROOT,
                     timeout=300)
  assert r.returncode in (0, 1), r.stderr[-2000:]
  assert json.loads((tmp_path / "r" / "graph_campaign.json").read_text())["hypothesis_profile"] == "nightly"
  assert "hypothesis profile nightly" in r.stdout
