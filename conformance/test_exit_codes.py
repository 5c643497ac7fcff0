"""One exit-code rule for every command a CI job gates on: 0 nothing new, 1 new findings (or refuted rules, or a failing
gate), 2 usage or input error, 3 a uopcheck-internal error."""
from __future__ import annotations
import json, re
import pytest
from uopcheck import cli
from uopcheck.cli import main

@pytest.mark.parametrize("argv", [["nope"], ["check", "--bogus"], ["fuzz", "graph", "--minutes", "x"], ["rules", "prove"], ["train", "--steps", "x"]])
def test_usage_errors_exit_2(argv):
  assert main(argv) == 2

def test_check_exits_0_clean_and_1_on_a_disagreement(capsys):
  assert main(["check", "matmul"]) == 0
  assert main(["check", "matmul_relu_sum", "--scheduler", "uopcheck.fuzz.graph_campaign:_broken_scheduler"]) == 1
  assert main(["check", "no_such_graph"]) == 2

def test_check_on_a_device_that_cannot_run_here_is_one_line_and_exit_2(capsys, tmp_path):
  """--device: a device this machine lacks (no NVIDIA driver in CI) or one uopcheck never runs on is refused before any case"""
  for dev, needle in (("CUDA", "--device CUDA: cannot run here"), ("DISK:/etc/passwd", "not one uopcheck runs on")):
    assert main(["check", "matmul", "--device", dev, "--report-dir", str(tmp_path / dev.replace("/", "_"))]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and needle in err[0], err
  assert main(["check", "matmul", "--device", "CPU", "--report-dir", str(tmp_path / "cpu")]) == 0
  assert "ref vs fast on CPU" in capsys.readouterr().out

def test_check_from_a_fresh_process_as_make_demo_runs_it(tmp_path):
  """the CLI imports tinygrad before it sets HCQ2=1: realize.py then lacks the HCQ2 compile functions it imports only
  under HCQ2, and every realize failed with NameError: hcq_compile (make demo, any fresh `uopcheck check`)"""
  import subprocess, sys, os
  env = {k: v for k, v in os.environ.items() if k != "HCQ2"}
  r = subprocess.run([sys.executable, "-m", "uopcheck.cli", "check", "matmul", "--report-dir", str(tmp_path)], capture_output=True,
                     text=True, env=env, timeout=300)
  assert r.returncode == 0 and "1/1 graphs agree" in r.stdout and "HCQ2 path" in r.stdout, r.stdout[-1500:] + r.stderr[-1500:]

def test_rules_verify_exits_1_exactly_when_a_rule_is_refuted(capsys, tmp_path):
  # x//-1 -> -x is wrong on unsigned ints: refuted, so exit 1 while it is not on the reviewed list, 0 once it is
  known = tmp_path / "known.json"
  known.write_text("{}")
  args = ["rules", "verify", "--only", "tinygrad/uop/symbolic.py:116", "--workers", "1", "--report-dir", str(tmp_path / "r"), "--known", str(known)]
  assert main(args) == 1
  assert "REFUTED tinygrad/uop/symbolic.py:116" in capsys.readouterr().out
  known.write_text(json.dumps({"tinygrad/uop/symbolic.py:116": "reviewed"}))
  assert main(args) == 0
  known.write_text("{not json")
  assert main(args) == 2 and "corrupt known-rules file" in capsys.readouterr().err
  # a sound rule (x*1 -> x, symbolic.py:113) is proved: exit 0
  assert main(["rules", "verify", "--only", "tinygrad/uop/symbolic.py:113", "--workers", "1", "--report-dir", str(tmp_path / "r")]) == 0

def test_fuzz_symbolic_exit_code_follows_what_it_found(tmp_path, capsys):
  rc = main(["fuzz", "symbolic", "--minutes", "0.15", "--seed", "3", "--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db")])
  out = capsys.readouterr().out
  new, internal = len(re.findall(r"^  (?:NEW|UNSHRUNK) ", out, re.M)), len(re.findall(r"^  uopcheck-internal", out, re.M))
  assert rc == (1 if new else 3 if internal else 0), out[-2000:]   # new findings beat uopcheck-internal ones (both reported)
  assert len(list((tmp_path / "f").glob("symbolic-*.json"))) == new

def test_bad_input_files_exit_2_and_internal_errors_exit_3(tmp_path, capsys, monkeypatch):
  (tmp_path / "db").write_text("a file")
  assert main(["fuzz", "symbolic", "--minutes", "0.05", "--db", str(tmp_path / "db"), "--findings", str(tmp_path / "f")]) == 2
  assert "is a file, not a directory" in capsys.readouterr().err
  assert main(["findings", "promote", str(tmp_path / "nope.json"), "--to", str(tmp_path / "c")]) == 2
  def boom(args): raise RuntimeError("a bug in uopcheck")
  monkeypatch.setattr(cli, "_cmd_spec", boom)
  assert main(["spec"]) == 3
  assert "internal error" in capsys.readouterr().err

def test_version_names_uopcheck_and_the_tinygrad_it_checks(capsys):
  assert main(["--version"]) == 0
  out = capsys.readouterr().out
  from importlib.metadata import version
  assert out.startswith("uopcheck ") and f"tinygrad {version('tinygrad')}" in out and version("tinygrad") == "0.14.0", out

def test_every_flag_and_argument_has_help_text():
  import argparse
  from uopcheck.cli import build_parser
  missing = []
  def walk(p, path):
    for a in p._actions:
      if isinstance(a, argparse._SubParsersAction):
        for name, sp in a.choices.items(): walk(sp, path + [name])
      elif not isinstance(a, argparse._HelpAction) and not a.help: missing.append(f"{' '.join(path)} {a.option_strings or a.dest}")
  walk(build_parser(), ["uopcheck"])
  assert not missing, missing

@pytest.mark.parametrize("argv,says", [
  (["fuzz", "graph", "--minutes", "-1"], "--minutes: must be above 0"),
  (["fuzz", "graph", "--minutes", "0"], "--minutes: must be above 0"),
  (["fuzz", "graph", "--workers", "0"], "--workers: must be above 0"),
  (["rules", "verify", "--workers", "0"], "--workers: must be above 0"),
  (["check", "--graph-timeout", "0"], "--graph-timeout: must be above 0"),
  (["mutate", "--graph-minutes", "-2"], "--graph-minutes: must be above 0")])
def test_a_budget_or_count_that_would_do_nothing_is_refused(argv, says, capsys):
  """a typo'd CI budget (0, -1) ran nothing and exited 0 -- green (issue 32)"""
  assert main(argv) == 2 and says in capsys.readouterr().err

def test_rules_verify_only_names_a_rule_exactly_and_must_match(tmp_path, capsys):
  """--only matched by substring ('symbolic.py:11' selected 8 rules) and a name matching nothing ran 0 rules, exit 0"""
  from uopcheck.fuzz.rule_verify import all_rules
  assert [r.key for r in all_rules(["symbolic.py:113"])] == ["tinygrad/uop/symbolic.py:113"]
  assert [r.key for r in all_rules(["uop/symbolic.py:113"])] == [r.key for r in all_rules(["tinygrad/uop/symbolic.py:113"])]
  assert len(all_rules(["sym"])) > 50   # a matcher, by its exact name
  for bad in ("nosuchrule", "symbolic.py:11"):
    assert main(["rules", "verify", "--only", bad, "--workers", "1", "--report-dir", str(tmp_path / "r")]) == 2
    assert f"--only {bad}: no rule is that FILE:LINE or matcher" in capsys.readouterr().err

def test_train_device_with_an_index_is_one_usage_line_before_any_work(capsys, tmp_path):
  """``--device CPU:1`` once ended in "device CPU cannot be opened: CPU has no renderer '1'" after the corpus was written:
  tinygrad 0.14's DEV reads a device index as a renderer name"""
  assert main(["train", "--device", "CPU:1", "--steps", "1", "--out", str(tmp_path / "run")]) == 2
  err = capsys.readouterr().err.strip()
  assert len(err.splitlines()) == 1 and "a device index cannot be the default device" in err and "--devices N" in err, err
  assert not (tmp_path / "run").exists()

def test_train_unknown_config_is_a_usage_error(capsys):
  assert main(["train", "--config", "bogus", "--report", "term"]) == 2
  assert "--config 'bogus': unknown model config; known: tiny" in capsys.readouterr().err

@pytest.mark.parametrize("argv,says", [
  (["fuzz", "symbolic", "--scheduler", "x:y"], "fuzz symbolic: --scheduler is for fuzz graph only"),
  (["fuzz", "symbolic", "--workers", "2", "--profile", "large", "--device", "CPU"], "fuzz symbolic: --device, --profile are for fuzz graph only"),
  (["fuzz", "graph", "--no-pipeline"], "fuzz graph: --no-pipeline is for fuzz symbolic only"),
  (["check", "matmul", "--scheduler", "nosuch:fn"], "cannot load scheduler 'nosuch:fn'")])
def test_flags_another_command_reads_and_unloadable_schedulers_are_refused(argv, says, capsys):
  """graph-only flags given to fuzz symbolic were ignored silently; check --scheduler nosuch:fn exited 1 where fuzz exits 2"""
  assert main(argv + ["--report", "term"]) == 2 and says in capsys.readouterr().err

def test_ctrl_c_during_a_z3_check_is_an_interrupt_never_a_verdict():
  """z3 catches SIGINT itself and answers unknown ("interrupted from keyboard"): spec.z3model.check raises it instead"""
  import os, signal, threading, time, z3
  from uopcheck.spec.z3model import check
  ctx = z3.Context()
  x, y = z3.BitVecs("x y", 64, ctx)
  s = z3.Solver(ctx=ctx)
  s.add(x * y == 0x123456789ABCDEF1, z3.UGT(x, 1), z3.UGT(y, 1), z3.UDiv(x, y) + x * x * y == 12345678912345)
  threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
  t = time.perf_counter()
  with pytest.raises(KeyboardInterrupt): check(s)
  assert time.perf_counter() - t < 5

@pytest.mark.parametrize("argv,partial", [(["rules", "verify", "--workers", "1", "--report", "json"], "rules_done"),
                                          (["fuzz", "symbolic", "--minutes", "3", "--report", "json"], "interrupted")])
def test_ctrl_c_stops_within_a_second_writes_a_partial_report_and_exits_130(argv, partial, tmp_path):
  import os, signal, subprocess, sys, time
  extra = ["--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db")] if argv[0] == "fuzz" else []
  p = subprocess.Popen([sys.executable, "-c", "import sys; from uopcheck.cli import main; sys.exit(main(sys.argv[1:]))", *argv, *extra,
                        "--report-dir", str(tmp_path / "r")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
  time.sleep(10)
  t = time.perf_counter()
  os.killpg(p.pid, signal.SIGINT)   # as a terminal does: the whole process group, workers included
  out = p.communicate(timeout=60)[0].decode()
  assert p.returncode == 130 and time.perf_counter() - t < 5, out[-2000:]
  reports = list((tmp_path / "r").rglob("*.json"))
  data = [json.loads(f.read_text()) for f in reports if f.name != "run.json"]
  assert data and (data[0].get("partial", {}).get(partial) is not None if partial == "rules_done" else data[0]["interrupted"]), out[-2000:]

def _sleep_a_little() -> None:
  import time
  time.sleep(1.5)

@pytest.mark.parametrize("ignored", [True, False])
def test_a_worker_started_under_sigint_ignored_survives_a_ctrl_c_while_it_starts(ignored):
  """the window that once hung the rules pool's teardown: a Ctrl-C sent to the process group while a spawned worker is
  still importing killed it mid-start; started inside ``sigint_ignored`` it ignores SIGINT from its first instruction
  (and without it, the same signal kills it: the test can fail)"""
  import contextlib, multiprocessing as mp, os, signal
  from uopcheck.interrupts import sigint_ignored
  p = mp.get_context("spawn").Process(target=_sleep_a_little)
  before = signal.signal(signal.SIGINT, signal.default_int_handler)   # as in a terminal (a test runner's worker may ignore it)
  try:
    with sigint_ignored() if ignored else contextlib.nullcontext(): p.start()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler   # this process's own Ctrl-C is back
  finally: signal.signal(signal.SIGINT, before)
  assert p.pid is not None
  os.kill(p.pid, signal.SIGINT)   # at once: the child is still starting its interpreter
  p.join(30)
  assert (p.exitcode == 0) == ignored, p.exitcode

def test_new_findings_beat_internal_errors_in_the_exit_code():
  from uopcheck.fuzz.findings_io import exit_code
  assert exit_code(new=2, internal=1) == 1 and exit_code(internal=1) == 3 and exit_code(new=1) == 1 and exit_code() == 0

def test_replay_says_still_failing_or_fixed_per_finding(tmp_path, capsys):
  """uopcheck replay: the --lf of campaigns. A shipped finding still fails on this tinygrad (exit 1); the same record over a
  program tinygrad gets right is fixed (exit 0); a file that is not a finding is refused (exit 2)"""
  from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS
  shipped = SHIPPED_FINDINGS / "graph-70614493c4df.json"
  r = ["--report", "json", "--report-dir", str(tmp_path / "r")]
  assert main(["replay", str(shipped), str(SHIPPED_FINDINGS / "symbolic-e2dd844b7150.json"), *r]) == 1
  rows = json.loads((tmp_path / "r" / "replay.json").read_text())["findings"]
  assert [x["verdict"] for x in rows] == ["still failing", "still failing"]
  d = json.loads(shipped.read_text())
  d["program"] = {"inputs": [{"shape": [4], "dtype": "float32", "seed": 1}], "steps": [["unary", "neg", 0]], "outputs": [1]}
  fixed = tmp_path / "f" / shipped.name
  fixed.parent.mkdir()
  fixed.write_text(json.dumps(d))
  assert main(["replay", str(fixed.parent), *r]) == 0
  assert json.loads((tmp_path / "r" / "replay.json").read_text())["findings"][0]["verdict"] == "fixed"
  (tmp_path / "f" / "graph-000000000000.json").write_text("{not json")
  assert main(["replay", str(fixed.parent), *r]) == 2
  capsys.readouterr()
  # a path that is not there is a usage error naming it, like `findings audit`'s, before any finding runs
  assert main(["replay", str(shipped), str(tmp_path / "gone.json"), *r]) == 2
  assert "gone.json: no such finding file or directory" in capsys.readouterr().err

def test_a_misspelled_command_gets_a_did_you_mean(capsys):
  assert main(["chek"]) == 2 and "did you mean 'check'?" in capsys.readouterr().err
  assert main(["rules", "verfy"]) == 2 and "did you mean 'verify'?" in capsys.readouterr().err

@pytest.mark.parametrize("argv", [["fuzz", "graph", "--findings", "FILE"], ["fuzz", "symbolic", "--findings", "FILE/sub"],
                                  ["spec", "--report-dir", "FILE"], ["train", "--out", "FILE"], ["coverage", "--dir", "FILE", "--", "true"],
                                  ["findings", "promote", "x", "--to", "FILE"]])
def test_a_file_where_a_directory_is_asked_for_is_one_line_and_exit_2(argv, tmp_path, capsys):
  f = tmp_path / "a-file"
  f.write_text("x")
  assert main([str(f) + a[4:] if a.startswith("FILE") else a for a in argv]) == 2
  err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
  assert "is a file, not a directory" in err[-1] and "a-file" in err[-1] and not any("Traceback" in ln for ln in err)

def test_findings_that_cannot_be_written_stop_the_campaign_not_file_a_finding(tmp_path):
  """the write helper every campaign file goes through turns the OSError into the one stop (never a case failing: it is a
  BaseException, so hypothesis does not shrink it), and the probe before a campaign names the directory and the cause"""
  from uopcheck.fuzz.findings_io import FindingsUnwritable, write_or_stop, probe_writable
  blocker = tmp_path / "blocker"
  blocker.write_text("x")
  with pytest.raises(FindingsUnwritable, match="cannot write .*blocker/f.json: (File exists|Not a directory)"): write_or_stop(blocker / "f.json", {})
  assert not issubclass(FindingsUnwritable, Exception)
  with pytest.raises(FindingsUnwritable, match=r"cannot write findings in .*blocker/d: Not a directory"): probe_writable(blocker / "d")
  probe_writable(tmp_path / "ok" / "d")
  assert (tmp_path / "ok" / "d").is_dir() and not list((tmp_path / "ok" / "d").iterdir())   # the probe leaves nothing behind

@pytest.fixture
def small_disk(tmp_path):
  """a 1 MiB tmpfs (root with mount rights, as CI runs); skipped where it cannot be mounted"""
  import shutil, subprocess
  d = tmp_path / "disk"
  d.mkdir()
  if not shutil.which("mount") or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(d)], capture_output=True).returncode:
    pytest.skip("cannot mount a tmpfs here (needs root with mount rights)")
  yield d
  subprocess.run(["umount", "-l", str(d)], capture_output=True)

@pytest.mark.slow
@pytest.mark.parametrize("fuzzer,extra", [("graph", ["--workers", "1", "--self-test-bug"]), ("symbolic", ["--workers", "2", "--no-pipeline"])])
def test_a_supervised_campaign_whose_disk_fills_stops_at_once_with_one_line_and_exit_3(small_disk, tmp_path, fuzzer, extra):
  import os, subprocess, sys, time
  cmd = [sys.executable, "-m", "uopcheck.cli", "fuzz", fuzzer, "--minutes", "3", "--seed", "5", *extra,
         "--case-timeout", "20", "--findings", str(small_disk / "f"), "--db", str(tmp_path / "db"), "--report", "json"]
  p = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  deadline = time.time() + 120
  while time.time() < deadline and not (small_disk / "f" / ".current-0.json").exists(): time.sleep(0.5)
  fd = os.open(small_disk / "fill", os.O_WRONLY | os.O_CREAT)   # the disk fills while the worker runs
  try:
    while os.write(fd, b"\0" * 4096): pass
  except OSError: pass
  finally: os.close(fd)
  t0 = time.time()
  out, err = p.communicate(timeout=120)
  assert p.returncode == 3 and time.time() - t0 < 60, err[-2000:]    # stopped, not run to its 3-minute budget
  stopped = err.splitlines()[-2]   # (the last names the run directory)
  assert "Traceback" not in out + err and "No space left on device" in stopped, (out[-3000:], err[-3000:])
  assert stopped.startswith(f"uopcheck: fuzz {fuzzer} stopped: cannot write"), err[-2000:]
  rep = json.loads((tmp_path / "reports" / "latest" / f"{'graph_campaign' if fuzzer == 'graph' else 'fuzz_symbolic'}.json").read_text())
  assert "No space left on device" in rep["unwritable"] and not rep["lost_cases"]   # not filed as a crash finding
  (small_disk / "fill").unlink()
  q = subprocess.run(cmd[:6] + ["0.1"] + cmd[7:], cwd=tmp_path, capture_output=True, text=True, timeout=120)
  assert q.returncode in (0, 1), q.stderr[-2000:]   # with room again it runs

def test_dev_from_the_environment_is_obeyed_or_refused_in_one_line(monkeypatch, capsys, tmp_path):
  """DEV=PYTHON was silently overridden by CPU: now it is --device's default, checked like --device"""
  from uopcheck.cli import device_from_environment
  monkeypatch.setenv("DEV", "PYTHON")
  assert main(["check", "matmul", "--report", "term"]) == 2
  err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
  assert len(err) == 1 and "DEV=PYTHON (from the environment, the default of --device)" in err[0] and "not one uopcheck runs on" in err[0]
  assert device_from_environment("CPU") == "CPU"                 # --device given beats DEV
  monkeypatch.setenv("DEV", "CPU:1")
  assert device_from_environment(None) == "CPU:1"               # obeyed
  monkeypatch.delenv("DEV")
  assert device_from_environment(None) == "CPU"
  assert main(["fuzz", "graph", "--minutes", "0.01", "--report", "term", "--findings", str(tmp_path / "f"), "--db", str(tmp_path / "db"),
               "--device", "DISK:/etc/passwd"]) == 2

@pytest.mark.parametrize("var,value", [("HCQ2", "abc"), ("DEBUG", "x")])
def test_a_non_integer_tinygrad_setting_is_one_line_and_exit_2(var, value, tmp_path):
  """tinygrad reads DEBUG, HCQ2, BEAM ... as integers when it is imported, and a bad one ended every command in its
  ValueError traceback: now one line naming the variable, exit 2, before any work"""
  import os, subprocess, sys
  p = subprocess.run([sys.executable, "-m", "uopcheck.cli", "check", "matmul"], cwd=tmp_path, env={**os.environ, var: value},
                     capture_output=True, text=True, timeout=120)
  err = [ln for ln in p.stderr.splitlines() if ln.strip()]
  assert p.returncode == 2 and len(err) == 1 and f"{var}={value!r}" in err[0], p.stderr[-1500:]
  assert not (tmp_path / "reports").exists()

@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_a_destructor_swallowed_still_stops_the_campaign():
  """A Ctrl-C that lands while Python runs a ``__del__`` (z3's Context.__del__ during garbage collection) is printed as
  "Exception ignored" and lost; ``fuzz symbolic`` then ran on past the test's 60 s (CI, once). Inside ``sticky_sigint``
  it is remembered, and the campaign's next case raises it; outside, nothing is left of it"""
  import signal, threading
  from uopcheck.interrupts import sticky_sigint, raise_if_interrupted
  if threading.current_thread() is not threading.main_thread(): pytest.skip("signals are delivered to the main thread only")
  class Collected:
    def __del__(self): signal.raise_signal(signal.SIGINT)   # the Ctrl-C arrives during the destructor
  with sticky_sigint():
    x = Collected()
    del x                                                  # KeyboardInterrupt raised in __del__, swallowed there
    with pytest.raises(KeyboardInterrupt): raise_if_interrupted()
  raise_if_interrupted()                                   # outside the block: no stale interrupt

def test_a_ctrl_c_that_ctypes_wrapped_in_another_exception_is_still_a_ctrl_c():
  """A Ctrl-C raised inside a C call's error check (z3's ``Z3_get_ast_id``) surfaces from ctypes as ``ArgumentError:
  argument 1: KeyboardInterrupt``; ``fuzz symbolic`` reported it as a uopcheck internal error and exited 3 instead of 130
  (CI, once). An exception that escapes ``sticky_sigint`` after a Ctrl-C landed is that Ctrl-C; without one it is itself."""
  import ctypes, signal, threading
  from uopcheck.interrupts import sticky_sigint
  if threading.current_thread() is not threading.main_thread(): pytest.skip("signals are delivered to the main thread only")
  with pytest.raises(KeyboardInterrupt):
    with sticky_sigint():
      try: signal.raise_signal(signal.SIGINT)
      except KeyboardInterrupt as e: raise ctypes.ArgumentError(f"argument 1: {type(e).__name__}: ") from None
  with pytest.raises(ctypes.ArgumentError):
    with sticky_sigint(): raise ctypes.ArgumentError("argument 1: a real bad argument")
