"""A Llama in tinygrad: RMSNorm, rotary embeddings, grouped-query attention, SwiGLU, tied or untied embeddings.

Configs run from ``tiny`` (a CPU trains it in minutes) to the Llama 3 8B shape. The model is plain tinygrad
(``nn.Linear``, ``nn.Embedding``, ``Tensor.scaled_dot_product_attention``) so that the kernels the gate checks are
the kernels a tinygrad user's Llama run would make."""
from __future__ import annotations
from dataclasses import dataclass, asdict, replace
import numpy as np
from tinygrad import Tensor, nn
from uopcheck.spec.errors import SpecError

@dataclass(frozen=True)
class LlamaConfig:
  dim: int
  n_layers: int
  n_heads: int
  n_kv_heads: int
  vocab_size: int
  ffn_dim: int
  seq_len: int
  rope_theta: float = 10000.0
  norm_eps: float = 1e-5
  tie_embeddings: bool = True

  def __post_init__(self):
    if self.dim % self.n_heads: raise ValueError(f"dim {self.dim} is not a multiple of n_heads {self.n_heads}")
    if self.n_heads % self.n_kv_heads: raise ValueError(f"n_heads {self.n_heads} is not a multiple of n_kv_heads {self.n_kv_heads}")
    if (self.dim // self.n_heads) % 2: raise ValueError(f"head dim {self.dim // self.n_heads} must be even for rotary embeddings")

  @property
  def head_dim(self) -> int: return self.dim // self.n_heads

  def n_params(self) -> int:
    attn = self.dim * self.head_dim * (self.n_heads * 2 + self.n_kv_heads * 2)
    layer = attn + 3 * self.dim * self.ffn_dim + 2 * self.dim
    return self.vocab_size * self.dim * (1 if self.tie_embeddings else 2) + self.n_layers * layer + self.dim

  def as_dict(self) -> dict: return asdict(self)

# byte-level vocabulary (256 bytes + BOS + EOS) for the shipped dataset; Llama 3's tokenizer has 128256 entries
BYTE_VOCAB = 258
CONFIGS: dict[str, LlamaConfig] = {
  "tiny":     LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=BYTE_VOCAB, ffn_dim=172, seq_len=32),
  "small":    LlamaConfig(dim=256, n_layers=4, n_heads=8, n_kv_heads=4, vocab_size=BYTE_VOCAB, ffn_dim=688, seq_len=128),
  "llama3-1b": LlamaConfig(dim=2048, n_layers=16, n_heads=32, n_kv_heads=8, vocab_size=128256, ffn_dim=8192, seq_len=8192,
                           rope_theta=500000.0, tie_embeddings=True),
  "llama3-8b": LlamaConfig(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256, ffn_dim=14336, seq_len=8192,
                           rope_theta=500000.0, tie_embeddings=False),
}

def get_config(name:str, **overrides) -> LlamaConfig:
  if name not in CONFIGS: raise SpecError(f"--config {name!r}: unknown model config; known: {', '.join(CONFIGS)}")
  return replace(CONFIGS[name], **{k: v for k, v in overrides.items() if v is not None})

def _init_linear(fan_in:int, fan_out:int, std:float) -> nn.Linear:
  lin = nn.Linear(fan_in, fan_out, bias=False)
  lin.weight = Tensor.normal(fan_out, fan_in, std=std)
  return lin

class RMSNorm:
  def __init__(self, dim:int, eps:float):
    self.eps, self.weight = eps, Tensor.ones(dim)
  def __call__(self, x:Tensor) -> Tensor: return (x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()) * self.weight

def rope_tables(cfg:LlamaConfig) -> tuple[Tensor, Tensor]:
  """cos and sin of position * theta^(-2i/d), shape (seq_len, head_dim/2): constants (computed on the host in float64,
  stored as float32 buffers), never trained."""
  freqs = 1.0 / (cfg.rope_theta ** (np.arange(0, cfg.head_dim, 2, dtype=np.float64) / cfg.head_dim))
  angles = np.arange(cfg.seq_len, dtype=np.float64)[:, None] * freqs[None, :]
  return (Tensor(np.cos(angles).astype(np.float32)).is_param_(False), Tensor(np.sin(angles).astype(np.float32)).is_param_(False))

def apply_rope(x:Tensor, cos:Tensor, sin:Tensor) -> Tensor:
  """Rotate each (even, odd) pair of the head dimension; x is (B, T, H, head_dim)."""
  B, T, H, D = x.shape
  pairs = x.reshape(B, T, H, D // 2, 2)
  a, b = pairs[..., 0], pairs[..., 1]
  c, s = cos[:T].reshape(1, T, 1, D // 2), sin[:T].reshape(1, T, 1, D // 2)
  return Tensor.stack(a * c - b * s, a * s + b * c, dim=-1).reshape(B, T, H, D)

class Attention:
  def __init__(self, cfg:LlamaConfig, std:float, out_std:float):
    self.cfg = cfg
    self.wq = _init_linear(cfg.dim, cfg.n_heads * cfg.head_dim, std)
    self.wk = _init_linear(cfg.dim, cfg.n_kv_heads * cfg.head_dim, std)
    self.wv = _init_linear(cfg.dim, cfg.n_kv_heads * cfg.head_dim, std)
    self.wo = _init_linear(cfg.n_heads * cfg.head_dim, cfg.dim, out_std)

  def __call__(self, x:Tensor, cos:Tensor, sin:Tensor) -> Tensor:
    cfg, (B, T, _) = self.cfg, x.shape
    q = self.wq(x).reshape(B, T, cfg.n_heads, cfg.head_dim)
    k = self.wk(x).reshape(B, T, cfg.n_kv_heads, cfg.head_dim)
    v = self.wv(x).reshape(B, T, cfg.n_kv_heads, cfg.head_dim)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    if (rep := cfg.n_heads // cfg.n_kv_heads) > 1:  # grouped-query attention: each kv head serves `rep` query heads
      k, v = (t.unsqueeze(3).expand(B, T, cfg.n_kv_heads, rep, cfg.head_dim).reshape(B, T, cfg.n_heads, cfg.head_dim) for t in (k, v))
    out = q.transpose(1, 2).scaled_dot_product_attention(k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    return self.wo(out.transpose(1, 2).reshape(B, T, cfg.n_heads * cfg.head_dim))

class FeedForward:
  def __init__(self, cfg:LlamaConfig, std:float, out_std:float):
    self.w1, self.w3 = _init_linear(cfg.dim, cfg.ffn_dim, std), _init_linear(cfg.dim, cfg.ffn_dim, std)
    self.w2 = _init_linear(cfg.ffn_dim, cfg.dim, out_std)
  def __call__(self, x:Tensor) -> Tensor: return self.w2(self.w1(x).silu() * self.w3(x))

class Block:
  def __init__(self, cfg:LlamaConfig, std:float, out_std:float):
    self.attention_norm, self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps), RMSNorm(cfg.dim, cfg.norm_eps)
    self.attention, self.feed_forward = Attention(cfg, std, out_std), FeedForward(cfg, std, out_std)
  def __call__(self, x:Tensor, cos:Tensor, sin:Tensor) -> Tensor:
    h = x + self.attention(self.attention_norm(x), cos, sin)
    return h + self.feed_forward(self.ffn_norm(h))

class Llama:
  def __init__(self, cfg:LlamaConfig, std:float=0.02):
    self.cfg = cfg
    out_std = std / (2 * cfg.n_layers) ** 0.5  # scaled init of the residual projections (GPT-2 / Llama practice)
    self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
    self.tok_embeddings.weight = Tensor.normal(cfg.vocab_size, cfg.dim, std=std)
    self.layers = [Block(cfg, std, out_std) for _ in range(cfg.n_layers)]
    self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
    if not cfg.tie_embeddings: self.output = _init_linear(cfg.dim, cfg.vocab_size, std)
    self.rope_cos, self.rope_sin = rope_tables(cfg)

  def __call__(self, tokens:Tensor) -> Tensor:
    """Logits (B, T, vocab) for int tokens (B, T)."""
    x = self.tok_embeddings(tokens)
    for layer in self.layers: x = layer(x, self.rope_cos, self.rope_sin)
    x = self.norm(x)
    return x @ self.tok_embeddings.weight.T if self.cfg.tie_embeddings else self.output(x)

  def loss(self, batch:Tensor) -> Tensor:
    """Next-token cross entropy of a (B, T+1) token batch."""
    logits = self(batch[:, :-1])
    return logits.sparse_categorical_crossentropy(batch[:, 1:])

def parameters(model:Llama) -> list[Tensor]:
  """The trained tensors (rotary tables excluded)."""
  return [t for name, t in nn.state.get_state_dict(model).items() if not name.startswith("rope_")]
