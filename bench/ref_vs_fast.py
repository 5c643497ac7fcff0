"""Benchmark: the reference interpreter vs tinygrad's fast path vs tinygrad's PYTHON emulator, in the same run.

For a few graphs and sizes prints: ref time, fast-path time with compile (first run) and without
(second run, caches warm), and DEV=PYTHON time, with the ratios the foundation issue sets as targets:
ref >= 100x faster than DEV=PYTHON on the same graph; ref <= 2x the fast path's wall time on graphs of
>= 1M elements."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import sys, time
import numpy as np
import uopcheck  # noqa: F401  (sets HCQ2/CC before tinygrad loads)
from tinygrad import Tensor
from uopcheck.ref import evaluate, load_inputs
from uopcheck import fast

def graphs(n:int, device:str="CPU"):
  r = np.random.default_rng(0)
  a = r.standard_normal((n, n)).astype(np.float32)
  b = r.standard_normal((n, n)).astype(np.float32)
  return {
    f"matmul+relu+sum {n}x{n}": lambda: (Tensor(a, device=device) @ Tensor(b, device=device)).relu().sum(),
    f"elementwise chain {n}x{n}": lambda: ((Tensor(a, device=device) * 2 + Tensor(b, device=device)).exp2() - 1).sqrt().sum(axis=1),
    f"softmax {n}x{n}": lambda: Tensor(a, device=device).softmax(-1),
  }

def timed(f, reps=1):
  best = float("inf")
  for _ in range(reps):
    st = time.perf_counter()
    f()
    best = min(best, time.perf_counter() - st)
  return best

def ref_time(build):
  t = build()
  inputs = load_inputs(t)
  return timed(lambda: evaluate(t, inputs), reps=3)

def main(sizes=(64, 1024), python_sizes=(64,)):
  print(f"{'graph':32s} {'elems':>9s} {'ref ms':>9s} {'fast+compile ms':>16s} {'fast warm ms':>13s} {'PYTHON ms':>10s} "
        f"{'PYTHON/ref':>11s} {'ref/fast warm':>14s}")
  worst_py, worst_big = float("inf"), 0.0
  for n in sizes:
    for name, build in graphs(n).items():
      tr = ref_time(build)
      tf_cold = timed(lambda: fast.run(build(), check_spec=False))
      tf_warm = timed(lambda: fast.run(build(), check_spec=False), reps=3)
      tp = float("nan")
      if n in python_sizes:
        pb = graphs(n, "PYTHON")[name]
        tp = timed(lambda: pb().realize())
      ratio_py, ratio_fast = tp / tr, tr / tf_warm
      if n in python_sizes: worst_py = min(worst_py, ratio_py)
      if n * n >= 1_000_000: worst_big = max(worst_big, ratio_fast)
      print(f"{name:32s} {n*n:9d} {tr*1e3:9.2f} {tf_cold*1e3:16.1f} {tf_warm*1e3:13.1f} {tp*1e3:10.1f} {ratio_py:11.0f} {ratio_fast:14.2f}")
  print(f"\ntarget ref >= 100x faster than DEV=PYTHON: worst {worst_py:.0f}x -> {'MET' if worst_py >= 100 else 'MISSED'}")
  print(f"target ref <= 2x fast-path wall on >= 1M elements: worst {worst_big:.2f}x -> {'MET' if worst_big <= 2 else 'MISSED'}")

if __name__ == "__main__":
  main(*(tuple(int(x) for x in a.split(",")) for a in sys.argv[1:3]))
