"""wandb as its users set it (WANDB_MODE, WANDB_PROJECT, offline by default with the sync hint) and the metrics plot."""
import pathlib
import pytest
from uopcheck.training.logger import RunLogger, wandb_mode

ROWS = [{"step": s, "loss": 5.0 - 0.1 * s, "lr": 1e-3 * min(1, (s + 1) / 3), "grad_norm": 2.0 / (s + 1), "tokens_per_s": 900.0 + s}
        for s in range(7)]

def test_wandb_mode_disabled_writes_no_wandb_run(tmp_path, monkeypatch):
  monkeypatch.setenv("WANDB_MODE", "disabled")
  lg = RunLogger(tmp_path, {"a": 1})
  lg.log(ROWS[0])
  assert lg.run is None and lg.finish({}) == "" and not (tmp_path / "wandb").exists()
  assert (tmp_path / "metrics.jsonl").read_text().strip()   # the run's own record is still written

def test_offline_by_default_with_the_project_and_the_sync_hint(tmp_path, monkeypatch):
  monkeypatch.delenv("WANDB_MODE", raising=False)
  monkeypatch.delenv("WANDB", raising=False)
  monkeypatch.setenv("WANDB_PROJECT", "uopcheck-test-project")
  lg = RunLogger(tmp_path, {"a": 1})
  assert lg.mode == "offline" and lg.run.project == "uopcheck-test-project"
  for r in ROWS: lg.log(r)
  note = lg.finish({"final_loss": ROWS[-1]["loss"]})
  run_dir = pathlib.Path(note.split("wandb sync ")[1])
  assert note.startswith("wandb: offline run in") and run_dir.is_dir() and run_dir.name.startswith("offline-run-")
  assert list(run_dir.glob("run-*.wandb"))

def test_a_bad_wandb_mode_is_named(monkeypatch):
  monkeypatch.setenv("WANDB_MODE", "sometimes")
  with pytest.raises(ValueError, match="WANDB_MODE='sometimes'"): wandb_mode()

def test_plot_has_loss_lr_grad_norm_and_throughput_panels_with_integer_steps(tmp_path, monkeypatch):
  monkeypatch.setenv("WANDB_MODE", "disabled")
  lg = RunLogger(tmp_path, {})
  for r in ROWS: lg.log(r)
  png = lg.plot("tiny")
  assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  assert lg.plotted["panels"] == ["loss", "lr", "grad_norm", "tokens_per_s"]
  ticks = [t.replace("\u2212", "-") for t in lg.plotted["xticks"] if t]
  assert ticks and all(t.lstrip("-").isdigit() for t in ticks), ticks   # no fractional steps
