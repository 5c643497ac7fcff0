"""Benchmark: the conformance suite's wall time serial (``-n 0``) and under pytest-xdist (``-n 2``), in one run.

Both runs use the same selection and a cold tinygrad compile cache of their own (``CACHEDB`` in a fresh directory each),
so neither warms the other; the ratio is what ``make test``'s ``-n auto`` saves on this machine.
Usage: ``python bench/pytest_parallel.py [-k EXPR] [--workers 2] [PATHS...]`` (default: all of conformance/)."""
from __future__ import annotations
import argparse, os, pathlib, re, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent

def run(workers:int, paths:list[str], k:str|None, log_dir:pathlib.Path) -> tuple[float, str, list[str]]:
  """one pytest run: (wall seconds, its result line, the FAILED lines); the whole output is kept in ``log_dir``"""
  with tempfile.TemporaryDirectory(prefix="uopcheck-bench-") as d:
    env = {**os.environ, "CACHEDB": str(pathlib.Path(d) / "cache.db"), "UOPCHECK_REPORT_DIR": d, "COLUMNS": "400"}
    cmd = [sys.executable, "-m", "pytest", *paths, "-q", "-rf", "-p", "no:cacheprovider", "-n", str(workers)] + (["-k", k] if k else [])
    st = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - st
  log = log_dir / f"pytest-n{workers}.log"
  log.write_text(r.stdout + r.stderr)
  tail = [ln for ln in r.stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
  failed = [ln for ln in r.stdout.splitlines() if ln.startswith("FAILED ")]
  return wall, (tail[-1] if tail else f"rc {r.returncode}: {r.stdout[-300:]}"), failed if r.returncode == 0 or failed else [f"rc {r.returncode}"]

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("paths", nargs="*", default=["conformance"], help="test paths (default: conformance)")
  ap.add_argument("-k", default=None, help="pytest -k expression selecting a subset")
  ap.add_argument("--workers", type=int, default=2, help="xdist workers for the parallel run (default 2)")
  ap.add_argument("--logs", default="reports/bench-pytest-parallel", help="where each run's whole pytest output is kept")
  a = ap.parse_args()
  logs = pathlib.Path(a.logs)
  logs.mkdir(parents=True, exist_ok=True)
  base, base_tail, base_failed = run(0, a.paths, a.k, logs)     # both run even if one fails: a failure is reported, not fatal
  par, par_tail, par_failed = run(a.workers, a.paths, a.k, logs)
  print(f"{'run':12s} {'wall s':>8s} {'vs -n 0':>8s}  result")
  print(f"{'-n 0':12s} {base:8.1f} {1.0:7.2f}x  {base_tail}")
  print(f"{f'-n {a.workers}':12s} {par:8.1f} {base / par:7.2f}x  {par_tail}")
  for name, failed in (("-n 0", base_failed), (f"-n {a.workers}", par_failed)):
    for ln in failed: print(f"{name}: {ln}")
  if base_failed or par_failed:
    sys.exit(f"a run failed; whole outputs in {logs}/ (the timing compares runs that did not all pass)")

if __name__ == "__main__": main()
