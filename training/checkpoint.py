"""Checkpoints: the trainer's named state as safetensors (tinygrad's ``safe_save``) plus a JSON of step and configs.

A checkpoint is written to a temporary name and renamed, so a run killed mid-save leaves the previous one intact."""
from __future__ import annotations
import json, pathlib
from tinygrad import Tensor
from tinygrad.nn.state import safe_save, safe_load
from uopcheck.atomic import replacing, atomic_write_json

class CheckpointError(ValueError):
  """A checkpoint that cannot be resumed from: the message names the file and what is wrong."""

def save_checkpoint(directory:str|pathlib.Path, trainer, step:int, extra:dict|None=None) -> pathlib.Path:
  d = pathlib.Path(directory)
  d.mkdir(parents=True, exist_ok=True)
  tensors, meta = d / "state.safetensors", d / "meta.json"
  with replacing(tensors) as tmp: safe_save(trainer.named_state(), str(tmp))
  atomic_write_json(meta, {"step": step, "model": trainer.model_cfg.as_dict(), "train": trainer.cfg.as_dict(), **(extra or {})})
  return d

def load_checkpoint(directory:str|pathlib.Path, trainer) -> dict:
  """Put a checkpoint's state into ``trainer``; returns its metadata (``step`` is the next step to run)."""
  d = pathlib.Path(directory)
  meta_path, tensors = d / "meta.json", d / "state.safetensors"
  if not meta_path.is_file() or not tensors.is_file(): raise CheckpointError(f"{d}: not a checkpoint (needs meta.json and state.safetensors)")
  try: meta = json.loads(meta_path.read_text())
  except json.JSONDecodeError as e: raise CheckpointError(f"{meta_path}: not JSON ({e})") from None
  if meta.get("model") != trainer.model_cfg.as_dict():
    raise CheckpointError(f"{meta_path}: saved for model config {meta.get('model')}, this run is {trainer.model_cfg.as_dict()}")
  try: saved = safe_load(str(tensors))
  except Exception as e: raise CheckpointError(f"{tensors}: unreadable safetensors ({type(e).__name__}: {e})") from None
  state = trainer.named_state()
  missing = sorted(set(state) - set(saved))
  if missing: raise CheckpointError(f"{tensors}: missing {len(missing)} tensors, first {missing[0]!r}")
  for name, t in state.items():
    if saved[name].shape != t.shape or saved[name].dtype != t.dtype:
      raise CheckpointError(f"{tensors}: {name} is {saved[name].dtype} {saved[name].shape}, the model needs {t.dtype} {t.shape}")
    t.assign(saved[name].to(t.device))
  Tensor.realize(*state.values())
  return meta
