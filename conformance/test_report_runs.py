"""Every reporting command writes under its own run directory and points reports/latest at it; a run never overwrites
the last one's reports, and --report-dir still writes where it is told."""
import json, os
from uopcheck.cli import main

def test_two_runs_keep_two_report_directories_and_latest_points_at_the_last(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert main(["spec"]) == 0
  assert main(["spec", "--op", "cdiv"]) == 0
  runs = sorted((tmp_path / "reports" / "runs").iterdir())
  assert len(runs) == 2 and all(r.name.split("-", 2)[2].startswith("spec") for r in runs)
  first = json.loads((runs[0] / "spec.json").read_text())
  assert "ADD" in first and first["CDIV"]["domain"] == "int"              # the first run's full table is still there
  latest = tmp_path / "reports" / "latest"
  assert latest.is_symlink() and latest.resolve() == runs[1].resolve() and (tmp_path / "reports" / "latest-spec").resolve() == runs[1].resolve()
  assert list(json.loads((latest / "spec.json").read_text())) == ["CDIV"]
  run = json.loads((latest / "run.json").read_text())
  assert run["argv"] == ["uopcheck", "spec", "--op", "cdiv"] and run["exit_code"] == 0 and run["command"] == "spec"

def test_report_dir_writes_where_it_is_told_and_makes_no_run(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert main(["spec", "--report-dir", str(tmp_path / "mine")]) == 0
  assert (tmp_path / "mine" / "spec.json").is_file() and not (tmp_path / "reports").exists()

def test_a_failed_command_records_its_exit_code(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert main(["check", "no-such-graph"]) == 2
  assert not (tmp_path / "reports").exists() or not os.listdir(tmp_path / "reports" / "runs")   # refused before any report

def test_reports_and_findings_are_readable_by_others(tmp_path):
  """files uopcheck writes atomically get an ordinary file's mode (0666 less the umask), not mkstemp's 0600: a CI
  artefact step running as another user reads them"""
  import os
  from uopcheck.atomic import atomic_write_json
  old = os.umask(0o022)
  try: p = atomic_write_json(tmp_path / "report.json", {"ok": True})
  finally: os.umask(old)
  assert os.stat(p).st_mode & 0o777 == 0o644

def test_live_status_is_written_at_once_throttled_and_closed(tmp_path):
  import json
  from uopcheck.live import LiveStatus
  live = LiveStatus(tmp_path, "fuzz-graph", every_s=3600)
  def read():
    return json.loads((tmp_path / "status.json").read_text())
  assert read()["state"] == "running" and read()["phase"] == "starting" and read()["command"] == "fuzz-graph"
  live.update(cases=5)                  # within every_s of the last write: held back
  assert "cases" not in read()
  live.update(force=True, cases=6)
  assert read()["cases"] == 6 and "http-equiv='refresh'" in (tmp_path / "status.html").read_text()
  live.close("interrupted", cases=7)
  assert (read()["state"], read()["cases"]) == ("interrupted", 7) and "refresh" not in (tmp_path / "status.html").read_text()
  (tmp_path / "file-not-dir").write_text("")
  gone = LiveStatus(tmp_path / "file-not-dir" / "x", "fuzz-graph")   # a status that cannot be written never stops the work
  gone.update(force=True, cases=1)
  gone.close()

def test_a_symbolic_campaign_leaves_its_live_status_in_the_run_directory(tmp_path):
  import json
  from uopcheck.cli import main
  assert main(["fuzz", "symbolic", "--minutes", "0.05", "--seed", "1", "--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db"),
               "--report", "json", "--report-dir", str(tmp_path / "r")]) in (0, 1)
  s = json.loads((tmp_path / "r" / "status.json").read_text())
  rep = json.loads((tmp_path / "r" / "fuzz_symbolic.json").read_text())
  assert s["state"] == "finished" and s["checked"] == rep["checked"] > 0 and s["elapsed_s"] > 0
  from uopcheck.live import NOT_TRACKED
  from uopcheck.rulecov.collect import tracking
  if not tracking(): assert s["rules_fired"] == NOT_TRACKED   # this process counts no rule matches: said, not shown as 0

def test_live_status_shows_the_rules_newly_fired_under_coverage(tmp_path):
  """under `uopcheck coverage`, a campaign's live status counts the rules fired so far and names the newest with the
  second each first fired; every one of them is in the coverage data the run leaves"""
  import json, subprocess, sys
  from uopcheck import rulecov
  p = subprocess.run([sys.executable, "-m", "uopcheck.cli", "coverage", "--dir", str(tmp_path / "cov"), "--report", "json", "--",
                      sys.executable, "-m", "uopcheck.cli", "fuzz", "symbolic", "--minutes", "0.1", "--seed", "1", "--no-pipeline",
                      "--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db"), "--report", "json", "--report-dir", str(tmp_path / "r")],
                     capture_output=True, text=True, timeout=240)
  assert p.returncode in (0, 1), p.stderr[-2000:]
  s = json.loads((tmp_path / "r" / "status.json").read_text())
  hits = {k for k, v in rulecov.combine(tmp_path / "cov")["hits"].items() if v} & set(rulecov.rules())   # the rules the report counts
  assert isinstance(s["rules_fired"], int) and 0 < s["rules_fired"] <= len(hits), s.get("rules_fired")
  newest = s["rules_newest"]
  assert 0 < len(newest) <= 10 and all(r["rule"] in hits and r["rule"].startswith("tinygrad/") for r in newest), newest
  times = [r["first_fired_s"] for r in newest]
  assert times == sorted(times) and 0 <= times[0] <= times[-1] <= s["elapsed_s"]
