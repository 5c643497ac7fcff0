"""Run logging: wandb (offline by default), a metrics.jsonl beside the checkpoints, and the metrics PNG.

metrics.jsonl is the run's own record (a resumed run appends to it, so the curves cover the whole run); wandb gets
the same rows, the run and model configs, and the CPU gate's table.

wandb as its users set it: ``WANDB_MODE`` (``online`` / ``offline`` / ``disabled``) and ``WANDB_PROJECT`` are respected;
without ``WANDB_MODE`` the run is offline (``WANDB=1``, the older switch, still means online), and ``finish`` says how to
upload an offline run (``wandb sync DIR``)."""
from __future__ import annotations
import json, os, pathlib

MODES = ("online", "offline", "disabled")
PANELS = (("loss", "train loss"), ("lr", "learning rate"), ("grad_norm", "gradient norm (before clipping)"), ("tokens_per_s", "tokens / s"))

def wandb_mode() -> str:
  mode = os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB", "0") == "1" else "offline")
  if mode == "dryrun": mode = "offline"   # wandb's old name for offline
  if mode not in MODES: raise ValueError(f"WANDB_MODE={mode!r}: expected one of {', '.join(MODES)}")
  return mode

class RunLogger:
  def __init__(self, out_dir:str|pathlib.Path, config:dict, use_wandb:bool=True, project:str|None=None):
    self.out = pathlib.Path(out_dir)
    self.out.mkdir(parents=True, exist_ok=True)
    self.metrics_path = self.out / "metrics.jsonl"
    self.run = None
    self.mode = wandb_mode() if use_wandb else "disabled"
    self.plotted: dict = {}
    if self.mode != "disabled":
      os.environ.setdefault("WANDB_SILENT", "true")
      import wandb
      project = project or os.environ.get("WANDB_PROJECT") or "uopcheck-llama"
      self.run = wandb.init(project=project, config=config, dir=str(self.out), mode=self.mode, reinit="finish_previous")  # type: ignore[arg-type]

  def history(self) -> list[dict]:
    if not self.metrics_path.is_file(): return []
    return [json.loads(line) for line in self.metrics_path.read_text().splitlines() if line.strip()]

  def truncate_after(self, step:int) -> None:
    """On resume: drop rows past the checkpoint (a run killed after its last save logged steps it will redo)."""
    rows = [r for r in self.history() if r["step"] < step]
    self.metrics_path.write_text("".join(json.dumps(r) + "\n" for r in rows))

  def log(self, row:dict) -> None:
    with open(self.metrics_path, "a") as f: f.write(json.dumps(row) + "\n")
    if self.run is not None: self.run.log({k: v for k, v in row.items() if k != "step"}, step=row["step"])

  def log_gate(self, gate) -> None:
    """the gate's kernels as a wandb table and its verdict in the run summary (gate.json is the run's report, written by train)"""
    if self.run is None: return
    import wandb
    cols: list[str|int] = ["kernel", "calls", "dev_vs_cpu_err", "dev_vs_ref_err", "tolerance", "ok"]
    self.run.log({"gate/kernels": wandb.Table(columns=cols, data=[[r.name, r.instances, r.cpu_err, r.ref_err, r.tolerance,
                                                                   r.ok] for r in gate.rows])})
    self.run.summary.update({"gate/ok": gate.ok, "gate/distinct_kernels": len(gate.rows), "gate/calls": gate.calls, "gate/seconds": gate.seconds,
                             "gate/failed": sum(not r.ok for r in gate.rows)})

  def plot(self, title:str) -> pathlib.Path|None:
    """loss, learning rate, gradient norm and throughput over the steps, one panel each (integer step ticks)"""
    rows = self.history()
    if not rows: return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    panels = [(k, label) for k, label in PANELS if any(k in r for r in rows)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.2 * len(panels)), sharex=True, squeeze=False)
    for ax, (k, label) in zip(axes[:, 0], panels):
      pts = [(r["step"], r[k]) for r in rows if k in r]
      ax.plot([p[0] for p in pts], [p[1] for p in pts])
      ax.set_ylabel(label, fontsize=8)
      ax.grid(alpha=0.3)
      ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0, 0].set_title(title)
    axes[-1, 0].set_xlabel("step")
    fig.canvas.draw()
    self.plotted = {"panels": [k for k, _ in panels], "xticks": [t.get_text() for t in axes[-1, 0].get_xticklabels()]}
    path = self.out / "loss_curve.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

  def finish(self, summary:dict) -> str:
    """close the wandb run; returns what the user should know about it (where it is, how to upload it) or ''"""
    if self.run is None: return ""
    self.run.summary.update(summary)
    run_dir = pathlib.Path(self.run.dir).parent   # .../wandb/offline-run-<time>-<id>
    self.run.finish()
    if self.mode == "offline": return f"wandb: offline run in {run_dir}; upload it with: wandb sync {run_dir}"
    return f"wandb: {self.mode} run {run_dir.name}"
