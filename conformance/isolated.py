"""Run a check in a fresh interpreter with a time limit. Checks under a deliberately broken scheduler go through here: in a
process that has already done much Tensor work, such a kernel run sometimes never returns (see README, "Runtime, not yet
pinned down"), and a test must fail or pass, never hang the suite. A run that times out is retried once."""
from __future__ import annotations
import json, subprocess, sys

def run_isolated(code:str, timeout:float=150) -> object:
  """Execute ``code`` (which must print one JSON value as its last line) in a new interpreter, in its own process group
  (tinygrad's compile workers included), killed whole past ``timeout``; return that value. Two time-outs in a row skip the
  test with the reason (the unresolved tinygrad hang) rather than hang the suite."""
  import os, signal, pytest
  for attempt in range(2):
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try: out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
      os.killpg(p.pid, signal.SIGKILL)
      p.wait()
      continue
    assert p.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])
  pytest.skip(f"the check ran past {timeout:g} s twice: the tinygrad CPU hang the README lists under 'Runtime, not yet pinned down'")

def program_ok(desc:dict, scheduler:str|None=None, candidate:str|None=None) -> dict:
  """check_program in a fresh interpreter: {"ok": ..., "wrong": ...}."""
  return run_isolated("import json\nfrom uopcheck.fuzz.graph import check_program\n"
                      f"v = check_program(json.loads({json.dumps(json.dumps(desc))}), scheduler={scheduler!r}, candidate={candidate!r})\n"
                      "print(json.dumps({'ok': v.ok, 'wrong': v.wrong, 'kind': v.kind}))")

def run_cli(cmd:list[str], cwd, timeout:float) -> subprocess.CompletedProcess:
  """A command in its own process group (its workers included), killed whole past ``timeout`` (then an AssertionError)."""
  import os, signal
  p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
  try: out, err = p.communicate(timeout=timeout)
  except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    raise AssertionError(f"{' '.join(cmd[:6])} ... ran past {timeout} s") from None
  return subprocess.CompletedProcess(cmd, p.returncode, out, err)
