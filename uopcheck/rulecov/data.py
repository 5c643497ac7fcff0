"""Data: each process that measures writes ``rulecov.<pid>.json`` (hits per rule id, and the tests that hit each) into
the data directory; ``combine`` merges them, as coverage.py combines its ``.coverage.*`` files. A process started with
``UOPCHECK_RULECOV_DIR`` (campaign workers, ``uopcheck coverage -- CMD``) leaves its file at exit (``record_at_exit``)."""
from __future__ import annotations
import atexit, json, os, pathlib, sys
from collections import defaultdict
from uopcheck.atomic import atomic_write_json
from uopcheck.rulecov.collect import hits

def write_data(directory:str|os.PathLike, tests:dict[str, set[str]]|None=None) -> pathlib.Path:
  d = pathlib.Path(directory)
  d.mkdir(parents=True, exist_ok=True)
  return atomic_write_json(d / f"rulecov.{os.getpid()}.json", {"hits": hits(), "tests": {k: sorted(v) for k, v in (tests or {}).items()}}, None)

def data_files(directory:str|os.PathLike) -> list[pathlib.Path]:
  """the per-process data files (``rulecov.<pid>.json``) -- not the report (``rulecov.report.json``) written beside them"""
  return sorted(f for f in pathlib.Path(directory).glob("rulecov.*.json") if f.name.split(".")[1].isdigit())

def combine(directory:str|os.PathLike) -> dict:
  """Merge every process's data file: hits add up, the tests that hit a rule are united."""
  tot: dict[str, int] = defaultdict(int)
  tests: dict[str, set[str]] = defaultdict(set)
  for f in data_files(directory):
    try: d = json.loads(f.read_text())
    except (OSError, ValueError) as e: raise ValueError(f"{f.name}: corrupt rule-coverage data file: {e}") from None
    for k, v in d["hits"].items(): tot[k] += v
    for k, v in d.get("tests", {}).items(): tests[k].update(v)
  return {"hits": dict(tot), "tests": {k: sorted(v) for k, v in tests.items()}}

_registered = False

def record_at_exit() -> None:
  """a process under ``UOPCHECK_RULECOV_DIR`` writes its data file when it exits (if it imported tinygrad at all)"""
  global _registered
  if _registered or not (os.environ.get("UOPCHECK_RULECOV_DIR") and os.environ.get("TRACK_MATCH_STATS")): return
  _registered = True
  atexit.register(lambda: "tinygrad.uop.ops" in sys.modules and write_data(os.environ["UOPCHECK_RULECOV_DIR"]))
