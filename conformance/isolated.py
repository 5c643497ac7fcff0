"""Run a check in a fresh interpreter with a time limit, and a command in its own process group. A check goes through
``run_isolated`` only when what it measures depends on the process's history -- z3's nonlinear search after earlier solves
(test_oracle_agreement.py). Graph checks used to (a broken scheduler's kernel sometimes never returned in a long process);
that was tinygrad's stale HCQ2 queue counter, now worked around in every process (fast/runner.open_cpu_queues), and
they run in the suite's process. A run that times out is retried once."""
from __future__ import annotations
import json, subprocess, sys

def run_isolated(code:str, timeout:float=150) -> object:
  """Execute ``code`` (which must print one JSON value as its last line) in a new interpreter, in its own process group
  (tinygrad's compile workers included), killed whole past ``timeout``; return that value. Two time-outs in a row fail the
  test (an AssertionError) rather than hang the suite."""
  import os, signal
  for attempt in range(2):
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try: out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
      os.killpg(p.pid, signal.SIGKILL)
      p.wait()
      continue
    assert p.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])
  raise AssertionError(f"the check ran past {timeout:g} s twice")

def run_cli(cmd:list[str], cwd, timeout:float) -> subprocess.CompletedProcess:
  """A command in its own process group (its workers included), killed whole past ``timeout`` (then an AssertionError)."""
  import os, signal
  p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
  try: out, err = p.communicate(timeout=timeout)
  except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    raise AssertionError(f"{' '.join(cmd[:6])} ... ran past {timeout} s") from None
  return subprocess.CompletedProcess(cmd, p.returncode, out, err)
