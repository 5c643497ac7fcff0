"""Benchmark: the conformance suite's wall time serial (``-n 0``) and under pytest-xdist (``-n 2``), in one run.

Both runs use the same selection and a cold tinygrad compile cache of their own (``CACHEDB`` in a fresh directory each),
so neither warms the other; the ratio is what ``make test``'s ``-n auto`` saves on this machine.
Usage: ``python bench/pytest_parallel.py [-k EXPR] [--workers 2] [PATHS...]`` (default: all of conformance/)."""
from __future__ import annotations
import argparse, os, pathlib, re, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent

def run(workers:int, paths:list[str], k:str|None) -> tuple[float, str]:
  with tempfile.TemporaryDirectory(prefix="uopcheck-bench-") as d:
    env = {**os.environ, "CACHEDB": str(pathlib.Path(d) / "cache.db"), "UOPCHECK_REPORT_DIR": d}
    cmd = [sys.executable, "-m", "pytest", *paths, "-q", "-rf", "-p", "no:cacheprovider", "-n", str(workers)] + (["-k", k] if k else [])
    st = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - st
  tail = [ln for ln in r.stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
  if r.returncode != 0:
    failed = "\n".join(ln for ln in r.stdout.splitlines() if ln.startswith("FAILED "))
    sys.exit(f"pytest -n {workers} failed (rc {r.returncode}): {tail[-1] if tail else r.stdout[-500:]}\n{failed}")
  return wall, tail[-1] if tail else ""

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("paths", nargs="*", default=["conformance"], help="test paths (default: conformance)")
  ap.add_argument("-k", default=None, help="pytest -k expression selecting a subset")
  ap.add_argument("--workers", type=int, default=2, help="xdist workers for the parallel run (default 2)")
  a = ap.parse_args()
  base, base_tail = run(0, a.paths, a.k)
  par, par_tail = run(a.workers, a.paths, a.k)
  print(f"{'run':12s} {'wall s':>8s} {'vs -n 0':>8s}  result")
  print(f"{'-n 0':12s} {base:8.1f} {1.0:7.2f}x  {base_tail}")
  print(f"{f'-n {a.workers}':12s} {par:8.1f} {base / par:7.2f}x  {par_tail}")

if __name__ == "__main__": main()
