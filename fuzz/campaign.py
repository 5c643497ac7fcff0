"""The one campaign engine every fuzzer runs on: a time budget, hypothesis rounds (round 0 replays the example database),
shrinking with a budget, and the smallest failure of a round on disk at every moment.

A fuzzer gives a hypothesis strategy, a ``check`` (one drawn case -> ``Failure`` or None) and a ``finish`` (the round's
minimal failure -> blamed, signed, saved or counted as known). The engine does the rest, the same way for all of them:

- a failure is written at once to the worker's pending file (a kill loses nothing) and hypothesis shrinks it; a smaller
  failure of the same kind replaces it (the smaller one wins), a failure of another kind is not shrunk towards;
- no new case starts in the last part of the budget (``shrink_reserve``: 20%, at most 2 minutes), so a failure found
  late can still be shrunk and signed; past ``shrink_budget`` property calls, or past the deadline, every candidate
  "passes": the shrink ends with the smallest failure so far (raising there would read as a second, flaky bug), and a
  shrink the deadline cut is marked ``cut_short`` (its finding says it is not minimal);
- when a round ends, ``finish`` gets the minimal failure and the next round starts with the next seed; past the deadline
  the campaign stops.

A fuzzer registers its strategy, check and finish with the supervisor through ``fuzz/fuzzers.py``."""
from __future__ import annotations
import pathlib, time
from dataclasses import dataclass
from typing import Any, Callable, Iterator
from uopcheck.fuzz.findings_io import write_or_stop
from uopcheck.settings import campaign_shrink_budget, SHRINK_RESERVE_FRACTION, SHRINK_RESERVE_MAX_S

def shrink_reserve(budget_s:float) -> float:
  """the end of a campaign's budget kept for shrinking and signing what it found (no new case starts in it)"""
  return min(max(budget_s, 0.0) * SHRINK_RESERVE_FRACTION, SHRINK_RESERVE_MAX_S)

class FoundBug(Exception):
  """Raised inside a campaign's hypothesis property for a failing case (never confused with an AssertionError in tinygrad)."""

class StopCampaign(Exception):
  """Raised inside a campaign's hypothesis property once the time budget is spent."""

def run_rounds(rounds:Iterator, deadline:float, start_round:Callable[[], None], finish_round:Callable[[], None], one_round:bool=False) -> None:
  """Run hypothesis rounds until ``deadline`` (perf_counter): a round that found a bug ends after hypothesis shrank it, then
  ``finish_round`` saves the minimal case and the next round starts with the next seed."""
  from hypothesis.errors import Flaky, FlakyFailure  # a shrink cut short by the budget reads as flaky: the finding is kept already
  while time.perf_counter() < deadline:
    run = next(rounds)
    start_round()
    try: run()
    except StopCampaign: break
    except (FoundBug, Flaky, FlakyFailure): pass
    finally: finish_round()
    if one_round: break

def campaign_rounds(check_one:Callable, strategy:Any, db:Any, max_examples:int|None, seed_of:Callable[[int], int]|None) -> Iterator:
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

# a finding's "shrink" field when the deadline cut its shrink: reports label it UNSHRUNK, not NEW (its signature ignores it)
UNSHRUNK = "cut short by the time budget: not minimal (a longer campaign, or replaying its seed, shrinks it further)"

@dataclass
class Failure:
  size: int            # what shrinking minimizes (nodes, steps)
  record: dict         # written to the pending file as it is found
  kind: str = ""       # a round shrinks towards failures of the kind it found first
  case: object = None  # whatever ``finish`` needs (the drawn case, its verdict)
  cut_short: bool = False   # the deadline stopped its shrink (not the shrink budget, not hypothesis): not minimal

class Campaign:
  def __init__(self, strategy, check:Callable[[object], Failure|None], finish:Callable[[Failure], None], deadline:float,
               pending:pathlib.Path, db=None, max_examples:int|None=None, seed_of:Callable[[int], int]|None=None, shrink_budget:int=200,
               on_pending:Callable[[dict], None]|None=None):
    self.strategy, self.check, self.finish, self.deadline, self.pending = strategy, check, finish, deadline, pending
    self.on_pending = on_pending   # also told each pending failure (a cluster worker sends it to the client: its disk may be lost)
    # the hypothesis profile (dev / ci / nightly, uopcheck.settings) scales how hard a finding is shrunk
    self.db, self.max_examples, self.seed_of, self.shrink_budget = db, max_examples, seed_of, campaign_shrink_budget(shrink_budget)
    self.shrinking: int|None = None   # property calls spent shrinking this round's failure (None: not shrinking)
    self.minimal: Failure|None = None
    self.cut_short = False
    # no new case is started in the last part of the budget: a failure found late still has time to shrink and be signed
    self.explore_until = deadline - shrink_reserve(deadline - time.perf_counter())

  def check_one(self, case:Any) -> None:
    if self.shrinking is not None:
      self.shrinking += 1
      if self.shrinking > self.shrink_budget: return
      if time.perf_counter() > self.deadline:
        self.cut_short = True
        return
    elif time.perf_counter() > self.explore_until: raise StopCampaign()
    f = self.check(case)
    if f is None or (self.minimal is not None and f.kind != self.minimal.kind): return
    if self.shrinking is None: self.shrinking = 0
    if self.minimal is None or f.size < self.minimal.size:
      self.minimal = f
      write_or_stop(self.pending, f.record)
      if self.on_pending is not None: self.on_pending(f.record)
    raise FoundBug(f.kind)

  def _start_round(self) -> None: self.shrinking, self.cut_short = None, False

  def _finish_round(self) -> None:
    if self.minimal is None: return
    f, self.minimal = self.minimal, None
    f.cut_short = self.cut_short
    self.finish(f)
    self.pending.unlink(missing_ok=True)

  def run(self) -> None:
    rounds = campaign_rounds(self.check_one, self.strategy, self.db, self.max_examples, self.seed_of)
    run_rounds(rounds, self.deadline, self._start_round, self._finish_round, one_round=bool(self.max_examples))
