"""The training step: AdamW with global-norm gradient clipping, a cosine schedule with linear warmup, gradient
accumulation, and the step JIT-compiled with ``TinyJit`` as tinygrad users do.

``Trainer.step_tensors`` builds one step lazily (loss, grad norm, and every tensor the optimizer updates) so the
gate can check the same graph at tensor level; ``Trainer.jit_step`` realizes it under TinyJit."""
from __future__ import annotations
import math
from dataclasses import dataclass, asdict
import numpy as np
from tinygrad import Tensor, TinyJit, dtypes
from tinygrad.helpers import Context
from tinygrad.nn.optim import AdamW
from tinygrad.nn.state import get_state_dict
from uopcheck.fast.stepper import restore
from uopcheck.training.model import Llama, LlamaConfig, parameters

@dataclass
class TrainConfig:
  steps: int = 50
  batch_size: int = 8
  grad_accum: int = 1
  lr: float = 3e-3
  min_lr: float = 3e-4
  warmup: int = 5
  weight_decay: float = 0.01
  clip: float = 1.0
  b1: float = 0.9
  b2: float = 0.95
  seed: int = 0

  def as_dict(self) -> dict: return asdict(self)

def cosine_lr(step:int, cfg:TrainConfig) -> float:
  """Linear warmup over ``warmup`` steps to ``lr``, then cosine decay to ``min_lr`` at ``steps``."""
  if step < cfg.warmup: return cfg.lr * (step + 1) / cfg.warmup
  progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
  return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1.0 + math.cos(math.pi * progress))

class Trainer:
  """``devices``: None for one device; a tuple for data parallelism (weights replicated, the batch split on its
  batch axis, gradients all-reduced by tinygrad's multi-device lowering), e.g. the 8 GPUs of an MI350X node."""
  def __init__(self, model_cfg:LlamaConfig, train_cfg:TrainConfig, devices:tuple[str, ...]|None=None):
    Tensor.manual_seed(train_cfg.seed)
    self.model_cfg, self.cfg, self.devices = model_cfg, train_cfg, devices
    if devices is not None and train_cfg.batch_size % len(devices):
      raise ValueError(f"batch size {train_cfg.batch_size} does not split over {len(devices)} devices")
    self.model = Llama(model_cfg)
    self.params = parameters(self.model)
    if devices is not None:
      for t in [*self.params, self.model.rope_cos, self.model.rope_sin]: t.shard_(devices)
    self.opt = AdamW(self.params, lr=train_cfg.lr, b1=train_cfg.b1, b2=train_cfg.b2, weight_decay=train_cfg.weight_decay)
    Tensor.realize(*self.state_tensors())
    self.jit_step = TinyJit(self._realized_step)

  def state_tensors(self) -> list[Tensor]:
    """Everything a step reads and writes besides its inputs: weights, optimizer moments and step powers, lr."""
    return [*self.params, *self.opt.m, *self.opt.v, self.opt.b1_t, self.opt.b2_t, self.opt.lr, self.model.rope_cos, self.model.rope_sin]

  def step_tensors(self, tokens:Tensor, lr:Tensor) -> list[Tensor]:
    """One lazy step over tokens (grad_accum, batch, seq_len+1): [loss, grad_norm, *optimizer updates]."""
    with Context(TRAINING=1):
      self.opt.zero_grad()
      accum = tokens.shape[0]
      loss = sum(self.model.loss(tokens[i]) for i in range(accum)) / accum
      loss.backward()
      grads = [p.grad for p in self.params]
      grad_norm = Tensor.stack(*[g.float().square().sum() for g in grads]).sum().sqrt()
      scale = (self.cfg.clip / (grad_norm + 1e-6)).minimum(1.0)
      for p in self.params: p.grad = p.grad * scale.cast(p.grad.dtype)
      self.opt.lr.assign(lr.reshape(self.opt.lr.shape).cast(self.opt.lr.dtype))
      return [loss, grad_norm, *self.opt.schedule_step()]

  def _realized_step(self, tokens:Tensor, lr:Tensor) -> tuple[Tensor, Tensor]:
    out = self.step_tensors(tokens, lr)
    Tensor.realize(*out)
    return out[0], out[1]

  def step_inputs(self, tokens:np.ndarray, lr:float) -> tuple[Tensor, Tensor]:
    tok, lr_t = Tensor(np.ascontiguousarray(tokens, dtype=np.int32)), Tensor([lr], dtype=dtypes.float32)
    if self.devices is not None: tok, lr_t = tok.shard(self.devices, axis=1), lr_t.shard(self.devices)
    return tok.realize(), lr_t.realize()

  def step(self, tokens:np.ndarray, lr:float) -> tuple[float, float]:
    loss, gnorm = self.jit_step(*self.step_inputs(tokens, lr))
    return float(loss.item()), float(gnorm.item())

  def snapshot(self) -> list[np.ndarray]: return [t.numpy().copy() for t in self.state_tensors()]

  def restore(self, values:list[np.ndarray]) -> None:
    """Write saved values back into the state buffers in place (the JIT holds these very buffers)."""
    for t, v in zip(self.state_tensors(), values):
      if not t.uop.is_realized: raise RuntimeError(f"state tensor {t.shape} has pending work; realize it before restoring")
      restore(t.uop, np.ascontiguousarray(v).tobytes())

  def named_state(self) -> dict[str, Tensor]:
    """The checkpointed state, by name: weights, AdamW moments, the step powers b1^t and b2^t, and lr."""
    d = {f"model.{k}": v for k, v in get_state_dict(self.model).items() if not k.startswith("rope_")}
    d.update({f"opt.m.{i}": t for i, t in enumerate(self.opt.m)})
    d.update({f"opt.v.{i}": t for i, t in enumerate(self.opt.v)})
    d.update({"opt.b1_t": self.opt.b1_t, "opt.b2_t": self.opt.b2_t, "opt.lr": self.opt.lr})
    return d
