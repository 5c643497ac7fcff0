"""Run logging: wandb (offline unless ``WANDB=1``), a metrics.jsonl beside the checkpoints, and the loss-curve PNG.

metrics.jsonl is the run's own record (a resumed run appends to it, so the curve covers the whole run); wandb gets
the same rows, the run and model configs, and the CPU gate's table."""
from __future__ import annotations
import json, os, pathlib

class RunLogger:
  def __init__(self, out_dir:str|pathlib.Path, config:dict, use_wandb:bool=True, project:str="uopcheck-llama"):
    self.out = pathlib.Path(out_dir)
    self.out.mkdir(parents=True, exist_ok=True)
    self.metrics_path = self.out / "metrics.jsonl"
    self.run = None
    if use_wandb:
      os.environ.setdefault("WANDB_SILENT", "true")
      import wandb
      online = os.environ.get("WANDB", "0") == "1"
      self.run = wandb.init(project=project, config=config, dir=str(self.out), mode="online" if online else "offline", reinit="finish_previous")
      self.mode = "online" if online else "offline"

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
    (self.out / "gate.json").write_text(json.dumps(gate.as_dict(), indent=1))
    if self.run is None: return
    import wandb
    cols: list[str|int] = ["kernel", "calls", "dev_vs_cpu_err", "dev_vs_ref_err", "tolerance", "ok"]
    self.run.log({"gate/kernels": wandb.Table(columns=cols, data=[[r.name, r.instances, r.cpu_err, r.ref_err, r.tolerance,
                                                                   r.ok] for r in gate.rows])})
    self.run.summary.update({"gate/ok": gate.ok, "gate/distinct_kernels": len(gate.rows), "gate/calls": gate.calls, "gate/seconds": gate.seconds,
                             "gate/failed": sum(not r.ok for r in gate.rows)})

  def plot(self, title:str) -> pathlib.Path|None:
    rows = self.history()
    if not rows: return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([r["step"] for r in rows], [r["loss"] for r in rows], label="train loss")
    ax.set_xlabel("step"); ax.set_ylabel("loss"); ax.set_title(title); ax.grid(alpha=0.3); ax.legend()
    path = self.out / "loss_curve.png"
    fig.tight_layout(); fig.savefig(path, dpi=100); plt.close(fig)
    return path

  def finish(self, summary:dict) -> None:
    if self.run is not None:
      self.run.summary.update(summary)
      self.run.finish()
