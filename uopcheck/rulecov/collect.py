"""Collection: tinygrad's own match statistics. With TRACK_MATCH_STATS=1 set *before tinygrad is imported*, every
PatternMatcher is a TrackedPatternMatcher and ``tinygrad.uop.ops.match_stats[upat][0]`` counts its matches. A rule's
stable id is its file:line (``UPat.location``) plus the module and name of the matcher that defines it."""
from __future__ import annotations
import functools, importlib, os, pathlib, sys
from collections import defaultdict

MODULES = ["tinygrad.uop.symbolic", "tinygrad.uop.divandmod", "tinygrad.uop.weak", "tinygrad.schedule.rangeify", "tinygrad.schedule.indexing",
           "tinygrad.codegen", "tinygrad.codegen.simplify", "tinygrad.codegen.late.devectorizer", "tinygrad.codegen.late.expander",
           "tinygrad.codegen.decomp.op", "tinygrad.codegen.decomp.dtype", "tinygrad.codegen.late.linearizer", "tinygrad.codegen.opt.postrange"]

def enable() -> None:
  """Turn on tinygrad's match statistics; must happen before tinygrad is imported."""
  if "tinygrad.uop.ops" in sys.modules and not os.environ.get("TRACK_MATCH_STATS"):
    raise RuntimeError("rule coverage must be enabled before tinygrad is imported (TRACK_MATCH_STATS is read at import)")
  os.environ["TRACK_MATCH_STATS"] = "1"
  os.environ.setdefault("PRINT_MATCH_STATS", "0")
  # tinygrad compiles a many-kernel linear in spawned worker processes that run with TRACK_MATCH_STATS=0
  # (engine/worker.py), so the codegen rules they fire would be lost: compile in-process while measuring
  os.environ.setdefault("PARALLEL", "0")

def _tinygrad_dir() -> pathlib.Path:
  import tinygrad
  return pathlib.Path(tinygrad.__file__).parent

def rules(select:list[str]|None=None) -> dict[str, dict]:
  """Every rule of the known matchers: id (``uopcheck.rule_id``: tinygrad/uop/symbolic.py:295) -> {matcher, file, line, pattern};
  ``select`` filters by substring."""
  from uopcheck.rule_id import rule_key_of
  base = _tinygrad_dir()
  out: dict[str, dict] = {}
  for modname in MODULES:
    try: mod = importlib.import_module(modname)
    except ImportError: continue
    if mod.__file__ is None: continue
    mfile = str(pathlib.Path(mod.__file__).resolve())
    pms = [(n, o) for n, o in vars(mod).items() if hasattr(o, "patterns") and hasattr(o, "pdict")]
    for name, obj in sorted(pms, key=lambda x: (len(x[1].patterns), x[0])):  # the smallest matcher holding a rule names it
      matcher = f"{modname.replace('tinygrad.', '')}.{name}"
      if select and not any(s in matcher for s in select): continue
      for p, _ in obj.patterns:
        f, line = p.location
        if str(pathlib.Path(f).resolve()) != mfile: continue  # a rule belongs to the module that defines it
        rid = rule_key_of(f"tinygrad/{pathlib.Path(f).resolve().relative_to(base)}", line)
        out.setdefault(rid, {"matcher": matcher, "file": str(pathlib.Path(f).resolve().relative_to(base)), "line": line,
                             "pattern": _pattern_text(f, line)})
  return out

@functools.lru_cache(maxsize=None)
def _source_lines(f:str) -> tuple[str, ...]:
  try: return tuple(pathlib.Path(f).read_text().splitlines())
  except OSError: return ()

def _pattern_text(f:str, line:int) -> str:
  lines = _source_lines(f)
  return lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""

def _rule_id(location:tuple[str, int], base:pathlib.Path) -> str|None:
  """a match-stats location as a rule id, or None for a rule outside tinygrad"""
  from uopcheck.rule_id import rule_key_of
  try: return rule_key_of(f"tinygrad/{pathlib.Path(location[0]).resolve().relative_to(base)}", location[1])
  except ValueError: return None

def hits() -> dict[str, int]:
  """Matches per rule id so far in this process."""
  from tinygrad.uop import ops
  base = _tinygrad_dir()
  out: dict[str, int] = defaultdict(int)
  for p, v in list(ops.match_stats.items()):
    if (rid := _rule_id(p.location, base)) is not None: out[rid] += int(v[0])
  return dict(out)

def tracking() -> bool:
  """tinygrad counts rule matches in this process (TRACK_MATCH_STATS was set before it was imported: ``uopcheck coverage``)"""
  from tinygrad.uop import ops
  return ops.PatternMatcher is ops.TrackedPatternMatcher and bool(ops.TRACK_MATCH_STATS.value)

class FiredRules:
  """The rules of the coverage report (``rules()``) this process has fired so far, each told once: ``new()`` is the ids
  first fired since its last call (a live status shows them as a campaign goes). A location is resolved to its id once,
  so a call costs a pass over match_stats."""
  def __init__(self) -> None:
    self.seen: set[str] = set()
    self._ids: dict[tuple[str, int], str|None] = {}
    self._base = _tinygrad_dir()
    self._known = set(rules())

  def new(self) -> list[str]:
    from tinygrad.uop import ops
    out = []
    for p, v in list(ops.match_stats.items()):
      if not v[0]: continue
      if (loc := p.location) not in self._ids: self._ids[loc] = rid if (rid := _rule_id(loc, self._base)) in self._known else None
      if (rid := self._ids[loc]) is not None and rid not in self.seen:
        self.seen.add(rid)
        out.append(rid)
    return sorted(out)
