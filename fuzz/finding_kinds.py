"""Each fuzzer's findings, by file-name prefix: the one schema check every reader runs first (``validate``), the re-check
that confirms a finding from scratch on the installed tinygrad (``recheck``: what ``findings audit`` and ``findings
promote`` ask), and the replay verdict (``replay``: what ``uopcheck replay`` prints). The CLI reads this table and knows
no fuzzer by name; a new fuzzer adds one row."""
from __future__ import annotations
import functools, pathlib
from dataclasses import dataclass
from typing import Callable
from uopcheck.fuzz.findings_store import Layout

@dataclass(frozen=True)
class FindingKind:
  layout: Layout                                # its findings store's files (fuzz/findings_store.py) and schema check
  recheck: Callable[[dict], str|None]           # None: it reproduces as recorded; else why not
  replay: Callable[[dict], str]                 # "still failing", "fixed", "changed: ..." or "skipped: ..."
  @property
  def prefix(self) -> str:
    """its files are ``<prefix>-<signature>.json`` (the layout's)"""
    return self.layout.prefix
  @property
  def validate(self) -> Callable[[dict], None]:
    """raises on a malformed record (one line)"""
    return self.layout.validate

@functools.cache
def finding_kinds() -> dict[str, FindingKind]:
  from uopcheck.fuzz import symbolic, graph
  return {k.prefix: k for k in (FindingKind(symbolic.LAYOUT, symbolic.audit, symbolic.replay_verdict),
                                FindingKind(graph.LAYOUT, graph.recheck, graph.replay_verdict))}

def finding_kind(path:pathlib.Path) -> FindingKind|None:
  """the kind a finding file's name says it is (None: not a finding file)"""
  return finding_kinds().get(path.name.split("-", 1)[0]) if "-" in path.name and path.suffix == ".json" else None

def finding_files(directory:pathlib.Path) -> list[pathlib.Path]:
  """the finding files of every kind in a directory, sorted"""
  return sorted(p for p in directory.glob("*.json") if finding_kind(p) is not None)

def file_patterns() -> str:
  return ", ".join(f"{p}-*.json" for p in finding_kinds())
