"""The fuzzer registration: what a fuzzer gives so that one supervisor (``fuzz/supervisor.py``: local processes, or a Dask
cluster through ``fuzz/cluster.py``) and the CLI can run it without knowing it by name.

A fuzzer module defines one ``Fuzzer`` and is listed in ``MODULES``; ``uopcheck fuzz NAME`` builds its flags from
``add_arguments``, and the supervisor runs ``work`` in every worker process (or Dask shard), files what it reports with
``classify``, re-runs a case that took a worker down (``validate_case``, ``rerun``, ``lost_record``), and hands the
run's facts to ``summarize`` and ``result``. Everything that crosses a process or the network (``options``, the
running case, a finding) is JSON data."""
from __future__ import annotations
import argparse, functools, importlib, json, os, time
from dataclasses import dataclass
from typing import Any, Callable

COUNTS_EVERY_S = 2.0

# name -> the module that defines its ``FUZZER`` (imported when the CLI or a worker needs it)
MODULES = {"symbolic": "uopcheck.fuzz.symbolic", "graph": "uopcheck.fuzz.graph_campaign"}

@dataclass
class Work:
  """one worker's share of a campaign, as the supervisor hands it over (in the worker's own process)"""
  wid: int
  minutes: float
  seed: int|None
  findings_dir: str
  db_dir: str|None
  options: dict                       # the fuzzer's own, from ``Fuzzer.options`` (JSON data)
  case_timeout: float
  round_offset: int = 0               # added to every round's seed after a restart (no case is drawn twice)
  counters: Any = None                # a shared case counter (``counters[0]``, with ``get_lock()``)
  events: Any = None                  # a queue the supervisor drains: (bucket, key) as ``classify`` says, ("rule", id)
  store: Any = None                   # where findings go (default: a DirectoryStore of ``findings_dir``)
  publish: Callable[[dict], Any]|None = None   # on a cluster: the running case and pending failure, as they change
  known_dir: Any = None               # the shipped corpus (None: nothing is known)
  shard: int|None = None              # the Dask shard it is (None: a process of the one-machine supervisor)
  tally: Callable[[], dict] = dict    # set by the fuzzer's ``work``: its counts so far (``tell_counts`` sends them)
  told: float = 0.0                   # when the counts were last sent

  def first(self) -> bool:
    """the run's first worker, as first started (not a restart, not a later shard): where work done once per run goes"""
    return self.wid == 0 and self.round_offset == 0 and not self.shard

  def tell_counts(self, force:bool=False) -> None:
    """the counts so far to the supervisor, at most every ``COUNTS_EVERY_S`` (and at the end, ``force``): a worker killed
    past the deadline (a case in native code does not see SIGTERM) loses only its last seconds. The supervisor keeps the
    latest per worker process; a Dask shard returns its counts with its result instead."""
    now = time.monotonic()
    if self.events is None or not (force or now - self.told >= COUNTS_EVERY_S): return
    self.told = now
    self.events.put(("counts", json.dumps({"worker": f"{self.wid}:{os.getpid()}", "counts": self.tally()})))

@dataclass(frozen=True)
class Fuzzer:
  """one registered fuzzer: everything the CLI and the supervisor (either backend) ask of it"""
  name: str
  help: str
  layout: Any                                           # its findings store's files (fuzz/findings_store.py)
  add_arguments: Callable[[argparse.ArgumentParser], None]   # its own flags (the supervisor's are common to all)
  options: Callable[[argparse.Namespace], dict]         # the flags its workers need, as JSON data
  prepare: Callable[[dict], None]                       # in the supervisor, before any worker: a bad option is one line
  work: Callable[[Work], None]                          # one worker's campaign; sets ``Work.tally`` first (summed over workers)
  classify: Callable[[dict, dict], tuple[str, str]]     # a saved record -> (bucket, key): new, known, internal, external...
  validate_case: Callable[[dict], None]                 # a running case (a worker's .current file, a peer's message) checked as data
  rerun: Callable[[dict, dict], None]                   # the case again, in a fresh process (fuzz/lost_case.py), with the options
  lost_record: Callable[[Any, int|None], dict]          # a finished LostCaseCheck -> its finding or external-fault record
  summarize: Callable[..., dict]                        # the run's facts -> the report's summary
  result: Callable[[dict], Any]                         # the summary -> a Result
  main: Callable[[argparse.Namespace], int]|None = None  # its own CLI command, where it has one (else supervisor.main)
  case_timeout: float = 60.0                            # seconds a case may run when --case-timeout is not given

@functools.cache
def fuzzer(name:str) -> Fuzzer:
  """the registered fuzzer ``name`` (its module imported now); KeyError names the known ones"""
  if name not in MODULES: raise KeyError(f"unknown fuzzer {name!r} (known: {', '.join(sorted(MODULES))})")
  return importlib.import_module(MODULES[name]).FUZZER
