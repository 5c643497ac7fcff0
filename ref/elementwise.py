"""Per-node evaluation shared by the tensor and kernel interpreters: ALU ops with weak-dtype commits, CAST,
BITCAST and reductions, all on ``Lanes`` (values plus undefined / UB-on-CPU masks), all by ``uopcheck.spec``."""
from __future__ import annotations
import numpy as np
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes, least_upper_dtype
from uopcheck.spec.alu import Lanes, eval_alu, cast, bitcast
from uopcheck.spec.numpy_dtypes import np_dtype, round_to, order_dependent_sum, finite_abs, sum_may_overflow
from uopcheck.spec import ints

def lanes_or(first:np.ndarray, *rest:np.ndarray) -> np.ndarray:
  out = np.array(first, dtype=bool, copy=True)
  for r in rest: out = out | r
  return out

def commit(x:Lanes, src:DType, dst:DType) -> Lanes:
  """A value of dtype ``src`` taken at ``dst`` (a weak operand committing, or a CAST): spec.alu.cast, masks kept."""
  if src == dst: return x
  c = cast(x.value, src, dst)
  return Lanes(c.value, x.undefined | c.undefined, x.ub_overflow | c.ub_overflow)

def alu_node(u:UOp, srcs:list[Lanes]) -> Lanes:
  """Evaluate ALU node ``u`` on its operands' Lanes: operands commit to the op's dtype (comparisons: to their
  least upper dtype; WHERE's condition stays bool; a shift's count keeps its own dtype)."""
  op = u.op
  if op in GroupOp.Comparison:
    cdt = least_upper_dtype(u.src[0].dtype, u.src[1].dtype)
    ops = [commit(x, s.dtype, cdt) for x, s in zip(srcs, u.src)]
    res = eval_alu(op, u.dtype, [o.value for o in ops], cdt)
    shape = res.value.shape
    return Lanes(res.value, lanes_or(res.undefined, *[np.broadcast_to(o.undefined, shape) for o in ops]),
                 lanes_or(res.ub_overflow, *[np.broadcast_to(o.ub_overflow, shape) for o in ops]))
  if op is Ops.WHERE:
    c = srcs[0]
    a, b = (commit(x, s.dtype, u.dtype) for x, s in zip(srcs[1:], u.src[1:]))
    cv = np.asarray(c.value, bool)
    shape = np.broadcast_shapes(cv.shape, a.value.shape, b.value.shape)
    def sel(f):
      return np.where(cv, getattr(a, f), getattr(b, f))
    return Lanes(sel("value").astype(a.value.dtype), sel("undefined") | np.broadcast_to(c.undefined, shape),
                 sel("ub_overflow") | np.broadcast_to(c.ub_overflow, shape))
  if op in (Ops.SHL, Ops.SHR): ops = [commit(srcs[0], u.src[0].dtype, u.dtype), srcs[1]]
  else: ops = [commit(x, s.dtype, u.dtype) for x, s in zip(srcs, u.src)]
  res = eval_alu(op, u.dtype, [o.value for o in ops], u.dtype)
  shape = res.value.shape
  return Lanes(res.value, lanes_or(res.undefined, *[np.broadcast_to(o.undefined, shape) for o in ops]),
               lanes_or(res.ub_overflow, *[np.broadcast_to(o.ub_overflow, shape) for o in ops]))

def bitcast_node(u:UOp, x:Lanes) -> Lanes:
  v = bitcast(x.value, u.src[0].dtype, u.dtype)
  if v.shape == x.value.shape: return Lanes(v, x.undefined.copy(), x.ub_overflow.copy())
  # itemsize changed: a lane is undefined if any source byte of it was
  r = u.src[0].dtype.itemsize / u.dtype.itemsize
  def move(m):
    if r > 1: return np.repeat(m, int(r), axis=-1)
    return m.reshape(m.shape[:-1] + (v.shape[-1], int(1 / r))).any(-1)
  return Lanes(v, move(x.undefined), move(x.ub_overflow))

def reduce_lanes(x:Lanes, axes:tuple[int, ...], rop:Ops, dt:DType, keepdims:bool=False) -> Lanes:
  """Fold ``x`` over ``axes`` with ADD/MUL/MAX. Floats accumulate in float64 and round once to ``dt``; ints are exact,
  then wrap (an overflowing int32/int64 result is flagged UB-on-CPU); MAX over a NaN is left undefined, and so is a float
  sum whose magnitude can overflow ``dt`` in some accumulation order (``spec.numpy_dtypes.order_dependent_sum``)."""
  v = x.value
  undef, ub = x.undefined.any(axis=axes, keepdims=keepdims), x.ub_overflow.any(axis=axes, keepdims=keepdims)
  out_shape = np.sum(np.zeros(v.shape, np.int8), axis=axes, keepdims=keepdims).shape
  if dt == dtypes.bool:
    out = (v.all(axis=axes, keepdims=keepdims) if rop is Ops.MUL else v.any(axis=axes, keepdims=keepdims)).astype(np.bool_)
  elif dtypes.is_float(dt):
    with np.errstate(all="ignore"):
      f = v.astype(np.float64)
      if rop is Ops.MAX: out = np.max(f, axis=axes, keepdims=keepdims) if f.size else np.full(out_shape, -np.inf)
      else: out = (np.sum if rop is Ops.ADD else np.prod)(f, axis=axes, keepdims=keepdims)
    if rop is Ops.MAX: undef = undef | np.isnan(f).any(axis=axes, keepdims=keepdims)  # NaN under MAX is order-dependent
    if rop is Ops.ADD and f.size:
      a = finite_abs(f)
      if sum_may_overflow(a.max(), f.size // max(1, int(np.prod(out_shape))), dt):
        undef = undef | order_dependent_sum(np.sum(a, axis=axes, keepdims=keepdims), dt)
    out = round_to(out, dt)
  elif rop is Ops.MAX:
    out = np.max(v, axis=axes, keepdims=keepdims) if v.size else np.full(out_shape, dt.min, np_dtype(dt))
  else:
    exact = (np.sum if rop is Ops.ADD else np.prod)(v.astype(object), axis=axes, keepdims=keepdims) if v.size else \
            np.full(out_shape, 0 if rop is Ops.ADD else 1, dtype=object)
    exact = np.asarray(exact, dtype=object)
    ovf = ~np.asarray(ints.in_range(exact, dt), dtype=bool)
    if dt in ints.C_UB_SIGNED: ub = ub | ovf
    if dt == dtypes.weakint: undef = undef | ovf
    mask = (1 << ints.bits(dt)) - 1
    out = ints.wrap(np.array([int(e) & mask for e in exact.ravel()], dtype=np.uint64).reshape(exact.shape), dt)
  return Lanes(np.asarray(out), np.asarray(undef), np.asarray(ub))
