"""Benchmark: the CPU gate's overhead -- validated step time / plain step time (target <= 3x), measured in one run.

"plain step" is reported two ways: the TinyJit replay the run executes (the honest denominator for a JIT run), and
the eager step (schedule + compile-cached exec, what VALIDATE_WITH_CPU instruments). The validated step is one
gate step after capture (tensor-level reference, the captured step call by call on the device, the CPU and reference
check of every call, TinyJit's replay and the byte compare), warm caches; its phases are printed too.

  python bench/train_gate.py [--config tiny] [--layers N] [--reps 3]"""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import argparse, statistics, time
import numpy as np
import uopcheck  # noqa: F401
from tinygrad import Tensor
from uopcheck.training.model import get_config
from uopcheck.training.trainer import Trainer, TrainConfig
from uopcheck.training.gate import CPUGate, GateResult

def median_time(f, reps:int) -> float:
  ts = []
  for _ in range(reps):
    st = time.perf_counter(); f(); ts.append(time.perf_counter() - st)
  return statistics.median(ts)

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--config", default="tiny")
  ap.add_argument("--layers", type=int, default=None)
  ap.add_argument("--batch-size", type=int, default=8)
  ap.add_argument("--reps", type=int, default=3)
  ap.add_argument("--sample", type=int, default=8, help="k of the sampled reference (edges + k random indices per output range)")
  a = ap.parse_args()
  cfg = get_config(a.config, n_layers=a.layers)
  tr = Trainer(cfg, TrainConfig(batch_size=a.batch_size))
  rng = np.random.default_rng(0)
  batch = lambda: rng.integers(0, cfg.vocab_size, size=(1, a.batch_size, cfg.seq_len + 1))
  gate = CPUGate(tr, "reports/bench_gate")
  st = time.perf_counter()
  first = gate.run([batch()], 1e-3)   # capture + first validated step (cold: compiles the CPU and HCQ2 programs)
  cold = time.perf_counter() - st
  assert first.ok, first.table()
  jit_s = median_time(lambda: tr.step(batch(), 1e-3), max(a.reps, 5))
  def eager():
    tok, lr = tr.step_inputs(batch(), 1e-3)
    out = tr.step_tensors(tok, lr)
    Tensor.realize(*out)
    out[0].item()
  eager(); eager_s = median_time(eager, a.reps)
  val: dict[str, float] = {}
  results: dict[str, GateResult] = {}
  for mode, sample in (("full reference", None), (f"sampled reference (k={a.sample})", (a.sample, 0))):
    gate.sample = sample
    res = results[mode] = GateResult(sample=sample)
    rows: dict = {}
    val[mode] = median_time(lambda: gate._validate_step(batch(), 1e-3, res, rows, 0), a.reps)
    assert res.ok, res.table()
  print(f"config {a.config} ({cfg.n_params()/1e6:.2f}M params, {cfg.n_layers} layers), batch {a.batch_size}x{cfg.seq_len}, "
        f"{len(gate.capture.kernel_indices())} kernel calls per step, {len(rows)} distinct kernels")
  print(f"{'plain step (TinyJit replay)':34s} {jit_s*1e3:10.1f} ms")
  print(f"{'plain step (eager, caches warm)':34s} {eager_s*1e3:10.1f} ms")
  for mode, res in results.items():
    print(f"{'validated step, ' + mode:34s} {val[mode]*1e3:10.1f} ms  (reference on {res.ref_lanes // a.reps:,} of {res.lanes // a.reps:,} "
          f"output elements per step)")
    for k, v in res.phases.items(): print(f"  {k:32s} {v/a.reps*1e3:10.1f} ms")
  print(f"{'gate cold start (capture + 1 step)':34s} {cold*1e3:10.1f} ms")
  for mode in results:
    for name, base in (("TinyJit replay", jit_s), ("eager step", eager_s)):
      ratio = val[mode] / base
      print(f"{mode:30s} overhead vs {name:15s} {ratio:8.1f}x  (target <= 3x: {'MET' if ratio <= 3 else 'NOT MET'})")

if __name__ == "__main__": main()
