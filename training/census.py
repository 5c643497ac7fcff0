"""The run's own step, counted without running it: what the gate will face at the run's size.

``take_census`` builds the trainer of a run (model config, sequence length, per-device batch, accumulation, device count)
on tinygrad's NULL device -- it allocates nothing and executes nothing, yet schedules, memory-plans and renders every kernel
as a real device would -- and records the step TinyJit captures: every launch (a call over multi-device buffers is one
launch per device, as the gate checks it), its kernel AST, the elements it stores, tinygrad's own FLOP and byte estimates
of its program, and what the gate's reference would evaluate for it (every lane where a full run is cheap, else the
sampled lanes: ``ref.kernel_interp``'s edges + k per output range, each reading its whole reduction). Buffer bytes are
the planned buffers of the captured step per device, and the state the gate snapshots on the host.

So a Llama 3 8B step on 8 devices, which no machine here could run, is counted exactly (launches, distinct kernels,
copies, output elements, FLOPs, memory) -- scheduling it on the CPU takes minutes -- and the gate's cost there is those
counts times the rates ``bench/train_gate.py`` measures on a step it does run (``gate_cost``).

  python -m uopcheck.training.census --config llama3-8b --devices 8 --batch-size 16 --grad-accum 8 [--json FILE]

The census runs in its own process (``census_in_subprocess``): the NULL device must be tinygrad's default before tinygrad
is imported, and a census of a big step holds its graph in memory only while it runs."""
from __future__ import annotations
import argparse, json, os, subprocess, sys, time
from dataclasses import dataclass, field, asdict
from math import prod

CENSUS_FORMAT = "uopcheck-step-census/1"

@dataclass
class KernelCount:
  """one distinct kernel AST of the step: how often it launches and what one launch costs"""
  name: str
  launches: int = 0
  out_elements: int = 0     # elements one launch stores
  flops: int = 0            # tinygrad's estimate for one launch (Estimates.ops)
  mem_bytes: int = 0        # tinygrad's estimate of the bytes one launch touches (Estimates.mem)
  full_work: int = 0        # lanes a full reference run spans at its widest node (a matmul's M.N.K)
  sampled_work: int = 0     # the same for the gate's sampled reference (full_work where a full run is cheap)
  cheap: bool = False       # every lane checked even when sampled (training.gate.full_is_cheap)
  contraction: bool = False # a fused float contraction: Freivalds' check applies if its one store reads it
  operand_elements: int = 0 # the elements of its global buffers: what Freivalds' projections read

@dataclass
class Census:
  config: str
  devices: int
  batch_size: int
  grad_accum: int
  seq_len: int
  n_layers: int
  n_params: int
  sample_k: int
  launches: int = 0           # per step, every device (what the gate's table counts as launches, copies included)
  copies: int = 0
  copy_bytes: int = 0
  copy_elements: int = 0
  state_bytes: int = 0        # the trainer's state (weights, Adam moments, ...) as the host snapshots it: one logical copy
  device_bytes: dict[str, int] = field(default_factory=dict)   # the captured step's planned buffers, per device
  largest_launch_bytes: int = 0   # the arguments of the biggest launch (the gate holds them before, after, and the CPU's copy)
  kernels: list[KernelCount] = field(default_factory=list)
  seconds: float = 0.0        # the census' own time (scheduling on the host)

  @property
  def kernel_launches(self) -> int: return sum(k.launches for k in self.kernels)
  def total(self, what:str, first_only:bool=False) -> int:
    """a per-launch quantity summed over the step's launches (``first_only``: one launch per distinct kernel)"""
    return sum(getattr(k, what) * (1 if first_only else k.launches) for k in self.kernels)
  def to_json(self) -> dict: return {"format": CENSUS_FORMAT, **asdict(self)}
  @staticmethod
  def from_json(d:dict) -> Census:
    if not isinstance(d, dict) or d.get("format") != CENSUS_FORMAT: raise ValueError(f"not a step census ({CENSUS_FORMAT})")
    d = {k: v for k, v in d.items() if k != "format"}
    try: return Census(**{**d, "kernels": [KernelCount(**k) for k in d["kernels"]]})
    except (TypeError, KeyError) as e: raise ValueError(f"a malformed step census: {e}") from None

def _sampled_work(ki, k:int) -> int:
  """the widest node's lanes when each output range runs over its edges and ``k`` random indices (at most k+2 lanes)"""
  def end(r) -> int: return int(r.src[0].arg) if r.src[0].op.name == "CONST" else int(r.src[0].vmax)
  def lanes(u) -> int:
    rs = ki.open_in[u] | ({u} if u.op.name == "RANGE" else set())
    return prod(min(end(r), k + 2) if r in ki.output_ranges else end(r) for r in rs)
  return max((lanes(u) for u in ki.order), default=0)

def take_census(config:str, devices:int=1, batch_size:int=8, grad_accum:int=1, seq_len:int|None=None, n_layers:int|None=None,
                sample_k:int=8, progress=None) -> Census:
  """Capture the run's step on tinygrad's NULL device (the default device must be NULL: see ``census_in_subprocess``)."""
  import numpy as np
  from tinygrad import Device
  from tinygrad.uop import Ops
  from tinygrad.helpers import ansistrip
  from uopcheck.spec.errors import SpecError
  from uopcheck.training.model import get_config
  from uopcheck.training.trainer import Trainer, TrainConfig
  from uopcheck.training.gate import full_is_cheap
  from uopcheck.ref.kernel_interp import KernelInterpreter
  from uopcheck.fast.jit_capture import recording_jit, resolve_args, jit_inputs
  from uopcheck.fast.stepper import per_device_calls, single_buffer
  if not Device.DEFAULT.startswith("NULL"): raise SpecError(f"a census runs on tinygrad's NULL device, not {Device.DEFAULT} (set DEV=NULL)")
  st = time.perf_counter()
  cfg = get_config(config, seq_len=seq_len, n_layers=n_layers)
  names = tuple(f"{Device.DEFAULT}:{i}" for i in range(devices)) if devices > 1 else None
  say = progress or (lambda s: None)
  say(f"census: building {config} ({cfg.n_params() / 1e6:,.1f}M params) on {devices} NULL device(s)")
  tr = Trainer(cfg, TrainConfig(batch_size=batch_size, grad_accum=grad_accum), names)
  tokens = np.zeros((grad_accum, batch_size, cfg.seq_len + 1), np.int32)
  with recording_jit() as rec:
    for i in range(2):   # call 0 runs eagerly, call 1 captures
      say(f"census: step {i} ({'eager' if i == 0 else 'TinyJit capture'}), {time.perf_counter() - st:.0f} s")
      tr.step(tokens, 1e-3)
  if not rec.captures: raise SpecError("the train step was not captured by TinyJit (JIT=0 in the environment?)")
  cap = rec.captures[-1]
  inputs = jit_inputs(tr.step_inputs(tokens, 1e-3))
  c = Census(config, devices, batch_size, grad_accum, cfg.seq_len, cfg.n_layers, cfg.n_params(), sample_k)
  c.state_bytes = sum(prod(t.shape) * t.dtype.itemsize for t in tr.state_tensors())
  kernels: dict[bytes, KernelCount] = {}
  seen: set[int] = set()
  for ast_call, prg_call in zip(cap.ast_calls, cap.program_calls):
    call = resolve_args(ast_call, inputs)
    for launch, _ in per_device_calls(call):
      c.launches += 1
      bufs = [single_buffer(a) for a in launch.src[1:] if not a.is_bound_var]
      for b in bufs:
        if id(base := b.base) not in seen:
          seen.add(id(base))
          c.device_bytes[base.device] = c.device_bytes.get(base.device, 0) + base.nbytes
      c.largest_launch_bytes = max(c.largest_launch_bytes, sum(b.nbytes for b in bufs))
      if launch.src[0].op is not Ops.SINK:
        c.copies += 1
        c.copy_bytes += bufs[0].nbytes if bufs else 0
        c.copy_elements += bufs[0].size if bufs else 0
        continue
      ast = launch.src[0]
      if (kc := kernels.get(ast.key)) is None:
        ki = KernelInterpreter(ast, check_spec=False)
        est = prg_call.src[0].src[0].arg.estimates if prg_call.src[0].op is Ops.PROGRAM else None
        full = ki.widest()[0]
        kc = kernels[ast.key] = KernelCount(
          ansistrip(prg_call.src[0].arg.name) if prg_call.src[0].op is Ops.PROGRAM else f"kernel{len(kernels)}",
          out_elements=sum(bufs[s].size for s in ki.stored_slots() if s < len(bufs)),
          flops=int(est.ops) if est is not None and isinstance(est.ops, int) else 0,
          mem_bytes=int(est.mem) if est is not None and isinstance(est.mem, int) else 0,
          full_work=full, cheap=full_is_cheap(ast), contraction=bool(ki.fused),
          operand_elements=sum(b.size for b in bufs))
        kc.sampled_work = full if kc.cheap else _sampled_work(ki, sample_k)
      kc.launches += 1
  c.kernels = sorted(kernels.values(), key=lambda k: -k.flops * k.launches)
  c.seconds = time.perf_counter() - st
  return c

def freivalds_elements(c:Census) -> int:
  """what Freivalds' check reads per step: every buffer element of each launch of a sampled contraction kernel"""
  return sum(k.operand_elements * k.launches for k in c.kernels if k.contraction and not k.cheap)

# ** the gate's cost at the census' size, from rates measured on a step the gate ran **

@dataclass
class GateRates:
  """seconds per unit of work, measured on a step the gate ran (``bench/train_gate.py``): the CPU re-run per FLOP, the
  sampled reference per lane of sampled work, Freivalds' check per operand element read"""
  cpu_s_per_flop: float
  ref_s_per_work: float
  freivalds_s_per_element: float
  measured_on: str

  @staticmethod
  def measure(census:Census, phases:dict[str, float], steps:int, cpu_check:str="all", freivalds:bool=True) -> GateRates:
    """divide the gate's measured phases (summed over ``steps`` validated steps) by the census of the same step"""
    ph = {k: v / steps for k, v in phases.items()}
    fv_elems = freivalds_elements(census) if freivalds else 0
    return GateRates(ph.get("(in checks) CPU re-run", 0.0) / max(census.total("flops", cpu_check == "distinct"), 1),
                     ph.get("(in checks) reference", 0.0) / max(census.total("sampled_work"), 1),
                     ph.get("(in checks) Freivalds", 0.0) / max(fv_elems, 1),
                     f"{census.config}, batch {census.batch_size}x{census.seq_len}, {census.devices} device(s)")

def gate_cost(c:Census, r:GateRates, cpu_check:str="all", snapshots:int=4) -> dict[str, float]:
  """the gate's per-step cost at census ``c``'s size, in seconds and bytes: the CPU re-run (every launch, or each distinct
  kernel's first), the sampled reference, Freivalds' check of the contraction kernels, and the host memory (``snapshots``
  copies of the state -- the state before the gate, before the step, after the call-by-call replay, after TinyJit's
  replay -- plus the largest launch's arguments three times: before, after, the CPU's copy)"""
  fv_elems = freivalds_elements(c)
  return {"cpu_s": c.total("flops", cpu_check == "distinct") * r.cpu_s_per_flop,
          "ref_s": c.total("sampled_work") * r.ref_s_per_work,
          "freivalds_s": fv_elems * r.freivalds_s_per_element,
          "host_bytes": snapshots * c.state_bytes + 3 * c.largest_launch_bytes}

def census_in_subprocess(config:str, devices:int=1, batch_size:int=8, grad_accum:int=1, seq_len:int|None=None,
                         n_layers:int|None=None, sample_k:int=8, timeout:float|None=None, progress=None) -> Census:
  """``take_census`` in a fresh process with ``DEV=NULL``; ``progress`` gets its progress lines"""
  import tempfile
  with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "census.json")
    cmd = [sys.executable, "-m", "uopcheck.training.census", "--config", config, "--devices", str(devices), "--batch-size", str(batch_size),
           "--grad-accum", str(grad_accum), "--sample", str(sample_k), "--json", out, "--quiet"]
    if seq_len is not None: cmd += ["--seq-len", str(seq_len)]
    if n_layers is not None: cmd += ["--layers", str(n_layers)]
    env = {**os.environ, "DEV": "NULL", "NULL_ALLOW_COPYOUT": "1"}
    last = "no output"
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as p:
      assert p.stderr is not None
      for line in p.stderr:   # its progress, passed on; the last line names a failure
        if progress is not None: progress(line.rstrip())
        last = line.strip() or last
      rc = p.wait(timeout)
    if rc != 0: raise RuntimeError(f"census of {config} failed (exit {rc}): {last}")
    with open(out) as f: return Census.from_json(json.load(f))

def size(b:int) -> str: return f"{b / 2**30:,.2f} GiB" if b >= 2**30 else f"{b / 2**20:,.1f} MiB"

def table(c:Census) -> str:
  lines = [f"{c.config}: {c.n_params / 1e6:,.1f}M params, {c.n_layers} layers, batch {c.batch_size} x {c.grad_accum} accumulation x "
           f"{c.seq_len} tokens on {c.devices} device(s) -- counted on tinygrad's NULL device in {c.seconds:.0f} s",
           f"  launches per step   {c.launches:,} ({c.kernel_launches:,} kernel launches of {len(c.kernels)} distinct kernel ASTs, "
           f"{c.copies:,} copies of {size(c.copy_bytes)})",
           f"  output elements     {c.total('out_elements'):,} per step",
           f"  FLOPs (tinygrad)    {c.total('flops'):.3g} per step; each distinct kernel once: {c.total('flops', True):.3g}",
           f"  reference work      {c.total('sampled_work'):.3g} lanes sampled (k={c.sample_k}; every lane where cheap), "
           f"{c.total('full_work'):.3g} for a full reference",
           f"  device memory       {', '.join(f'{d} {size(b)}' for d, b in sorted(c.device_bytes.items())[:2])}"
           + (f" ... ({len(c.device_bytes)} devices)" if len(c.device_bytes) > 2 else "") + " (the captured step's planned buffers)",
           f"  state (one copy)    {size(c.state_bytes)}; largest launch's arguments {size(c.largest_launch_bytes)}"]
  return "\n".join(lines)

def main(argv:list[str]|None=None) -> int:
  ap = argparse.ArgumentParser(prog="python -m uopcheck.training.census", description=__doc__.split("\n\n")[0])
  ap.add_argument("--config", default="tiny")
  ap.add_argument("--devices", type=int, default=1)
  ap.add_argument("--batch-size", type=int, default=8, help="the global batch (split over the devices), as uopcheck train takes it")
  ap.add_argument("--grad-accum", type=int, default=1)
  ap.add_argument("--seq-len", type=int, default=None)
  ap.add_argument("--layers", type=int, default=None)
  ap.add_argument("--sample", type=int, default=8, help="k of the gate's sampled reference")
  ap.add_argument("--json", default=None, help="write the census here")
  ap.add_argument("--quiet", action="store_true")
  a = ap.parse_args(argv)
  os.environ.setdefault("NULL_ALLOW_COPYOUT", "1")
  from uopcheck.settings import apply_environment
  apply_environment()
  from uopcheck.spec.errors import SpecError
  try:
    c = take_census(a.config, a.devices, a.batch_size, a.grad_accum, a.seq_len, a.layers, a.sample,
                    progress=lambda s: print(s, file=sys.stderr, flush=True))
  except (SpecError, ValueError) as e:
    print(f"uopcheck: {e}", file=sys.stderr)
    return 2
  if a.json:
    from uopcheck.atomic import atomic_write_json
    atomic_write_json(a.json, c.to_json())
  if not a.quiet: print(table(c))
  return 0

if __name__ == "__main__": sys.exit(main())
