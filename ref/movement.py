"""The six movement ops on numpy arrays, as tinygrad 0.14.0 defines their shapes (uop/ops.py ``_shape``).

- RESHAPE(x, shape): row-major reshape; the element count must not change.
- EXPAND(x, shape): *prepends* ``shape`` to x's shape and broadcasts (0.14 semantics).
- PERMUTE(x, order): axis i of the result is axis order[i] of x.
- PAD(x, offsets, sizes): each axis grows to ``size`` with x placed at ``offset``; the rest is 0.
- SHRINK(x, offsets, sizes): each axis keeps [offset, offset+size).
- FLIP(x, flags): reverses the axes whose flag is True.
The same functions move index maps (for writes through a view) and lane masks."""
from __future__ import annotations
import numpy as np
from tinygrad.uop import Ops

def reshape(x:np.ndarray, shape:tuple[int, ...]) -> np.ndarray:
  if int(np.prod(shape, dtype=np.int64)) != x.size: raise ValueError(f"bad reshape {x.shape} -> {shape}: element count differs")
  return x.reshape(shape)

def expand(x:np.ndarray, lead:tuple[int, ...]) -> np.ndarray: return np.broadcast_to(x, tuple(lead) + x.shape)

def permute(x:np.ndarray, order:tuple[int, ...]) -> np.ndarray:
  if sorted(order) != list(range(x.ndim)): raise ValueError(f"invalid permutation {order} of a {x.ndim}-d value")
  return np.transpose(x, order)

def pad(x:np.ndarray, offsets:tuple[int, ...], sizes:tuple[int, ...], fill=0) -> np.ndarray:
  if len(offsets) != x.ndim or any(o < 0 or o + s > sz for o, s, sz in zip(offsets, x.shape, sizes)):
    raise ValueError(f"invalid pad offsets={offsets} sizes={sizes} for shape {x.shape}")
  out = np.full(tuple(sizes), fill, dtype=x.dtype)
  out[tuple(slice(o, o + s) for o, s in zip(offsets, x.shape))] = x
  return out

def shrink(x:np.ndarray, offsets:tuple[int, ...], sizes:tuple[int, ...]) -> np.ndarray:
  if len(offsets) != x.ndim or any(o < 0 or sz < 0 or o + sz > s for o, sz, s in zip(offsets, sizes, x.shape)):
    raise ValueError(f"invalid shrink offsets={offsets} sizes={sizes} for shape {x.shape}")
  return x[tuple(slice(o, o + sz) for o, sz in zip(offsets, sizes))]

def flip(x:np.ndarray, flags:tuple[bool, ...]) -> np.ndarray:
  if len(flags) != x.ndim: raise ValueError(f"flip flags {flags} don't match a {x.ndim}-d value")
  axes = tuple(i for i, f in enumerate(flags) if f)
  return np.flip(x, axes) if axes else x

def apply(op:Ops, x:np.ndarray, args:tuple, fill=0) -> np.ndarray:
  """Apply movement ``op`` with its decoded arguments (see ``shape_args``) to ``x``."""
  if op is Ops.RESHAPE: return reshape(x, args[0])
  if op is Ops.EXPAND: return expand(x, args[0])
  if op is Ops.PERMUTE: return permute(x, args[0])
  if op is Ops.PAD: return pad(x, args[0], args[1], fill)
  if op is Ops.SHRINK: return shrink(x, args[0], args[1])
  if op is Ops.FLIP: return flip(x, args[0])
  raise ValueError(f"{op} is not a movement op")
