"""Run a check in a fresh interpreter with a time limit. Checks under a deliberately broken scheduler go through here: in a
process that has already done much Tensor work, such a kernel run sometimes never returns (see README, "Runtime, not yet
pinned down"), and a test must fail or pass, never hang the suite. A run that times out is retried once."""
from __future__ import annotations
import json, subprocess, sys

def run_isolated(code:str, timeout:float=180) -> object:
  """Execute ``code`` (which must print one JSON value as its last line) in a new interpreter; return that value."""
  for attempt in range(2):
    try: p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
      if attempt: raise
      continue
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])
  raise AssertionError("unreachable")

def program_ok(desc:dict, scheduler:str|None=None, candidate:str|None=None) -> dict:
  """check_program in a fresh interpreter: {"ok": ..., "wrong": ...}."""
  return run_isolated("import json\nfrom uopcheck.fuzz.graph import check_program\n"
                      f"v = check_program(json.loads({json.dumps(json.dumps(desc))}), scheduler={scheduler!r}, candidate={candidate!r})\n"
                      "print(json.dumps({'ok': v.ok, 'wrong': v.wrong, 'kind': v.kind}))")
