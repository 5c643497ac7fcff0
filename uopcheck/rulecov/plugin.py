"""The pytest plugin (always loaded through pyproject's addopts, inert unless asked): ``pytest --rule-cov[=MATCHERS]
[--rule-cov-report=term|json|md|html|lcov] [--rule-cov-dir DIR]``, under pytest-xdist too (``-n 2``: each worker
leaves its data file, the controller clears old data at the start and combines at the end)."""
from __future__ import annotations
import sys
from collections import defaultdict
from uopcheck.rulecov.collect import enable, hits
from uopcheck.rulecov.data import write_data, data_files, combine
from uopcheck.rulecov.report import report, write_reports, KINDS

def pytest_addoption(parser):
  g = parser.getgroup("uopcheck rule coverage")
  g.addoption("--rule-cov", nargs="?", const="all", default=None, help="collect PatternMatcher rule coverage (optionally: matchers, comma separated)")
  g.addoption("--rule-cov-report", action="append", default=None, choices=list(KINDS),
              help="report kinds (default term); lcov writes rulecov.lcov for editors and coverage services")
  g.addoption("--rule-cov-dir", default="reports/rulecov", help="where data files and reports go")

def pytest_load_initial_conftests(early_config, parser, args):
  if any(a.startswith("--rule-cov") for a in args): enable()

_TESTS: dict[str, set[str]] = defaultdict(set)

def _xdist_worker(config) -> bool: return hasattr(config, "workerinput")

def pytest_sessionstart(session):
  """a run starts from no data, as coverage.py's does: files an earlier run left in the directory would add up. Under
  pytest-xdist only the controller clears; each worker leaves its own data file at its end (pytest_sessionfinish)."""
  if not session.config.getoption("--rule-cov") or _xdist_worker(session.config): return
  for f in data_files(session.config.getoption("--rule-cov-dir")): f.unlink()

def pytest_sessionfinish(session):
  if session.config.getoption("--rule-cov") and _xdist_worker(session.config): write_data(session.config.getoption("--rule-cov-dir"), _TESTS)

def pytest_runtest_call(item):
  if item.config.getoption("--rule-cov"): item._rulecov_before = hits()

def pytest_runtest_teardown(item):
  before = getattr(item, "_rulecov_before", None)
  if before is None: return
  for rid, n in hits().items():
    if n > before.get(rid, 0): _TESTS[rid].add(item.nodeid)

def pytest_terminal_summary(terminalreporter, exitstatus, config):
  sel = config.getoption("--rule-cov")
  if not sel or _xdist_worker(config): return
  d = config.getoption("--rule-cov-dir")
  write_data(d, _TESTS)   # this process's own (under xdist the workers' files are already there: they end before the summary)
  terminalreporter.section("uopcheck rule coverage")
  write_reports(report(combine(d), None if sel == "all" else sel.split(",")), config.getoption("--rule-cov-report") or ["term"], d,
                "pytest " + " ".join(sys.argv[1:]), terminalreporter.write_line)
