"""Helpers for the tests that act on a running campaign's processes from outside (kill, stop): which process is running
a case right now."""
from __future__ import annotations
import json, pathlib, time

def running_case_pid(findings:pathlib.Path, proc, wid:int=0, timeout:float=120.0) -> int:
  """the pid of the worker process running a case (from its ``.current-<wid>.json``), as soon as one has started"""
  cur, end = findings / f".current-{wid}.json", time.time() + timeout
  while time.time() < end and proc.poll() is None:
    try: return int(json.loads(cur.read_text())["pid"])
    except (OSError, ValueError, KeyError): time.sleep(0.2)
  raise AssertionError(f"no case started in {timeout:g} s")
