"""Benchmark: fuzz cases per minute (``--fuzzer graph`` or ``symbolic``) on 1 and 2 workers, in one run (the scaling
ratio): on an embedded Dask LocalCluster (``--backend dask``, the default) or as the one-machine supervisor's processes
(``--backend local``). The same seed, options and shard length for both; each campaign has its own scratch findings
directory and its own cold tinygrad compile cache (``CACHEDB``), so the first run does not warm the second.
Usage: ``python bench/cluster_scaling.py [--fuzzer graph|symbolic] [--backend dask|local] [--minutes 1] [--workers 1 2]``.
On a machine with N cores the ideal ratio for 2 workers is 2.0 when N >= 2 (the cases share the cores)."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import argparse, os, tempfile

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--minutes", type=float, default=1.0, help="budget of each campaign (default 1)")
  ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure (default 1 2; the first is the baseline)")
  ap.add_argument("--seed", type=int, default=7, help="seed of the drawn cases (default 7)")
  ap.add_argument("--fuzzer", choices=["graph", "symbolic"], default="graph", help="the registered fuzzer to run (default graph)")
  ap.add_argument("--backend", choices=["dask", "local"], default="dask", help="the supervisor's backend (default dask)")
  a = ap.parse_args()
  from uopcheck.fuzz.cluster import run_cluster_campaign
  from uopcheck.fuzz.fuzzers import fuzzer
  from uopcheck.fuzz.supervisor import run_local
  fz = fuzzer(a.fuzzer)
  # symbolic without the pipeline: its index seeds run once per run, on the first worker, so with them one worker's rate
  # and two workers' would measure different cases
  opts = {"graph": {"profile": "small"}, "symbolic": {"reading": "undefined", "pipeline": False}}[a.fuzzer]
  rows = []
  for n in a.workers:
    with tempfile.TemporaryDirectory(prefix="uopcheck-bench-") as d:
      os.environ["CACHEDB"] = f"{d}/cache.db"   # the worker processes are started now: they read it
      if a.backend == "dask":
        run = run_cluster_campaign(a.minutes, "local", n, a.seed, findings_dir=f"{d}/f", db=None, shard_minutes=a.minutes / 2,
                                   fuzzer=a.fuzzer, options=opts)
      else: run = run_local(fz, a.minutes, n, a.seed, f"{d}/f", None, opts)
      s = fz.summarize(run)
    rows.append((n, s["cases"], s["seconds"], s["cases_per_min"], s.get("workers_used", n)))
  print(f"\n{a.fuzzer} fuzzer, {a.backend} backend, {a.minutes} min each")
  base = rows[0][3] or 1e-9
  print(f"\n{'workers':>8s} {'used':>5s} {'cases':>7s} {'wall s':>7s} {'cases/min':>10s} {'vs ' + str(rows[0][0]):>7s}")
  for n, cases, sec, rate, used in rows: print(f"{n:8d} {used:5d} {cases:7d} {sec:7.1f} {rate:10.1f} {rate / base:6.2f}x")

if __name__ == "__main__": main()
