"""Real model graphs as case builders: each returns fresh Tensors built from a fixed seed.

Used by ``pytest conformance/`` (conformance/test_real_graphs.py), ``uopcheck check`` and the benchmarks."""
from __future__ import annotations
from typing import Callable
import numpy as np
from tinygrad import Tensor, dtypes

def _rand(rng:np.random.Generator, *shape, scale=1.0, dtype=dtypes.float32) -> Tensor:
  return Tensor((rng.standard_normal(shape) * scale).astype(np.float32)).cast(dtype) if dtype != dtypes.float32 else \
         Tensor((rng.standard_normal(shape) * scale).astype(np.float32))

def matmul(n=16, seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, n, n) @ _rand(r, n, n)

def matmul_half(n=64, seed=0):
  """A half matmul accumulated in float, the shape tensor cores take (MFMA on CDNA / gfx950, WMMA on RDNA, mma on NVIDIA).
  The values are multiples of 1/8 in [-2, 2]: every product is exact in half and every sum exact in float, so the check is
  exact whatever the unit -- the graph rounds each product to half (MUL in half, then CAST), a matrix unit does not (it
  multiplies exactly), and random values would make that difference a tolerance question instead of a layout check."""
  r = np.random.default_rng(seed)
  a, b = (Tensor((r.integers(-16, 17, size=(n, n)) / 8).astype(np.float32)).cast(dtypes.half) for _ in range(2))
  return a.matmul(b, dtype=dtypes.float)

def matmul_relu_sum(n=64, seed=0):
  r = np.random.default_rng(seed)
  return (_rand(r, n, n) @ _rand(r, n, n)).relu().sum()

def conv2d(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 2, 3, 8, 8).conv2d(_rand(r, 4, 3, 3, 3, scale=0.3), padding=1, stride=1)

def conv2d_strided(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 1, 2, 9, 9).conv2d(_rand(r, 3, 2, 3, 3, scale=0.3), stride=2, dilation=1)

def softmax(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 4, 33, scale=3).softmax(-1)

def log_softmax(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 4, 17, scale=3).log_softmax(-1)

def layernorm(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 6, 32).layernorm(axis=-1) * _rand(r, 32) + _rand(r, 32)

def rmsnorm(seed=0):
  r = np.random.default_rng(seed)
  x = _rand(r, 5, 48)
  return x * (x.square().mean(-1, keepdim=True) + 1e-6).rsqrt() * _rand(r, 48)

def attention(seed=0):
  r = np.random.default_rng(seed)
  q, k, v = _rand(r, 2, 4, 8, 16), _rand(r, 2, 4, 8, 16), _rand(r, 2, 4, 8, 16)
  return q.scaled_dot_product_attention(k, v, is_causal=True)

def embedding(seed=0):
  r = np.random.default_rng(seed)
  table = _rand(r, 20, 8)
  idx = Tensor(r.integers(0, 20, size=(3, 5)).astype(np.int32))
  return table[idx]

def cumsum(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 3, 19).cumsum(axis=1)

def argmax(seed=0):
  r = np.random.default_rng(seed)
  return _rand(r, 7, 13).argmax(axis=1)

def gelu_mlp(seed=0):
  r = np.random.default_rng(seed)
  x = _rand(r, 4, 16)
  return (x @ _rand(r, 16, 32, scale=0.25)).gelu() @ _rand(r, 32, 8, scale=0.25)

def llama_block(seed=0, backward=False):
  """A toy Llama block: RMSNorm, rotary attention with grouped-query heads, SwiGLU FFN, residuals."""
  r = np.random.default_rng(seed)
  B, T, D, H, KV, HD, F = 2, 6, 32, 4, 2, 8, 48
  x = _rand(r, B, T, D)
  wq, wk, wv, wo = _rand(r, D, H*HD, scale=0.2), _rand(r, D, KV*HD, scale=0.2), _rand(r, D, KV*HD, scale=0.2), _rand(r, H*HD, D, scale=0.2)
  w1, w3, w2 = _rand(r, D, F, scale=0.2), _rand(r, D, F, scale=0.2), _rand(r, F, D, scale=0.2)
  g1, g2 = _rand(r, D), _rand(r, D)
  params = [wq, wk, wv, wo, w1, w2, w3, g1, g2]
  if backward:
    for p in params: p.requires_grad = True   # type: ignore[attr-defined]
  def rms(z, g): return z * (z.square().mean(-1, keepdim=True) + 1e-5).rsqrt() * g
  freqs = 1.0 / (10000 ** (np.arange(0, HD, 2, dtype=np.float32) / HD))
  ang = np.outer(np.arange(T, dtype=np.float32), freqs)
  cos, sin = Tensor(np.cos(ang).astype(np.float32)), Tensor(np.sin(ang).astype(np.float32))
  def rope(z):  # z: (B, T, h, HD)
    z1, z2 = z[..., 0::2], z[..., 1::2]
    c, s = cos.reshape(1, T, 1, HD//2), sin.reshape(1, T, 1, HD//2)
    return (z1 * c - z2 * s).unsqueeze(-1).cat((z1 * s + z2 * c).unsqueeze(-1), dim=-1).flatten(-2)
  h = rms(x, g1)
  q = rope((h @ wq).reshape(B, T, H, HD)).transpose(1, 2)
  k = rope((h @ wk).reshape(B, T, KV, HD)).transpose(1, 2).repeat_interleave(H // KV, dim=1)
  v = (h @ wv).reshape(B, T, KV, HD).transpose(1, 2).repeat_interleave(H // KV, dim=1)
  a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(B, T, H*HD) @ wo
  x2 = x + a
  h2 = rms(x2, g2)
  out = x2 + ((h2 @ w1).silu() * (h2 @ w3)) @ w2
  if not backward: return out
  loss = out.square().mean()
  loss.backward()
  return [loss] + [p.grad for p in params]

def llama_block_backward(seed=0): return llama_block(seed, backward=True)

def flip_conv(seed=0):
  """A transposed-convolution-like flip: the kernel flipped on both spatial axes, and the output flipped back (an
  image-augmentation mirror) -- flips on padded, merged axes."""
  r = np.random.default_rng(seed)
  x, w = _rand(r, 1, 2, 7, 7), _rand(r, 3, 2, 3, 3, scale=0.3)
  return x.flip(3).conv2d(w.flip((2, 3)), padding=1).flip(3).reshape(3, 49).flip(1)

def sgd_assign(seed=0):
  """An in-place optimizer step: weights and momentum updated with assign (what every training loop does), and the
  updated weights read again in the same step."""
  r = np.random.default_rng(seed)
  w, m, g = _rand(r, 16, 8).realize(), _rand(r, 16, 8, scale=0.1).realize(), _rand(r, 16, 8)
  m.assign(m * 0.9 + g)
  w.assign(w - m * 0.01)
  return [w, m, (w * w).sum(axis=1)]

def multi_reduce(seed=0):
  """Several reductions in one graph, some over the result of another and after reshapes: mean/var normalisation of
  a grouped tensor (group norm), a max over the reduced means, a reduction over a merged axis."""
  r = np.random.default_rng(seed)
  x = _rand(r, 2, 6, 5, 5, scale=2)
  g = x.reshape(2, 3, 2 * 5 * 5)
  mean = g.mean(-1, keepdim=True)
  var = ((g - mean) ** 2).mean(-1, keepdim=True)
  y = ((g - mean) / (var + 1e-5).sqrt()).reshape(2, 6, 5, 5)
  return [y, mean.max(1), y.reshape(2, 150).sum(1) - x.sum((1, 2, 3)), (x.max(-1) - x.min(-1)).sum(-1)]

REAL_GRAPHS: dict[str, Callable] = {
  "matmul": matmul, "matmul_half": matmul_half, "matmul_relu_sum": matmul_relu_sum, "conv2d": conv2d, "conv2d_strided": conv2d_strided,
  "softmax": softmax, "log_softmax": log_softmax, "layernorm": layernorm, "rmsnorm": rmsnorm, "attention": attention, "embedding": embedding,
  "cumsum": cumsum, "argmax": argmax, "gelu_mlp": gelu_mlp, "llama_block": llama_block, "llama_block_backward": llama_block_backward,
  "flip_conv": flip_conv, "sgd_assign": sgd_assign, "multi_reduce": multi_reduce,
}
