"""weakint and weakfloat: what they mean, and to what and when they are lowered.

From tinygrad 0.14.0 ``uop/weak.py`` and ``dtype.py``:
- A Python int constant has dtype ``weakint``: a *mathematical integer* (unbounded) while it
  stays weak. Variables and indices are weakint. A Python float constant is ``weakfloat``: a real.
- Weak dtypes sit in the promotion lattice just above bool (weakint) and above int64/uint64
  (weakfloat), so ``x + 1`` takes x's dtype: the weak operand *commits* to its partner's dtype
  (``pm_commit_weak``: a CONST commits directly, its value truncated on emission; any other weak
  node gets a CAST).
- A weak node with no concrete partner is lowered by ``default_dtype``: weakint becomes int32
  when its value range ``[vmin, vmax]`` fits int32, else int64; weakfloat becomes
  ``dtypes.default_float`` (float32 unless DEFAULT_FLOAT says otherwise).
- A concrete CAST over a weak ALU node commits the node's sources at
  ``least_upper_dtype(cast dtype, default_dtype(node))`` -- a floor, never a narrowing
  (``cast_weak_srcs``).
- When: lowering happens in index lowering and in the decomps (``pm_lower_index_dtype``), after
  rangeify and before rendering; no weak dtype may reach a program (``spec_program`` rejects it).

The reference evaluates weakint exactly (int64; a lane leaving int64 is reported as
undefined) and weakfloat in float64, so "simplify, then lower" and "lower, then run" can be
compared against mathematics."""
from __future__ import annotations
from tinygrad.dtype import DType, dtypes

def lowered_dtype(weak:DType, vmin:int|float, vmax:int|float) -> DType:
  """The concrete dtype tinygrad lowers a weak node to, from its value range (uop/weak.py default_dtype)."""
  if weak == dtypes.weakfloat: return dtypes.default_float
  if weak == dtypes.weakint: return dtypes.int64 if (vmin < dtypes.int32.min or vmax > dtypes.int32.max) else dtypes.int32
  return weak

