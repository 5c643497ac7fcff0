"""A crash is tinygrad's finding only when plain tinygrad raises on its own: the program rebuilt and realized with no
capture, reference or comparison. A crash that needs uopcheck's capture is uopcheck-internal, never a tinygrad bug.
Each check runs in the suite's process: the queue wait a crash mid-realize once seemed to leave was tinygrad's stale queue
counter, worked around once per process (fast/runner.open_cpu_queues)."""
from __future__ import annotations
import pytest
from uopcheck.fuzz.graph import check_program, crashes_without_capture, finalize

# tinygrad 0.14.0: a compare of a row-sharded tensor, copied back to one device, asserts in rangeify (_limit_bufs)
SHARDED_COMPARE = {"inputs": [{"shape": [4, 4], "dtype": "float32", "seed": 1, "kind": "normal", "device": "CPU"}],
                   "steps": [["shard", 0, 0], ["binary", "lt", 1, 1]], "outputs": [2]}
PLAIN = {"inputs": [{"shape": [3, 5], "dtype": "float32", "seed": 2, "kind": "normal", "device": "CPU"}],
         "steps": [["binary", "add", 0, 0]], "outputs": [1]}

def _finalized(desc:dict) -> dict:
  v = check_program(desc)
  d = finalize(desc, v)
  return {"kind": v.kind, "summary": v.summary, "plain": crashes_without_capture(desc), "finding": d["kind"], "finding_summary": d["summary"]}

def test_a_crash_plain_tinygrad_shares_is_tinygrads():
  r = _finalized(SHARDED_COMPARE)
  assert r["kind"] == "crash" and "mselect must be on tuple device" in r["summary"], r
  assert r["plain"] is True and r["finding"] == "graph", r

def test_a_crash_only_under_the_capture_is_uopchecks(monkeypatch:pytest.MonkeyPatch):
  from uopcheck.fast import runner
  def broken(prg): raise RuntimeError("a bug in uopcheck's capture hook")
  monkeypatch.setattr(runner, "_program_name_source", broken)
  r = _finalized(PLAIN)
  assert r["kind"] == "crash" and "capture hook" in r["summary"], r
  assert r["plain"] is False                                             # plain tinygrad realizes it
  assert r["finding"] == "uopcheck-internal" and r["finding_summary"].startswith("raised only under uopcheck's capture"), r

def test_a_jitted_program_is_not_re_run_plainly():
  assert crashes_without_capture({**PLAIN, "jit": 3}) is None
