"""The result model every command reports through: a ``Result`` holds what a run found as data -- tables of rows
(dicts keyed by column), summary lines, titled sections -- and, for the machine-readable report, its JSON payload.
Nothing here formats for a particular medium; that is ``uopcheck.results.render``."""
from __future__ import annotations
from dataclasses import dataclass, field
from typing import Any

@dataclass(frozen=True)
class Column:
  """one column: the row key it shows, its heading, and for text tables a width, alignment and format spec"""
  key: str
  title: str = ""
  width: int = 0
  align: str = "<"       # "<" or ">"
  fmt: str = ""          # a format spec for the value (".2f", "d", ".3g"); empty: str()
  term: bool = True      # False: too wide for a terminal, shown in the file reports (Markdown, HTML) only
  def heading(self) -> str: return self.title or self.key
  def text(self, row:dict) -> str:
    v = row.get(self.key)
    if v is None: return ""
    if self.fmt and not isinstance(v, str):
      try: return format(v, self.fmt)
      except (TypeError, ValueError): return str(v)
    return str(v)

@dataclass
class Table:
  columns: list[Column]
  rows: list[dict] = field(default_factory=list)
  title: str = ""
  footer: list[dict] = field(default_factory=list)   # totals rows: shown below the rows, never sorted with them

@dataclass
class Section:
  """a titled block of lines (refutations, reproducers, corrupt files skipped)"""
  title: str
  lines: list[str]

@dataclass(frozen=True)
class Outcome:
  """one checked item, for the CI report kinds (JUnit test case, SARIF result, GitHub annotation): a rule, a finding, a
  graph. ``status``: pass | fail (a new finding: CI goes red) | skip (known, or not decided) | error (uopcheck's own
  failure, not tinygrad's). ``file``/``line`` point at what is wrong: a tinygrad source line for a rule, a finding's file."""
  name: str
  status: str
  message: str = ""
  file: str = ""
  line: int = 0
  group: str = ""
  def __post_init__(self):
    if self.status not in STATUSES: raise ValueError(f"Outcome {self.name!r}: status {self.status!r} is not one of {STATUSES}")

STATUSES = ("pass", "fail", "skip", "error")

def at_source(rule:str) -> tuple[str, int]:
  """``tinygrad/uop/symbolic.py:261`` as (file, line); a name without a line number as (name, 0)"""
  f, _, n = rule.rpartition(":")
  return (f, int(n)) if f and n.isdigit() else (rule, 0)

@dataclass
class Result:
  """What one command run found. ``name`` names the report files (``<name>.json``, ``.md``, ``.html``); ``data`` is the
  JSON report's payload (each command keeps its own documented schema); ``preamble`` lines come before the tables,
  ``summary`` lines after them, then the ``sections``; ``outcomes`` are its checked items for CI."""
  name: str
  title: str
  data: Any
  tables: list[Table] = field(default_factory=list)
  preamble: list[str] = field(default_factory=list)
  summary: list[str] = field(default_factory=list)
  sections: list[Section] = field(default_factory=list)
  outcomes: list[Outcome] = field(default_factory=list)   # what the CI kinds report; a command that fills none reports 0 tests
