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
import argparse, collections, json, os, statistics, time
import numpy as np
import uopcheck  # noqa: F401
from tinygrad import Tensor
from uopcheck.training.model import get_config
from uopcheck.training.trainer import Trainer, TrainConfig
from uopcheck.training.gate import CPUGate, GateResult, step_reference_flops
from uopcheck.settings import GATE_STEP_REFERENCE_MAX_FLOPS
from uopcheck.training.faults import launch_recall
from uopcheck.training.census import Census, GateRates, census_in_subprocess, freivalds_elements, gate_cost, size, table

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
  ap.add_argument("--skip", default="", help="sections to leave out: overhead, extrapolate, fit, recall, seeds")
  ap.add_argument("--target", default="llama3-8b:8:16:8", help="the run to extrapolate the gate's cost to: CONFIG:DEVICES:BATCH:ACCUM")
  ap.add_argument("--target-census", default=None, metavar="FILE", help="its census, from python -m uopcheck.training.census --json")
  ap.add_argument("--fit", default="tiny,small,llama3-1b:1", help="configs (CONFIG[:BATCH]) to check against this machine's memory")
  ap.add_argument("--fit-check", default="small:4", help="CONFIG[:BATCH] whose real gate run checks the memory model ('' to skip)")
  a = ap.parse_args()
  skip = set(a.skip.split(",")) - {""}
  cfg = get_config(a.config, n_layers=a.layers)
  devices = tuple(f"CPU:{i}" for i in range(a.devices)) if a.devices > 1 else None
  tr = Trainer(cfg, TrainConfig(batch_size=a.batch_size), devices)
  rng = np.random.default_rng(0)
  def batch():
    return rng.integers(0, cfg.vocab_size, size=(1, a.batch_size, cfg.seq_len + 1))
  gate = CPUGate(tr, "reports/bench_gate")
  if "fit" not in skip: fits(a, a.fit.split(","))
  if skip >= {"overhead", "recall"}: return seeds_and_mutants(a, cfg, devices, skip)
  st = time.perf_counter()
  first = gate.run([batch()], 1e-3)   # capture + first validated step (cold: compiles the CPU and HCQ2 programs)
  cold = time.perf_counter() - st
  assert first.ok, first.table()
  if "overhead" not in skip: overhead(a, cfg, tr, gate, batch, cold, skip)
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

def target_census(a) -> Census:
  """the census of the run the gate is for: ``--target-census FILE`` (written by ``python -m uopcheck.training.census
  --json``), or counted now (``--target CONFIG:DEVICES:BATCH:ACCUM``; minutes for llama3-8b)"""
  if a.target_census:
    with open(a.target_census) as f: return Census.from_json(json.load(f))
  name, devices, batch, accum = (a.target.split(":") + ["1", "8", "1"])[:4]
  print(f"counting the step of {a.target} on tinygrad's NULL device (--target-census FILE reuses one) ...", flush=True)
  return census_in_subprocess(name, int(devices), int(batch), int(accum), sample_k=a.sample)

def overhead(a, cfg, tr, gate, batch, cold:float, skip:set[str]) -> None:
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
  if "extrapolate" not in skip:
    here = census_in_subprocess(a.config, a.devices, a.batch_size, n_layers=a.layers, sample_k=a.sample)
    if (here.launches, len(here.kernels)) != (res.calls // a.reps, len(rows)):   # the census must count the step the gate ran
      print(f"census of {a.config}: {here.launches} launches, {len(here.kernels)} kernels; the gate ran {res.calls // a.reps}, {len(rows)}")
    extrapolate(a, results[f"sampled + Freivalds ({fv})"], a.reps, here, target_census(a))

def extrapolate(a, res:GateResult, reps:int, here:Census, there:Census) -> None:
  """The gate's cost at ``there``'s size (a census of the run's step: launches, kernels, FLOPs, lanes, bytes counted on
  tinygrad's NULL device, training/census.py), from the rates measured here: the per-launch phases of ``res`` divided
  by the census of the step they ran (``here``)."""
  rates = GateRates.measure(here, res.phases, reps, freivalds=res.freivalds > 0)
  cost, distinct = gate_cost(there, rates), gate_cost(there, rates, cpu_check="distinct")
  tcfg = get_config(there.config, seq_len=there.seq_len, n_layers=there.n_layers)
  step_ref = step_reference_flops(tcfg, TrainConfig(batch_size=there.batch_size, grad_accum=there.grad_accum))
  h = 3600
  print(f"\ngate cost extrapolated from the census of the run's step (rates measured here on {rates.measured_on}; "
        f"{os.cpu_count()} cores):")
  print(table(there))
  gflops = 1 / max(rates.cpu_s_per_flop, 1e-30) / 1e9
  print(f"  CPU re-run, all lanes      ~{cost['cpu_s'] / h:,.1f} h ({there.total('flops'):.3g} FLOP at the {gflops:.2f} "
        f"GFLOP/s measured) -- {'dominates' if cost['cpu_s'] >= max(cost['ref_s'], cost['freivalds_s']) else 'not the largest part'}")
  print(f"  CPU re-run, distinct ASTs  ~{distinct['cpu_s'] / h:,.1f} h (--gate-cpu-check distinct: each of {len(there.kernels)} kernel ASTs once)")
  print(f"  reference, sampled/cheap   ~{cost['ref_s'] / h:,.1f} h ({there.total('sampled_work'):.3g} lanes of work at "
        f"{rates.ref_s_per_work * 1e9:.1f} ns each)")
  if res.freivalds:
    print(f"  Freivalds, every lane      ~{cost['freivalds_s'] / h:,.1f} h ({freivalds_elements(there):.3g} operand elements at "
          f"{rates.freivalds_s_per_element * 1e9:.1f} ns each)")
  print(f"  step-level reference       {step_ref:.2g} FLOP of numpy: "
        + ("skipped by --gate-step-reference auto" if step_ref > GATE_STEP_REFERENCE_MAX_FLOPS else "run")
        + f" (GATE_STEP_REFERENCE_MAX_FLOPS {GATE_STEP_REFERENCE_MAX_FLOPS:.2g})")
  print(f"  host memory                ~{cost['host_bytes'] / 2**30:,.1f} GiB: 4 state snapshots of {there.state_bytes / 2**30:,.1f} GiB + the "
        f"largest launch's arguments 3x {there.largest_launch_bytes / 2**30:,.2f} GiB (streamed: one launch at a time)")

def fits(a, configs:list[str]) -> None:
  """Which configs the gate can run on this machine, CPU as the device: the step's planned buffers (census) live in host
  memory here, beside the gate's own (4 state snapshots, the largest launch 3x). The model is first checked against the
  peak RSS of a real gate run (``--fit-check``, the step-level reference off: at scale it is skipped); what it misses
  there (the allocator's cache of the eager step's buffers, compiled programs, the CPU's copies) scales the others."""
  total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
  def need(c:Census) -> int: return sum(c.device_bytes.values()) + int(gate_cost(c, GateRates(0, 0, 0, ""))["host_bytes"])
  def spec(s:str) -> tuple[str, int]: return (p := s.partition(":"))[0], int(p[2] or a.batch_size)
  scale = 1.0
  if a.fit_check:
    name, bs = spec(a.fit_check)
    model = need(census_in_subprocess(name, batch_size=bs, sample_k=a.sample))
    rss, base = peak_rss([name, str(bs)]), peak_rss(None)
    scale = max(1.0, (rss - base) / model)
    print(f"\nthe memory model against a real gate run of {name} batch {bs} (uopcheck train --gate-only, step-level reference off): "
          f"peak RSS {rss / 2**20:,.0f} MiB, {base / 2**20:,.0f} MiB of it the interpreter with tinygrad and uopcheck imported; "
          f"the rest {(rss - base) / 2**20:,.1f} MiB measured, {model / 2**20:,.1f} MiB modelled: x{scale:.2f} applied below")
  print(f"\nwhich configs fit this machine ({total / 2**30:.1f} GiB), the CPU as the device, full sequence length:")
  print(f"{'config':12s} {'batch':>5s} {'seq':>6s} {'launches':>9s} {'step buffers':>13s} {'gate host':>10s} {f'need x{scale:.2f}':>11s}  fits")
  largest = None
  for s in configs:
    name, bs = spec(s)
    c = census_in_subprocess(name, batch_size=bs, sample_k=a.sample)
    step_b, n = sum(c.device_bytes.values()), need(c) * scale
    largest = s if n <= total else largest
    print(f"{name:12s} {c.batch_size:5d} {c.seq_len:6d} {c.launches:9,d} {size(step_b):>13s} {size(need(c) - step_b):>10s} "
          f"{size(int(n)):>11s}  {'yes' if n <= total else 'NO'}")
  print(f"largest config that fits: {largest or 'none'}")

RSS_PROBE = """import sys, resource
from uopcheck.settings import apply_environment
apply_environment()
from uopcheck import cli
import uopcheck.training.gate, uopcheck.training.run  # noqa: F401
if len(sys.argv) > 1:
  rc = cli.main(["train", "--config", sys.argv[1], "--batch-size", sys.argv[2], "--gate-only", "--validate", "--no-wandb",
                 "--gate-step-reference", "off", "--out", sys.argv[3]])
  assert rc == 0, f"the gate run exited {rc}"
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""

def peak_rss(args:list[str]|None) -> int:
  """peak RSS in bytes of a fresh process that imports uopcheck's gate, and with ``args`` (CONFIG, BATCH) runs it"""
  import subprocess, sys, tempfile
  with tempfile.TemporaryDirectory() as d:
    out = subprocess.run([sys.executable, "-c", RSS_PROBE, *([*args, d] if args else [])], capture_output=True, text=True, check=True)
  return int(out.stdout.strip().splitlines()[-1])

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
