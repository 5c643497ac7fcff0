"""Benchmark: the CPU gate's overhead -- validated step time / plain step time (target <= 3x), measured in one run.

"plain step" is reported two ways: the TinyJit replay the run executes (the honest denominator for a JIT run), and
the eager step (schedule + compile-cached exec, what VALIDATE_WITH_CPU instruments). The validated step is one
gate step after capture (tensor-level reference, the captured step call by call on the device, the CPU and reference
check of every call, TinyJit's replay and the byte compare), warm caches; its phases are printed too.

Then, in the same run, the gate's recall (``training.faults.launch_recall``: k one-element faults of each kind -- a kernel
launch's output, an all-reduce copy, one device's copy of a weight -- each asked of the gate's own check for that launch,
kernels with the sampled and with the full reference side by side) and its false failures: the gate on the stock step
for ``--seeds`` model/batch seeds, where every FAIL would be false.

And the mutants of tinygrad (``fuzz/mutants.py``, the CPU path) that are live in the training step -- its bytes differ
from stock -- each asked of the gate with the sampled and with the full reference (``uopcheck mutate``'s gate detectors).

  python bench/train_gate.py [--config tiny] [--layers N] [--devices N] [--reps 3] [--recall 20] [--seeds 5]
                             [--mutants all|none|ID,ID] [--skip overhead,recall,seeds]"""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import argparse, collections, os, statistics, time
import numpy as np
import uopcheck  # noqa: F401
from tinygrad import Tensor
from uopcheck.training.model import get_config
from uopcheck.training.trainer import Trainer, TrainConfig
from uopcheck.training.gate import CPUGate, GateResult, step_reference_flops
from uopcheck.settings import GATE_STEP_REFERENCE_MAX_FLOPS
from uopcheck.training.faults import launch_recall

def median_time(f, reps:int) -> float:
  ts = []
  for _ in range(reps):
    st = time.perf_counter()
    f()
    ts.append(time.perf_counter() - st)
  return statistics.median(ts)

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--config", default="tiny")
  ap.add_argument("--layers", type=int, default=None)
  ap.add_argument("--batch-size", type=int, default=8)
  ap.add_argument("--reps", type=int, default=3)
  ap.add_argument("--sample", type=int, default=8, help="k of the sampled reference (edges + k random indices per output range)")
  ap.add_argument("--devices", type=int, default=1, help="data parallel over CPU:0..N-1 (the all-reduce's kernels and copies gated)")
  ap.add_argument("--recall", type=int, default=20, help="injected faults per kind for the recall table (0: skip)")
  ap.add_argument("--seeds", type=int, default=5, help="stock-step gate runs (model and batch seeds) for the false-failure count (0: skip)")
  ap.add_argument("--mutants", default="all", help="mutant ids (comma-separated), all (the CPU catalog) or none")
  ap.add_argument("--skip", default="", help="sections to leave out: overhead, recall, seeds")
  a = ap.parse_args()
  skip = set(a.skip.split(",")) - {""}
  cfg = get_config(a.config, n_layers=a.layers)
  devices = tuple(f"CPU:{i}" for i in range(a.devices)) if a.devices > 1 else None
  tr = Trainer(cfg, TrainConfig(batch_size=a.batch_size), devices)
  rng = np.random.default_rng(0)
  def batch():
    return rng.integers(0, cfg.vocab_size, size=(1, a.batch_size, cfg.seq_len + 1))
  gate = CPUGate(tr, "reports/bench_gate")
  if skip >= {"overhead", "recall"}: return seeds_and_mutants(a, cfg, devices, skip)
  st = time.perf_counter()
  first = gate.run([batch()], 1e-3)   # capture + first validated step (cold: compiles the CPU and HCQ2 programs)
  cold = time.perf_counter() - st
  assert first.ok, first.table()
  if "overhead" not in skip: overhead(a, cfg, tr, gate, batch, cold)
  if "recall" not in skip:
    st = time.perf_counter()
    rows = launch_recall(gate, batch(), 1e-3, a.recall, seed=0, sample=a.sample)
    print(f"\nrecall: {a.recall} one-element faults per kind, each alone, asked of the gate's check for that launch (sampled ref: "
          f"every lane where a full run is cheap; Freivalds: caught / in contraction kernels it applies to) "
          f"({time.perf_counter() - st:.1f} s)")
    print(f"{'fault':26s} {'n':>4s} {'all-lanes/bytes':>16s} {f'sampled ref k={a.sample}':>18s} {'Freivalds':>14s} {'ref, both':>10s} "
          f"{'full ref':>9s} {'gate':>6s}")
    for r in rows:
      refs = (f"{r.sampled_ref:>18d} {f'{r.freivalds}/{r.contraction}':>14s} {r.reference:>10d} {r.full_ref:>9d}") if r.fault.startswith("kernel") \
             else f"{'n/a':>18s} {'n/a':>14s} {'n/a':>10s} {'n/a':>9s}"
      print(f"{r.fault:26s} {r.n:4d} {r.cpu:16d} {refs} {r.any:>4d}/{r.n} {'(100%)' if r.any == r.n else 'MISSED SOME'}")
  seeds_and_mutants(a, cfg, devices, skip)

def overhead(a, cfg, tr, gate, batch, cold:float) -> None:
  jit_s = median_time(lambda: tr.step(batch(), 1e-3), max(a.reps, 5))
  def eager():
    tok, lr = tr.step_inputs(batch(), 1e-3)
    out = tr.step_tensors(tok, lr)
    Tensor.realize(*out)
    out[0].item()
  eager()
  eager_s = median_time(eager, a.reps)
  val: dict[str, float] = {}
  results: dict[str, GateResult] = {}
  fv = gate.freivalds
  for mode, sample, cpu, freivalds in (("full reference", None, "all", 0), (f"sampled reference (k={a.sample})", (a.sample, 0), "all", 0),
                                       (f"sampled + Freivalds ({fv})", (a.sample, 0), "all", fv),
                                       ("sampled + Freivalds, CPU distinct", (a.sample, 0), "distinct", fv)):
    gate.sample, gate.cpu_check, gate.freivalds = sample, cpu, freivalds
    res = results[mode] = GateResult(sample=sample, freivalds=freivalds)
    rows: dict = {}
    val[mode] = median_time(lambda: gate._validate_step(batch(), 1e-3, res, rows, 0), a.reps)
    assert res.ok, res.table()
  print(f"config {a.config} ({cfg.n_params()/1e6:.2f}M params, {cfg.n_layers} layers), batch {a.batch_size}x{cfg.seq_len} on {a.devices} device(s), "
        f"{len(gate.capture.kernel_indices())} captured kernel calls, {res.calls // a.reps} launches per step (kernels per device + copies), "
        f"{len(rows)} distinct kernels and copies")
  print(f"{'plain step (TinyJit replay)':34s} {jit_s*1e3:10.1f} ms")
  print(f"{'plain step (eager, caches warm)':34s} {eager_s*1e3:10.1f} ms")
  for mode, res in results.items():
    print(f"{'validated step, ' + mode:34s} {val[mode]*1e3:10.1f} ms  (reference on {res.ref_lanes // a.reps:,}"
          + (f" ({res.freivalds_lanes // a.reps:,} by Freivalds)" if res.freivalds else "") + ", the CPU on "
          f"{res.cpu_lanes // a.reps:,} of {res.lanes // a.reps:,} output elements per step)")
    for k, v in res.phases.items(): print(f"  {k:32s} {v/a.reps*1e3:10.1f} ms")
  print(f"{'gate cold start (capture + 1 step)':34s} {cold*1e3:10.1f} ms")
  for mode in results:
    for name, base in (("TinyJit replay", jit_s), ("eager step", eager_s)):
      ratio = val[mode] / base
      print(f"{mode:30s} overhead vs {name:15s} {ratio:8.1f}x  (target <= 3x: {'MET' if ratio <= 3 else 'NOT MET'})")
  print(f"{'whole gate (capture + 1 validated step) / one TinyJit step':58s} {cold / jit_s:8.1f}x")
  gate.freivalds = fv
  extrapolate(a, cfg, results[f"sampled + Freivalds ({fv})"], a.reps)

def extrapolate(a, cfg, res:GateResult, reps:int, target:str="llama3-8b", devices:int=8, batch:int=16, accum:int=8) -> None:
  """The gate's cost for ``target`` on ``devices`` GPUs, from the rates measured here: FLOPs of one fwd+bwd step
  (step_reference_flops / 2) at the CPU re-run's and the tensor reference's measured FLOP/s, the sampled reference's
  seconds per launch scaled by the reduction lengths, launches scaled by layers, devices and accumulation, and host
  memory for the largest launch (its bytes before and after plus the CPU's copy) and three state snapshots."""
  tcfg = get_config(target)
  f_here = step_reference_flops(cfg, TrainConfig(batch_size=a.batch_size)) / 2
  f_there = step_reference_flops(tcfg, TrainConfig(batch_size=batch, grad_accum=accum)) / 2
  ph = {k: v / reps for k, v in res.phases.items()}
  launches = res.calls / reps
  launches_there = launches * (tcfg.n_layers / cfg.n_layers) * (devices / a.devices) * accum
  cpu_s = ph.get("(in checks) CPU re-run", 0.0) * f_there / f_here
  tref_s = ph.get("tensor-level reference", 0.0) * f_there / f_here
  # Freivalds reads each contraction's operands and output once: its cost grows with tokens x width per device, not tokens x width^2
  fv_scale = ((batch // devices) * tcfg.seq_len * tcfg.dim) / (a.batch_size // a.devices * cfg.seq_len * cfg.dim)
  # the reference phase: sampled lanes (each reads its whole reduction: grows with the reductions) and every lane of the kernels
  # whose full run is cheap (grows with the operands): scaled by the larger of the two, an upper bound
  ref_scale = max((tcfg.dim + tcfg.seq_len) / (cfg.dim + cfg.seq_len), fv_scale)
  ref_per_launch = ph.get("(in checks) reference", 0.0) / launches * ref_scale
  fv_per_launch = ph.get("(in checks) Freivalds", 0.0) / launches * fv_scale
  largest = (batch // devices) * tcfg.seq_len * tcfg.vocab_size * 4       # the logits of one device, float32
  state = 3 * tcfg.n_params() * 4                                          # weights, Adam m and v, float32
  print(f"\nextrapolated to {target} on {devices} devices (batch {batch} x {accum} accumulation of {tcfg.seq_len} tokens; "
        f"{f_there:.2g} FLOP per step vs {f_here:.2g} here):")
  print(f"  launches per step          ~{launches_there:,.0f} (here {launches:,.0f}, scaled by layers, devices, accumulation)")
  print(f"  CPU re-run, all lanes      ~{cpu_s / 3600:,.0f} h on this machine's {os.cpu_count()} cores "
        f"({f_here / max(ph.get('(in checks) CPU re-run', 1e-9), 1e-9) / 1e9:.2f} GFLOP/s measured) -- dominates")
  print(f"  reference, sampled/cheap   ~{ref_per_launch * launches_there / 3600:,.1f} h ({ref_per_launch * 1e3:.1f} ms per launch, "
        f"x{ref_scale:.0f}: the larger of reductions {(tcfg.dim + tcfg.seq_len) / (cfg.dim + cfg.seq_len):.0f}x longer and operands "
        f"{fv_scale:.0f}x larger -- an upper bound)")
  if res.freivalds:
    print(f"  Freivalds, every lane      ~{fv_per_launch * launches_there / 3600:,.1f} h ({fv_per_launch * 1e3:.1f} ms per launch, "
          f"operands {fv_scale:.0f}x larger; the full reference instead: O(n^3), the CPU re-run's order)")
  print(f"  step-level reference      ~{tref_s / 3600:,.0f} h if run: --gate-step-reference auto skips it "
        f"({2 * f_there:.2g} FLOP > GATE_STEP_REFERENCE_MAX_FLOPS {GATE_STEP_REFERENCE_MAX_FLOPS:.2g})")
  print(f"  host memory                ~{(3 * largest + 3 * state) / 2**30:,.0f} GiB: the largest launch 3x {largest / 2**30:.1f} GiB "
        f"(before, after, the CPU's copy; streamed: one launch at a time) + 3 state snapshots of {state / 2**30:.0f} GiB")

def seeds_and_mutants(a, cfg, devices, skip:set[str]) -> None:
  if a.seeds and "seeds" not in skip:
    st, false = time.perf_counter(), []
    for seed in range(a.seeds):
      t = Trainer(cfg, TrainConfig(batch_size=a.batch_size, seed=seed), devices)
      tokens = np.random.default_rng(seed).integers(0, cfg.vocab_size, size=(1, a.batch_size, cfg.seq_len + 1))
      r = CPUGate(t, f"reports/bench_gate/seed{seed}", (a.sample, seed)).run([tokens], 1e-3)
      if not r.ok: false.append(f"seed {seed}: {r.blame}")
    print(f"\nfalse failures on the stock step: {len(false)} of {a.seeds} seeds ({time.perf_counter() - st:.0f} s)")
    for f in false: print(f"  {f}")
  if a.mutants != "none": mutant_recall(None if a.mutants == "all" else a.mutants.split(","))

def mutant_recall(ids:list[str]|None) -> None:
  from uopcheck.fuzz import mutate
  from uopcheck.fuzz.mutants import MUTANTS
  ids = ids or [m.id for m in MUTANTS if not m.device]
  st = time.perf_counter()
  rows = mutate.run(ids, mutate.GATE_DETECTORS, all_detectors=True, progress=lambda s: print(s, flush=True))
  print(f"\nmutants of tinygrad (CPU path) against the gate, sampled vs full reference ({time.perf_counter() - st:.0f} s)")
  print(f"{'mutant':28s} {'live in the step':18s} {'sampled':>8s} {'full':>8s}  detail")
  def outcome(d:str) -> str:   # the gate refused to start the run (exit 1/5), let it start (exit 0: a miss), or the step crashed
    if d == "n/a": return "n/a"
    rc = int(d.split("exit ", 1)[1].split()[0]) if "exit " in d else None
    return "caught" if rc in (1, 5) else "PASSED" if rc == 0 else "crash"
  counts: collections.Counter = collections.Counter()
  for r in rows:
    g, f = r.detectors.get("gate", "n/a"), r.detectors.get("gate-full", "n/a")
    og, of = outcome(g.split(": ", 1)[-1] if g != "n/a" else g), outcome(f.split(": ", 1)[-1] if f != "n/a" else f)
    live = "no (witness only)" if og == "n/a" else "yes"
    if og != "n/a": counts.update([f"sampled {og}", f"full {of}", "live"])
    print(f"{r.mutant:28s} {live:18s} {og:>8s} {of:>8s}  {g.split(': ', 1)[-1][:90]}")
  print(f"live in the step: {counts['live']}; sampled: {counts['sampled caught']} caught, {counts['sampled crash']} crash the step, "
        f"{counts['sampled PASSED']} passed; full: {counts['full caught']} caught, {counts['full crash']} crash, {counts['full PASSED']} passed")

if __name__ == "__main__": main()
