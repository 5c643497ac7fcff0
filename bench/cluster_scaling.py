"""Benchmark: graph-fuzz cases per minute on an embedded Dask LocalCluster of 1 and of 2 workers, in one run (the scaling
ratio). The same seed, profile and shard length for both; each campaign has its own scratch findings directory and its
own cold tinygrad compile cache (``CACHEDB``), so the first run does not warm the second.
Usage: ``python bench/cluster_scaling.py [--minutes 1] [--workers 1 2]``. On a machine with N cores the ideal ratio for
2 workers is 2.0 when N >= 2 (tinygrad's compiles and the reference share the cores)."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import argparse, os, tempfile

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--minutes", type=float, default=1.0, help="budget of each campaign (default 1)")
  ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure (default 1 2; the first is the baseline)")
  ap.add_argument("--seed", type=int, default=7, help="seed of the drawn programs (default 7)")
  a = ap.parse_args()
  from uopcheck.fuzz.cluster import run_cluster_campaign
  rows = []
  for n in a.workers:
    with tempfile.TemporaryDirectory(prefix="uopcheck-bench-") as d:
      os.environ["CACHEDB"] = f"{d}/cache.db"   # the LocalCluster's worker processes are started now: they read it
      s = run_cluster_campaign(a.minutes, "local", n, a.seed, findings_dir=f"{d}/f", db=None, shard_minutes=a.minutes / 2)
    rows.append((n, s["cases"], s["seconds"], s["cases_per_min"], s["workers_used"]))
  base = rows[0][3] or 1e-9
  print(f"\n{'workers':>8s} {'used':>5s} {'cases':>7s} {'wall s':>7s} {'cases/min':>10s} {'vs ' + str(rows[0][0]):>7s}")
  for n, cases, sec, rate, used in rows: print(f"{n:8d} {used:5d} {cases:7d} {sec:7.1f} {rate:10.1f} {rate / base:6.2f}x")

if __name__ == "__main__": main()
