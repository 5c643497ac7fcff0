"""The C compiler's per-kernel warnings are captured per compile: shown once with a count, in full under DEBUG=1."""
import os, shutil, subprocess, sys
import pytest

WARNING = "warning: invalid feature combination: +avx10.1-256"

@pytest.fixture
def noisy_cc(tmp_path):
  """a real compiler behind a wrapper that prints what clang prints on the CPUs where it complains"""
  real = os.environ.get("UOPCHECK_REAL_CC") or os.environ.get("CC") or "clang"   # the suite's own CC is a capture wrapper
  if real is None or shutil.which(real) is None: pytest.skip("no clang")
  w = tmp_path / "noisy-clang"
  w.write_text(f"#!/bin/sh\necho '{WARNING}' >&2\necho '1 warning generated.' >&2\nexec {shutil.which(real)} \"$@\"\n")
  w.chmod(0o755)
  return str(w)

def _check(cc:str, debug:str|None) -> subprocess.CompletedProcess:
  env = {**os.environ, "CC": cc, "CACHELEVEL": "0"}   # no compile cache: every kernel compiles
  env.pop("DEBUG", None)
  if debug: env["DEBUG"] = debug
  return subprocess.run([sys.executable, "-m", "uopcheck.cli", "check", "softmax"], capture_output=True, text=True, env=env, timeout=600)

def test_compiler_warnings_are_shown_once_with_a_count(noisy_cc):
  r = _check(noisy_cc, None)
  assert r.returncode == 0, r.stderr[-2000:]
  assert WARNING not in r.stdout   # the table is clean
  lines = [ln for ln in r.stderr.splitlines() if WARNING in ln]
  assert len(lines) == 1, r.stderr[-2000:]
  n = int(lines[0].split("x")[0])
  assert n >= 2 and f"lines in {n} of {n} compiles" in r.stderr   # every compile printed it; counted, not repeated

def test_debug_shows_the_compiler_output_per_compile(noisy_cc):
  r = _check(noisy_cc, "1")
  assert r.returncode == 0, r.stderr[-2000:]
  assert sum(1 for ln in r.stderr.splitlines() if ln.strip() == WARNING) >= 2

def test_a_failing_compile_fails_as_before_and_prints_its_output(tmp_path):
  from uopcheck import compiler_output
  bad = tmp_path / "bad-cc"
  bad.write_text("#!/bin/sh\necho 'error: boom' >&2\nexit 3\n")
  bad.chmod(0o755)
  saved = dict(os.environ)
  try:
    os.environ["CC"] = str(bad)
    log = compiler_output.capture()
    assert log is not None
    r = subprocess.run([os.environ["CC"], "-c", "x.c"], capture_output=True, text=True)
    assert r.returncode == 3 and "error: boom" in r.stderr   # shown in full, exit status kept
    got = compiler_output.collected()
    assert got.compiles == 1 and got.lines["error: boom"] == 1 and log.exists()
    compiler_output.release()
    assert dict(os.environ) == {**saved, "CC": str(bad)}   # released: the environment before it
    assert log.parent.exists()   # the wrapper outlives the release (compile workers started under it still call it) ...
  finally:
    os.environ.clear()
    os.environ.update(saved)   # the suite's own capture stays in place

def test_a_released_capture_is_removed_at_exit(tmp_path):
  """... and is gone when the process exits: no /tmp/uopcheck-cc-* directory is left behind"""
  code = ("from uopcheck import compiler_output as c; import os; log = c.capture(); c.release(); "
          "print(log.parent); assert log.parent.exists() and os.environ.get('UOPCHECK_CC_LOG') != str(log)")
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
  assert r.returncode == 0, r.stderr[-1500:]
  import pathlib
  d = pathlib.Path(r.stdout.strip())
  assert d.name.startswith("uopcheck-cc-") and not d.exists()
