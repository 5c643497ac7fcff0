"""Shared fixtures: a conformance log that prints a summary at the end of the run, and dtype support probes."""
from __future__ import annotations
import functools, json, os, pathlib
import pytest
from uopcheck.settings import apply_environment, register_hypothesis_profiles
apply_environment()   # before tinygrad is imported: HCQ2 and CC as the CLI sets them
# UOPCHECK_DEVICE=CUDA (or any --device name): the suite's graphs are built, run and read there (tinygrad's default device);
# set before tinygrad is imported (the mock GPU's file interface is chosen then), and opened first: one line if it cannot run
if os.environ.get("UOPCHECK_DEVICE"):
  os.environ["DEV"] = os.environ["UOPCHECK_DEVICE"]
  from uopcheck.fast.devices import open_device
  open_device(os.environ["UOPCHECK_DEVICE"])
register_hypothesis_profiles()   # dev / ci / nightly; pytest's --hypothesis-profile overrides
from tinygrad import Tensor, dtypes  # noqa: E402
from uopcheck import compiler_output  # noqa: E402
# the C compiler's warnings: counted and shown once in the summary, not inside the test output; pytest-xdist workers
# inherit the controller's wrapper and write to its log, so the controller's summary counts every worker's compiles
if not (os.environ.get("PYTEST_XDIST_WORKER") and compiler_output.active()): compiler_output.capture()

_RESULTS: list[dict] = []   # one row per case (a worker sends its rows to the controller: pytest_sessionfinish / testnodedown)

def _row(r) -> dict:
  return {"name": r.name, "ok": r.ok, "kernels": r.kernels, "ref_s": r.ref_s, "fast_s": r.fast_s, "ub_lanes": r.ub_lanes,
          "undefined_skipped": r.skipped_undefined, "error": r.error, "lanes": sum(c.checked for c in r.comparisons), "line": r.line()}

@pytest.fixture
def conformance_log():
  """Record a harness.CaseResult for the end-of-run summary (and reports/conformance.json)."""
  return lambda r: _RESULTS.append(_row(r))

def pytest_sessionfinish(session):
  if hasattr(session.config, "workerinput"): session.config.workeroutput["uopcheck_cases"] = json.dumps(_RESULTS)

@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
  """pytest-xdist (controller): a worker is done; its cases join the summary"""
  _RESULTS.extend(json.loads(getattr(node, "workeroutput", {}).get("uopcheck_cases", "[]")))

@functools.cache
def _dtype_runs(dtname:str) -> str|None:
  dt = getattr(dtypes, dtname)
  try:
    (Tensor([1.0, 2.0]).cast(dt) + Tensor([1.0, 2.0]).cast(dt)).realize()
    return None
  except Exception as e:
    return f"{dt} does not compile on this machine's CPU backend (CC={os.environ.get('CC', 'clang')}): {str(e).splitlines()[0][:120]}"

def require_dtype(dt):
  """Skip (with the reason) when the machine's compiler can't build kernels of this dtype (bfloat16 needs clang >= 17)."""
  if dt == dtypes.bfloat16 and (why := _dtype_runs("bfloat16")) is not None: pytest.skip(why)

def pytest_terminal_summary(terminalreporter, exitstatus, config):
  if hasattr(config, "workerinput"): return
  if (noise := compiler_output.collected().summary()): terminalreporter.write_line(noise)
  if not _RESULTS: return
  tr = terminalreporter
  rows = sorted(_RESULTS, key=lambda r: r["name"])   # the same order whichever worker ran a case
  n_ok = sum(r["ok"] for r in rows)
  ub = [r for r in rows if r["ub_lanes"]]
  tr.section("uopcheck conformance summary")
  tr.write_line(f"cases: {len(rows)}  ref==fast: {n_ok}  differ: {len(rows) - n_ok}")
  tr.write_line(f"lanes compared: {sum(r['lanes'] for r in rows)}  undefined (skipped): {sum(r['undefined_skipped'] for r in rows)}  "
                f"resting on signed overflow (UB on CPU): {sum(r['ub_lanes'] for r in rows)} in {len(ub)} cases")
  tr.write_line(f"ref time: {sum(r['ref_s'] for r in rows):.2f}s  fast time: {sum(r['fast_s'] for r in rows):.2f}s  "
                f"kernels run: {sum(r['kernels'] for r in rows)}")
  for r in ub[:8]: tr.write_line(f"  UB-on-CPU: {r['name']}: {r['ub_lanes']} lanes (result compared under wrap-around)")
  for r in [r for r in rows if not r["ok"]][:20]: tr.write_line(f"  {r['line']}")
  out = pathlib.Path(os.environ.get("UOPCHECK_REPORT_DIR", "reports"))
  out.mkdir(parents=True, exist_ok=True)
  (out / "conformance.json").write_text(json.dumps(rows, indent=1))

def pytest_addoption(parser):
  parser.addoption("--scheduler", default=None, help="candidate scheduler (package.module:get_kernel_graph) for the kernel checks")

def pytest_configure(config):
  setattr(pytest, "uopcheck_scheduler", config.getoption("--scheduler"))   # the tests read it as pytest.uopcheck_scheduler
  from uopcheck.fast.runner import open_cpu_queues
  open_cpu_queues()   # tinygrad's stale queue counter would hang a later test (fast/runner.py says why)
