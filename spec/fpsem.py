"""Float ALU semantics in z3's IEEE-754 theory: each op written once, as ``spec.alu`` evaluates it with numpy.

A float dtype is an ``FPSort`` (float16 = (5, 11), bfloat16 = (8, 8), float32 = (8, 24), float64 = (11, 53)); every value
is covered: NaN, +-0, +-inf, subnormals; rounding is to nearest, ties to even. Where ``spec.alu`` computes an op at a
wider format and rounds once (bfloat16 computes in float32, then rounds to bfloat16), the definition here does the same
two roundings, so z3 and numpy state one semantics. ``spec.optable`` attaches each definition to its op's entry
(``OpSpec.fp``), beside the integer one (``OpSpec.z3``).

A definition takes ``(M, u, v)`` -- the model (it brings ``rm``, the rounding mode, ``sort(dtype)`` and ``ctx``), the UOp,
its operands' z3 values -- and returns ``(value, conditions)``: the conditions under which the op is defined (the spec
leaves MAX with a NaN operand open: tinygrad lowers it to a compare-and-select whose NaN result depends on the order).
Transcendental ops (EXP2, LOG2, SIN, POW) have no exact IEEE definition (the spec gives them a tolerance): none here."""
from __future__ import annotations
from typing import Callable
import z3
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes

FLOAT_SORTS: dict[DType, tuple[int, int]] = {dtypes.float16: (5, 11), dtypes.bfloat16: (8, 8), dtypes.float32: (8, 24),
                                             dtypes.float64: (11, 53)}

def compute_dtype(dt:DType) -> DType:
  """the format ``spec.alu`` computes ``dt``'s arithmetic in before rounding to ``dt`` (bfloat16: float32)"""
  return dtypes.float32 if dt == dtypes.bfloat16 else dt

def _wide(M, u:UOp, vals):
  """the operands at the compute format, and the function that rounds a result back to the node's dtype"""
  dt, wide = u.dtype, compute_dtype(u.dtype)
  if wide == dt: return vals, lambda r: r
  ws = M.sort(wide)
  return [z3.fpToFP(M.rm, x, ws, ctx=M.ctx) for x in vals], lambda r: z3.fpToFP(M.rm, r, M.sort(dt), ctx=M.ctx)

def _binary(f):
  def sem(M, u:UOp, v):
    (a, b), back = _wide(M, u, v)
    return back(f(M.rm, a, b, ctx=M.ctx)), ()
  return sem

def neg(M, u:UOp, v): return z3.fpNeg(v[0], ctx=M.ctx), ()

def sqrt(M, u:UOp, v):
  (a,), back = _wide(M, u, v)
  return back(z3.fpSqrt(M.rm, a, ctx=M.ctx)), ()

def reciprocal(M, u:UOp, v):
  (a,), back = _wide(M, u, v)
  return back(z3.fpDiv(M.rm, z3.FPVal(1.0, None, a.sort(), ctx=M.ctx), a, ctx=M.ctx)), ()

def trunc(M, u:UOp, v): return z3.fpRoundToIntegral(z3.RTZ(ctx=M.ctx), v[0], ctx=M.ctx), ()

def maximum(M, u:UOp, v):
  """tinygrad's lowering, ``a < b ? b : a`` (a tie of +0 and -0 gives the first operand); open where an operand is NaN
  (``spec.alu``)"""
  a, b = v
  return z3.If(z3.fpLT(a, b, ctx=M.ctx), b, a), (z3.Not(z3.fpIsNaN(a, ctx=M.ctx)), z3.Not(z3.fpIsNaN(b, ctx=M.ctx)))

def mulacc(M, u:UOp, v):
  """a*b+c: a MUL then an ADD, each rounded at the compute format (spec.alu computes ``a*b+c`` in numpy: no fused
  multiply-add), then rounded once to the dtype"""
  (a, b, c), back = _wide(M, u, v)
  return back(z3.fpAdd(M.rm, z3.fpMul(M.rm, a, b, ctx=M.ctx), c, ctx=M.ctx)), ()

# op -> its one definition; spec.optable attaches each to the op's entry (OpSpec.fp)
FLOAT_SEMANTICS: dict[Ops, Callable] = {
  Ops.ADD: _binary(z3.fpAdd), Ops.SUB: _binary(z3.fpSub), Ops.MUL: _binary(z3.fpMul), Ops.FDIV: _binary(z3.fpDiv),
  Ops.NEG: neg, Ops.SQRT: sqrt, Ops.RECIPROCAL: reciprocal, Ops.TRUNC: trunc, Ops.MAX: maximum, Ops.MULACC: mulacc,
}
