"""Benchmark: the reference kernel interpreter's throughput, and the per-kernel check's overhead over a plain fast run.

Throughput is work elements per second (output elements x reduction length) on a matmul and a reduction.
Overhead is (check_per_kernel wall) / (fast.run wall) on the same graph with warm compile caches, in one run."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import time
import numpy as np
import uopcheck  # noqa: F401
from tinygrad import Tensor
from uopcheck import fast
from uopcheck.check.kernel import check_per_kernel
from uopcheck.ref.kernel_interp import KernelInterpreter, BufferState

def best(f, reps=3):
  t = float("inf")
  for _ in range(reps):
    st = time.perf_counter()
    f()
    t = min(t, time.perf_counter() - st)
  return t

def throughput():
  print(f"{'kernel':28s} {'work elems':>11s} {'ref ms':>9s} {'elems/s':>10s}")
  r = np.random.default_rng(0)
  for n in (64, 128):
    a, b = r.standard_normal((n, n)).astype(np.float32), r.standard_normal((n, n)).astype(np.float32)
    k = fast.run(Tensor(a) @ Tensor(b), check_spec=False).kernels[-1]
    bufs = {0: BufferState.of(np.zeros(n * n, np.float32)), 1: BufferState.of(a), 2: BufferState.of(b)}
    t = best(lambda: KernelInterpreter(k.ast, k.name).run(bufs))
    print(f"{'matmul ' + k.name:28s} {n**3:11d} {t*1e3:9.2f} {n**3/t:10.3g}")
  x = r.standard_normal((1024, 1024)).astype(np.float32)
  k = fast.run(Tensor(x).sum(axis=1), check_spec=False).kernels[-1]
  bufs = {0: BufferState.of(np.zeros(1024, np.float32)), 1: BufferState.of(x)}
  t = best(lambda: KernelInterpreter(k.ast, k.name).run(bufs))
  print(f"{'reduce ' + k.name:28s} {x.size:11d} {t*1e3:9.2f} {x.size/t:10.3g}")

def overhead():
  print(f"\n{'graph':20s} {'fast.run ms':>12s} {'per-kernel ms':>14s} {'overhead':>9s}")
  from uopcheck.check import catalog
  for name in ("matmul", "softmax", "layernorm", "attention", "llama_block"):
    build = catalog.REAL_GRAPHS[name]
    fast.run(build(), check_spec=False)
    check_per_kernel(build, name)  # warm caches
    tf = best(lambda: fast.run(build(), check_spec=False))
    tk = best(lambda: check_per_kernel(build, name))
    print(f"{name:20s} {tf*1e3:12.1f} {tk*1e3:14.1f} {tk/tf:8.2f}x")

if __name__ == "__main__":
  throughput()
  overhead()
