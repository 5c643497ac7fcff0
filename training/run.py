"""``uopcheck train``: the Llama run, with the CPU gate in front of it.

  uopcheck train --config tiny --steps 50 --validate      gate, then train; loss curve, checkpoints, wandb (offline)
  uopcheck train --replay FILE                            re-run a gate reproducer (one kernel, saved inputs)

With --validate the run starts only if every kernel of the JIT-captured train step agrees with the CPU and with the
reference (training/gate.py); otherwise it prints the table, writes reproducers, and exits 3 without training."""
from __future__ import annotations
import argparse, contextlib, os, pathlib, re, signal, sys, threading, time
import numpy as np
from uopcheck.results import emit, DEFAULT_KINDS
from uopcheck.atomic import atomic_write_json
from uopcheck.argtypes import directory, positive
from uopcheck.settings import GATE_FREIVALDS
from uopcheck.fuzz.findings_io import EXIT_FAULT, EXIT_DIVERGED

def add_arguments(p:argparse.ArgumentParser) -> None:
  p.add_argument("--config", default="tiny", help="model config: tiny, small, llama3-1b, llama3-8b")
  p.add_argument("--steps", type=int, default=50, help="optimizer steps (default 50)")
  p.add_argument("--batch-size", type=int, default=8, help="sequences per micro-batch (default 8)")
  p.add_argument("--grad-accum", type=int, default=1, help="micro-batches per optimizer step")
  p.add_argument("--seq-len", type=int, default=None, help="override the config's sequence length")
  p.add_argument("--layers", type=int, default=None, help="override the config's layer count")
  p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default 3e-3)")
  p.add_argument("--min-lr", type=float, default=3e-4, help="cosine floor (default 3e-4)")
  p.add_argument("--warmup", type=int, default=5, help="linear warmup steps (default 5)")
  p.add_argument("--clip", type=float, default=1.0, help="global gradient-norm clip (default 1.0)")
  p.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay (default 0.01)")
  p.add_argument("--seed", type=int, default=0, help="weights and data order (default 0)")
  p.add_argument("--data", default=None, help="Megatron indexed dataset PREFIX (PREFIX.bin + PREFIX.idx); default: the shipped "
                 "generated corpus; 'synthetic' for labelled synthetic tokens")
  p.add_argument("--device", default=None, help="tinygrad device for the run (default: tinygrad's default, CPU here)")
  p.add_argument("--devices", type=int, default=1, help="data-parallel over DEVICE:0..N-1 (8 on an MI350X node)")
  p.add_argument("--validate", action="store_true", help="run the CPU gate first; refuse to train if a kernel fails")
  p.add_argument("--gate-steps", type=int, default=1, help="validated replays of the captured step (different batches)")
  p.add_argument("--gate-batch-size", type=int, default=None,
                 help="DOWNGRADE, reported: gate a one-device step at this batch instead of the run's step (default: the run's)")
  p.add_argument("--gate-seq-len", type=int, default=None,
                 help="DOWNGRADE, reported: gate a one-device step at this sequence length instead of the run's (default: the run's)")
  p.add_argument("--gate-only", action="store_true", help="run the gate and exit (0 pass, 3 fail)")
  p.add_argument("--gate-sample", type=int, default=8, metavar="K",
                 help="the reference checks each kernel on the edges and K random indices of every output range (seed: --seed); "
                      "the CPU check stays on every lane")
  p.add_argument("--gate-freivalds", type=positive(int, zero=True), default=GATE_FREIVALDS, metavar="N",
                 help="with a sampled reference, also check every lane of each contraction (matmul) kernel by N of Freivalds' random "
                      f"projections, O(n^2) where the full reference is O(n^3) (0: off; default {GATE_FREIVALDS})")
  p.add_argument("--gate-full-reference", action="store_true", help="the reference checks every lane of every kernel (slow at scale)")
  p.add_argument("--gate-cpu-check", choices=("all", "distinct"), default="all",
                 help="all: the CPU re-runs every launch (device faults seen wherever they land); distinct: each kernel AST's first "
                      "launch only -- at scale the CPU re-run is the gate's cost (README), and a fault in another launch is then unseen")
  p.add_argument("--gate-step-reference", choices=("auto", "on", "off"), default="auto",
                 help="the step-level reference in numpy (the scheduler check): auto runs it when its estimated cost is at most "
                      "GATE_STEP_REFERENCE_MAX_FLOPS (uopcheck/settings.py), else skips it and says so")
  p.add_argument("--out", type=directory, default="reports/train", help="run directory: checkpoints, metrics.jsonl, loss_curve.png, gate/, wandb/")
  p.add_argument("--checkpoint-every", type=int, default=25, help="steps between checkpoints (default 25)")
  p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
  p.add_argument("--stop-at", type=int, default=None, help="stop before this step, with a checkpoint (the schedule still spans --steps)")
  p.add_argument("--no-wandb", action="store_true", help="skip wandb, as WANDB_MODE=disabled does (metrics.jsonl and the PNG are still "
                 "written); wandb is offline unless WANDB_MODE=online, and WANDB_PROJECT names the project")
  p.add_argument("--replay", default=None, metavar="FILE", help="re-run a gate reproducer and exit")
  p.add_argument("--census", action="store_true", help="count the run's step without running it (tinygrad's NULL device): launches, "
                 "distinct kernels, copies, FLOPs, the lanes the gate's reference checks, planned memory per device; then exit")

def _dataset(args, model_cfg, train_cfg):
  from uopcheck.training import data
  if args.data == "synthetic":
    return data.SyntheticTokens(model_cfg.vocab_size, model_cfg.seq_len, train_cfg.batch_size, train_cfg.grad_accum, train_cfg.seed)
  if args.data is None:
    prefix = pathlib.Path(args.out) / "data" / "uopcheck-corpus_text_document"
    ds = data.IndexedDataset(prefix) if prefix.with_name(prefix.name + ".idx").is_file() else data.build_shipped_dataset(prefix)
  else: ds = data.IndexedDataset(args.data)
  stream = ds.tokens()
  if stream.size and int(stream.max()) >= model_cfg.vocab_size:
    raise data.DatasetError(f"{ds.bin_path}: token {int(stream.max())} is outside the model's vocabulary of {model_cfg.vocab_size}")
  return data.TokenBatches(stream, model_cfg.seq_len, train_cfg.batch_size, train_cfg.grad_accum, train_cfg.seed, source=str(ds.prefix))

def open_device(name:str) -> None:
  """Open a device up front, so a missing one is a one-line error before any work (not a traceback mid-run)."""
  import importlib.util
  from tinygrad import Device
  from uopcheck.spec.errors import SpecError
  from uopcheck.fast.runner import hcq2_active
  def no_extra(why:str) -> SpecError:
    return SpecError(f"device {name}: tinygrad 0.14.0's AMD backend under HCQ2=1 imports extra.hcq2.ops_amd2 from the tinygrad "
                     f"repository, which the PyPI wheel does not ship ({why}): put a tinygrad v0.14.0 checkout on PYTHONPATH, or run with HCQ2=0")
  if name.split(":")[0] == "AMD" and hcq2_active():  # checked first: a failed ops_amd import can't be retried in one process
    try: spec = importlib.util.find_spec("extra.hcq2.ops_amd2")
    except (ImportError, ValueError): spec = None
    if spec is None: raise no_extra("not found on the path")
  try: Device[name]
  except ModuleNotFoundError as e:
    if (e.name or "").startswith("extra"): raise no_extra(str(e)) from None
    raise SpecError(f"device {name} cannot be opened: {e}") from None
  except Exception as e:
    raise SpecError(f"device {name} cannot be opened: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}") from None

def _gate_trainer(trainer, args) -> tuple[object, str]:
  """The trainer the gate checks and, if it is not the run's own step, the downgrade to report: by default the run's own
  trainer -- its devices (data parallel: the all-reduce's kernels and copies), batch and sequence length; with
  --gate-batch-size/--gate-seq-len a one-device trainer of the same model at that size (other kernels than the run's)."""
  from dataclasses import replace
  from uopcheck.training.trainer import Trainer
  if args.gate_batch_size is None and args.gate_seq_len is None: return trainer, ""
  per_device = trainer.cfg.batch_size // (len(trainer.devices) if trainer.devices else 1)
  bs, sl = args.gate_batch_size or per_device, args.gate_seq_len or trainer.model_cfg.seq_len
  ndev = len(trainer.devices) if trainer.devices else 1
  downgrade = (f"the gate checked a one-device step of the same model at batch {bs}, seq_len {sl}, not the run's step "
               f"(batch {trainer.cfg.batch_size} over {ndev} device(s), seq_len {trainer.model_cfg.seq_len}): "
               "kernels at the run's shapes" + (" and the all-reduce" if trainer.devices else "") + " are not gated")
  print(f"CPU gate: DOWNGRADE: {downgrade}")
  return Trainer(replace(trainer.model_cfg, seq_len=sl), replace(trainer.cfg, batch_size=bs)), downgrade

def _gate_batch(batch:np.ndarray, args) -> np.ndarray:
  """Cut a run batch (accum, batch, seq+1) down to a downgraded gate trainer's shape (the run's own: as it is)."""
  if args.gate_batch_size is None and args.gate_seq_len is None: return batch
  per_device = batch.shape[1] // max(args.devices, 1)
  return batch[:, :args.gate_batch_size or per_device, :(args.gate_seq_len + 1) if args.gate_seq_len else batch.shape[2]]

def replay(path:str) -> int:
  from uopcheck.training.gate import replay_reproducer
  ok, msg = replay_reproducer(path)
  print(msg)
  return 0 if ok else 1

def census(args) -> int:
  """``--census``: the run's step counted on tinygrad's NULL device (training/census.py), nothing run or allocated"""
  from uopcheck.training.census import census_in_subprocess, table
  if args.devices < 1 or args.batch_size % args.devices:
    print(f"uopcheck train: --batch-size {args.batch_size} does not split over --devices {args.devices}", file=sys.stderr)
    return 2
  try: c = census_in_subprocess(args.config, args.devices, args.batch_size, args.grad_accum, args.seq_len, args.layers, args.gate_sample,
                                     progress=lambda s: print(s, file=sys.stderr, flush=True))
  except RuntimeError as e:
    print(f"uopcheck train: {e}", file=sys.stderr)
    return 2
  print(table(c))
  return 0

def train(args) -> int:
  if args.replay: return replay(args.replay)
  if args.census: return census(args)
  if not args.device: return _train(args)
  if (m := re.fullmatch(r"([A-Za-z]+):(\d+)", args.device)) is not None:
    # tinygrad 0.14 takes the default device from DEV, a Target list whose syntax reads "CPU:1" as device CPU, renderer "1"
    dev = m[1].upper()
    print(f"uopcheck train: --device {args.device}: a device index cannot be the default device (tinygrad's DEV reads it as "
          f"{dev} with renderer '{m[2]}'); use --device {dev}, and --devices N to train data parallel over {dev}, {dev}:1, ...",
          file=sys.stderr)
    return 2
  if args.device.startswith("MOCK+"):   # tinygrad's mock GPU: found, prepared and opened by fast.devices, on the plain path
    from uopcheck.fast.devices import default_device
    with default_device(args.device): return _train(args)
  # DEV is read when tinygrad is imported; if it already is (in-process callers), it is set there too -- and both are put
  # back afterwards: an in-process run must not move its caller (or the processes the caller starts later) to its device
  helpers = sys.modules.get("tinygrad.helpers")
  before_env, before_value = os.environ.get("DEV"), helpers.DEV.value if helpers is not None else None
  os.environ["DEV"] = args.device
  if helpers is not None: helpers.DEV.value = args.device
  try: return _train(args)
  finally:
    if before_env is None: os.environ.pop("DEV", None)
    else: os.environ["DEV"] = before_env
    if helpers is not None: helpers.DEV.value = before_value

def _train(args) -> int:
  from tinygrad import Device
  from uopcheck.spec.errors import SpecError, first_line
  from uopcheck.training.model import get_config
  from uopcheck.training.trainer import Trainer, TrainConfig, cosine_lr
  from uopcheck.training.checkpoint import load_checkpoint
  from uopcheck.training.logger import RunLogger
  from uopcheck.training.gate import CPUGate
  from uopcheck.fast.runner import hcq2_active
  from tqdm import tqdm
  from uopcheck.training.logger import wandb_mode
  try: wandb_mode()
  except ValueError as e:
    print(f"uopcheck train: {e}", file=sys.stderr)
    return 2
  model_cfg = get_config(args.config, seq_len=args.seq_len, n_layers=args.layers)
  train_cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, grad_accum=args.grad_accum, lr=args.lr, min_lr=args.min_lr,
                          warmup=args.warmup, weight_decay=args.weight_decay, clip=args.clip, seed=args.seed)
  out = pathlib.Path(args.out)
  batches = _dataset(args, model_cfg, train_cfg)
  device = Device.DEFAULT
  print(f"uopcheck train: {args.config} ({model_cfg.n_params()/1e6:.2f}M params) on {device} ({'HCQ2' if hcq2_active() else 'plain'} path), "
        f"data: {batches.label} {batches.source}, batch {train_cfg.batch_size}x{train_cfg.grad_accum} of {model_cfg.seq_len} tokens")
  devices = tuple(f"{device}:{i}" for i in range(args.devices)) if args.devices > 1 else None
  for d in devices or (device,): open_device(d)
  try: trainer = Trainer(model_cfg, train_cfg, devices)
  except SpecError: raise
  except MemoryError as e:   # the model's state does not fit the device: the run's size, not a tinygrad failure
    print(f"uopcheck train: the model's initial state does not fit {device}: {first_line(e)} (uopcheck train --census with the run's "
          "flags counts what one step plans)", file=sys.stderr)
    return 2
  except Exception as e:   # tinygrad raised (a hang, a crash) realizing the model's initial state: tinygrad's, not uopcheck's
    print(f"uopcheck train: tinygrad raised while realizing the model's initial state on {device}: {first_line(e)} "
          "(a tinygrad failure, not a uopcheck one)", file=sys.stderr)
    return 1
  start = 0
  if args.resume:
    meta = load_checkpoint(out / "checkpoint", trainer)
    start = int(meta["step"])
    print(f"resumed from {out / 'checkpoint'} at step {start}")
  config = {"model": model_cfg.as_dict(), "train": train_cfg.as_dict(), "data": batches.label, "data_source": batches.source, "device": device,
            "hcq2": hcq2_active(), "validate": args.validate}
  logger = RunLogger(out, config, use_wandb=not args.no_wandb)
  if args.resume: logger.truncate_after(start)
  else: logger.metrics_path.unlink(missing_ok=True)
  if args.validate:
    gate_batches = [_gate_batch(batches.batch(-1 - i), args) for i in range(max(1, args.gate_steps))]  # batches the run never draws
    print(f"CPU gate: capturing the train step with TinyJit and checking every kernel of {len(gate_batches)} replay(s)...", flush=True)
    sample = None if args.gate_full_reference else (args.gate_sample, args.seed)
    gate_trainer, downgrade = _gate_trainer(trainer, args)
    gate = CPUGate(gate_trainer, out / "gate", sample, args.gate_step_reference, args.gate_cpu_check,
                   args.gate_freivalds).run(gate_batches, cosine_lr(start, train_cfg))
    gate.downgrade = downgrade
    emit(gate.result(), [*(getattr(args, "report", None) or DEFAULT_KINDS), "json"], out)   # the table; gate.json always (the run's record)
    logger.log_gate(gate)
    if not gate.ok:
      reps = [r.reproducer for r in gate.rows if r.reproducer]
      print(f"uopcheck train: refusing to start the run: the CPU gate failed ({gate.blame}); "
            f"{len(reps)} reproducer(s): {', '.join(reps) or 'none (see the notes above)'}", file=sys.stderr)
      logger.finish({"started": False})
      # 1: the gate found a bug in tinygrad; 2: the step does not fit in memory; 3: uopcheck's own reference could not check a
      # kernel (a uopcheck-internal error);
      # 5: a nondeterministic device fault (a failing kernel wrote other bytes when re-run from the same inputs)
      if gate.internal_only: return 3
      if gate.out_of_memory: return 2   # the run's size does not fit this machine: an input problem, no verdict
      return EXIT_FAULT if gate.blame and gate.blame.startswith("nondeterministic") else 1
    if args.gate_only:
      logger.finish({"started": False, "gate_only": True})
      return 0
  tokens_per_step = train_cfg.batch_size * train_cfg.grad_accum * model_cfg.seq_len
  losses: list[float] = []
  end = min(train_cfg.steps, args.stop_at) if args.stop_at is not None else train_cfg.steps
  bar = tqdm(range(start, end), desc="train", unit="step", dynamic_ncols=True, mininterval=1.0)
  with graceful_interrupt() as stop:
    rc = _train_steps(bar, stop, trainer, batches, train_cfg, logger, args, out, end, tokens_per_step, losses)
  if rc is not None:
    if rc == 130:
      png = logger.plot(f"{args.config} on {device}")
      print(f"uopcheck train: interrupted: checkpoint at step {stop['saved_at']} in {out / 'checkpoint'}, loss curve {png}; continue with "
            f"the same command and --resume", file=sys.stderr)
    return rc
  bar.close()

  png = logger.plot(f"{args.config} on {device}")
  hist = logger.history()
  summary = {"first_loss": hist[0]["loss"] if hist else None, "final_loss": hist[-1]["loss"] if hist else None, "steps": len(hist)}
  atomic_write_json(out / "summary.json", summary)
  if (note := logger.finish(summary)): print(note)
  print(f"trained steps {start}..{end - 1}: loss {summary['first_loss']:.4f} -> {summary['final_loss']:.4f}; "
        f"loss curve {png}; checkpoint {out / 'checkpoint'}; metrics {logger.metrics_path}" if hist else "no steps to run")
  return 0

@contextlib.contextmanager
def graceful_interrupt():
  """The first Ctrl-C asks the training loop to stop after the step in flight (a step stopped halfway would leave the
  weights half-updated; a checkpoint is taken at the step boundary); a second one stops at once (KeyboardInterrupt)."""
  stop = {"requested": False, "saved_at": None}
  def on_sigint(signum, frame):
    if stop["requested"]: raise KeyboardInterrupt
    stop["requested"] = True
    print("\nuopcheck train: Ctrl-C: finishing this step, then saving a checkpoint (Ctrl-C again stops at once)", file=sys.stderr, flush=True)
  old = signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None
  try: yield stop
  finally:
    if old is not None: signal.signal(signal.SIGINT, old)

def _train_steps(bar, stop:dict, trainer, batches, train_cfg, logger, args, out:pathlib.Path, end:int, tokens_per_step:int, losses:list) -> int|None:
  """the run's steps; None when they all ran, else the exit code (diverged, or interrupted after a checkpoint)"""
  from uopcheck.training.trainer import cosine_lr
  from uopcheck.training.checkpoint import save_checkpoint
  for step in bar:
    lr = cosine_lr(step, train_cfg)
    st = time.perf_counter()
    loss, gnorm = trainer.step(batches.batch(step), lr)
    dt = time.perf_counter() - st
    losses.append(loss)
    logger.log({"step": step, "loss": loss, "lr": lr, "grad_norm": gnorm, "tokens_per_s": tokens_per_step / dt, "step_s": dt})
    bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.2e}", gnorm=f"{gnorm:.2f}")
    if not np.isfinite(loss):
      print(f"uopcheck train: loss is {loss} at step {step}; stopping (checkpoint left at the last good save)", file=sys.stderr)
      logger.finish({"diverged_at": step})
      return EXIT_DIVERGED
    if (step + 1) % args.checkpoint_every == 0 or step + 1 == end or stop["requested"]:
      save_checkpoint(out / "checkpoint", trainer, step + 1, {"data": batches.label, "data_source": batches.source})
    if stop["requested"]:
      bar.close()
      stop["saved_at"] = step + 1
      logger.finish({"interrupted_at": step + 1})
      return 130
  return None
