"""Benchmark: graph-fuzz cases per minute on this machine's 2 cores, and how the rate falls with graph size.

For each size class a fixed set of random programs (seeded) is checked ref vs fast twice per worker process:
the first pass compiles (cold), the second finds tinygrad's compile caches warm. Two processes run at once, so
the reported rate is what a 2-worker campaign gets. The last row is the ``large`` profile (``--profile large``).
Target: >= 200 cases/min for <= 6 ops and <= 4k elements, warm."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import multiprocessing as mp, sys, time

def _run(args):
  n, max_steps, max_elems, seed, profile = args
  import uopcheck  # noqa: F401
  from hypothesis import given, settings, HealthCheck, seed as hseed, Phase
  from uopcheck.fuzz.graph import programs, check_program
  descs = []
  @hseed(seed)
  @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=[Phase.generate])
  @given(programs(max_steps=max_steps, max_elems=max_elems, profile=profile))
  def collect(d): descs.append(d)
  collect()
  times = []
  for _ in range(2):
    st = time.perf_counter()
    for d in descs: check_program(d)
    times.append(time.perf_counter() - st)
  return len(descs), times[0], times[1]

def main(n:int=40):
  ctx = mp.get_context("spawn")
  print(f"{'size class':28s} {'cases':>6s} {'cold cases/min':>15s} {'warm cases/min':>15s}")
  base = 0.0
  for label, steps, elems, profile in [("<= 2 ops, <= 256 elems", 2, 256, "small"), ("<= 6 ops, <= 4k elems", 6, 4096, "small"),
                                      ("<= 12 ops, <= 64k elems", 12, 65536, "small"), ("large: <= 40 steps, <= 2M elems", None, None, "large")]:
    with ctx.Pool(2) as pool: res = pool.map(_run, [(n if profile == "small" else max(4, n // 8), steps, elems, s, profile) for s in (1, 2)])
    cases = sum(r[0] for r in res)
    cold = cases / max(r[1] for r in res) * 60
    warm = cases / max(r[2] for r in res) * 60
    if steps == 6: base = warm
    print(f"{label:28s} {cases:6d} {cold:15.0f} {warm:15.0f}")
  print(f"\ntarget >= 200 cases/min (<= 6 ops, <= 4k elements, warm, 2 workers): {base:.0f} -> {'MET' if base >= 200 else 'MISSED'}")

if __name__ == "__main__":
  main(*(int(a) for a in sys.argv[1:2]))
