"""Findings on disk, shared by the fuzzers: atomic writes (temp file + rename, so a kill never leaves half a file)
and loading a directory of reproducers, where a corrupt file is a one-line SpecError naming it."""
from __future__ import annotations
import json, os, pathlib, tempfile
from typing import Callable
from uopcheck.spec.errors import SpecError

def atomic_write_json(path:pathlib.Path, obj:dict) -> pathlib.Path:
  path.parent.mkdir(parents=True, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
  with os.fdopen(fd, "w") as f: json.dump(obj, f, indent=1)
  os.replace(tmp, path)
  return path

def load_dir(directory:str|os.PathLike, pattern:str, validate:Callable[[dict], None]) -> list[tuple[pathlib.Path, dict]]:
  """Every finding matching ``pattern``; ``validate`` raises ValueError/KeyError/TypeError for a malformed one."""
  out = []
  for path in sorted(pathlib.Path(directory).glob(pattern)):
    try:
      d = json.loads(path.read_text())
      validate(d)
    except (OSError, ValueError, KeyError, TypeError) as e: raise SpecError(f"corrupt finding file: {e}", path.name) from None
    out.append((path, d))
  return out

def campaign_rounds(check_one:Callable, strategy, db, max_examples:int|None, seed_of:Callable[[int], int]|None):
  """Hypothesis test functions for a campaign's rounds: round 0 replays the example database (resuming the last
  campaign); later rounds only generate and shrink, or a stored failure would be re-found forever. Yields one runnable
  per round, seeded by ``seed_of(round)`` when a seed is given."""
  from hypothesis import given, settings, HealthCheck, Phase, seed as hseed
  def make(reuse:bool):
    phases = [Phase.explicit] + ([Phase.reuse] if reuse else []) + [Phase.generate, Phase.shrink]
    return settings(max_examples=max_examples or 10**9, deadline=None, database=db, suppress_health_check=list(HealthCheck), phases=phases,
                    report_multiple_bugs=False)(given(strategy)(check_one))
  first, later = make(True), make(False)
  rnd = 0
  while True:
    prop = first if rnd == 0 else later
    yield prop if seed_of is None else hseed(seed_of(rnd))(prop)
    rnd += 1
