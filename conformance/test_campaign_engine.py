"""The one campaign engine (fuzz/campaign.py) on a property of its own: no new case starts in the budget's last part (so a
late failure can still shrink), and a shrink the deadline cuts is marked, so its finding is labelled, never passed off
as minimal."""
from __future__ import annotations
import time
from hypothesis import strategies as st
from uopcheck.fuzz.campaign import Campaign, Failure, shrink_reserve

def _run(tmp_path, budget_s:float, fails, slow_s:float):
  started: list = []
  finished: list = []
  def check(x):
    started.append((time.perf_counter(), c.shrinking is not None))   # when, and whether it is a shrink step
    time.sleep(slow_s)
    return Failure(abs(x), {"x": x}, "big") if fails(x) else None
  deadline = time.perf_counter() + budget_s
  c = Campaign(st.integers(0, 10**9), check, finished.append, deadline, tmp_path / "pending.json", db=None, seed_of=lambda r: 1 + r,
               shrink_budget=10**6)
  c.run()
  return c, deadline, started, finished

def test_no_new_case_starts_in_the_reserve_and_a_cut_shrink_is_marked(tmp_path):
  budget = 3.0
  c, _, started, finished = _run(tmp_path, budget, lambda x: x > 1000, 0.25)
  assert shrink_reserve(budget) == budget * 0.2 and shrink_reserve(3600) == 120
  # failures are found at once (x > 1000 is most integers) and shrinking one towards 1001 at 0.25 s a step takes longer
  # than the budget: the deadline cuts it, and the finding says so
  assert finished[-1].cut_short and finished[-1].record["x"] > 1000
  late = [shrinking for t, shrinking in started if t > c.explore_until]
  assert late and all(late)   # in the reserve, only shrink steps ran: no fresh case
  assert not (tmp_path / "pending.json").exists()

def test_a_shrink_that_finishes_is_not_cut_short_and_nothing_runs_past_the_deadline(tmp_path):
  _, deadline, started, finished = _run(tmp_path, 4.0, lambda x: x >= 3, 0.0)
  assert finished and not finished[0].cut_short and finished[0].record["x"] == 3   # shrunk to the minimal failure
  assert max(t for t, _ in started) <= deadline + 0.5

def test_without_failures_the_explore_phase_ends_at_the_reserve(tmp_path):
  budget = 2.0
  c, deadline, started, finished = _run(tmp_path, budget, lambda x: False, 0.01)
  assert not finished and started and max(t for t, _ in started) <= c.explore_until + 0.1 < deadline
