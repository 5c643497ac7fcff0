"""The findings store, in the shape of hypothesis' ``ExampleDatabase`` family: one interface -- ``save`` a finding,
``load`` the good ones (a corrupt file is one line, the rest still load), the ``signatures`` they hold, ``check`` a
finding that came from elsewhere -- and three backends:

- ``DirectoryStore``: a campaign's directory of new findings, one file per signature, the smaller finding wins;
- ``ShippedStore``: the reviewed corpus the suite replays (``SHIPPED_FINDINGS``), read-only: its signatures are the
  *known* ones, and a finding moves into it only by ``uopcheck findings promote``;
- ``QueueStore``: a cluster worker's findings, each sent to the client as soon as it is found; the client's
  ``DirectoryStore`` checks what arrives as data (``check``) before it saves it.

A fuzzer describes its files once (``Layout``: the file prefix of each record kind, size, schema check); every reader and
writer of its findings goes through a store of that layout."""
from __future__ import annotations
import os, pathlib
from dataclasses import dataclass
from typing import Any, Callable
from uopcheck.spec.errors import SpecError
from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS, load_dir, save_smaller

@dataclass(frozen=True)
class Layout:
  """how one fuzzer keeps its records, stated once: ``prefixes`` maps each record kind it writes to its file prefix
  (``kind``'s records are its findings; others are kept beside them: uopcheck-internal, flaky, external faults...), a
  record's file is ``<prefix>-<signature>.json`` (one per signature), ``size`` orders two records of one signature (the
  smaller is kept), ``validate`` is the findings' schema check"""
  kind: str
  prefixes: dict[str, str]
  size: Callable[[dict], int]
  validate: Callable[[dict], None]
  @property
  def prefix(self) -> str:
    """its findings' file prefix (``symbolic``, ``graph``)"""
    return self.prefixes[self.kind]
  @property
  def pattern(self) -> str:
    """the glob of its finding files"""
    return f"{self.prefix}-*.json"
  def file_name(self, d:dict) -> str: return f"{self.prefixes[d.get('kind', self.kind)]}-{d['signature']}.json"

class FindingsStore:
  """one backend of the store; ``remote``: findings leave this process (nothing is on a local disk)"""
  remote = False
  def __init__(self, layout:Layout): self.layout = layout
  def save(self, d:dict) -> pathlib.Path|None: raise NotImplementedError
  def load(self, pattern:str|None=None) -> tuple[list[tuple[pathlib.Path, dict]], list[str]]: return [], []
  def signatures(self) -> dict[str, str]:
    """signature -> file name of every good finding held"""
    return {d["signature"]: p.name for p, d in self.load()[0] if d.get("signature")}
  def check(self, d:Any) -> dict:
    """a finding that came from elsewhere (a peer's message, a file) is data: the layout's schema check, else ValueError
    or SpecError in one line; the finding when it passes"""
    if not isinstance(d, dict): raise ValueError(f"a {type(d).__name__}, not a finding object")
    self.layout.validate(d)
    return d

class DirectoryStore(FindingsStore):
  """a directory of finding files, written atomically, one per signature: a finding met again replaces the stored one
  only when it is smaller (``findings_io.save_smaller``)"""
  def __init__(self, directory:str|os.PathLike, layout:Layout):
    super().__init__(layout)
    self.directory = pathlib.Path(directory)
  def save(self, d:dict) -> pathlib.Path|None: return save_smaller(self.directory / self.layout.file_name(d), d, self.layout.size)
  def load(self, pattern:str|None=None) -> tuple[list[tuple[pathlib.Path, dict]], list[str]]:
    """the good findings (``pattern``: the files of another record kind the layout names, e.g. ``internal-*.json``)"""
    return load_dir(self.directory, pattern or self.layout.pattern, self.layout.validate)

class ShippedStore(DirectoryStore):
  """the reviewed corpus: read here, written only by ``uopcheck findings promote``"""
  def __init__(self, layout:Layout, directory:str|os.PathLike=SHIPPED_FINDINGS): super().__init__(directory, layout)
  def save(self, d:dict) -> pathlib.Path|None:
    raise SpecError(f"{self.directory}: the shipped corpus is read-only (review a finding, then `uopcheck findings promote FILE`)")

class QueueStore(FindingsStore):
  """a cluster worker's store: each finding is sent (``send({"finding": d})``) to the client, which checks and saves it"""
  remote = True
  def __init__(self, send:Callable[[dict], Any], layout:Layout):
    super().__init__(layout)
    self.send = send
  def save(self, d:dict) -> pathlib.Path|None:
    self.send({"finding": d})
    return None

def known_signatures(layout:Layout, directory:str|os.PathLike|None=SHIPPED_FINDINGS) -> dict[str, str]:
  """the signatures a campaign counts as known: the shipped corpus's (none when ``directory`` is None)"""
  return ShippedStore(layout, directory).signatures() if directory else {}
