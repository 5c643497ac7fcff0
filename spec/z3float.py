"""Floats in z3's IEEE-754 theory: a float UOp graph's (value, defined) as FP terms, and refinement proved for all values.

The third encoding next to ``spec.z3model``'s Int and BitVec: a float dtype is an ``FPSort`` (``spec.fpsem.FLOAT_SORTS``),
so every value is covered -- NaN, +-0, +-inf, subnormals -- and each ALU op is its op-table definition (``OpSpec.fp``,
written once in ``spec.fpsem``). Comparisons, WHERE and casts are sort-generic and translated here, casts as
``spec.alu.cast`` does them (to bfloat16 through float32; float to int truncating, undefined for NaN and out of range).
Equality is SMT-LIB ``=``: every NaN is one datum, and +0 and -0 are two. ``prove`` answers proved, refuted (with the
model's assignment, floats by their bit patterns) or unknown (z3's reason) -- a resource limit is never a pass."""
from __future__ import annotations
import struct
import numpy as np
import z3
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes, Invalid
from uopcheck.spec.fpsem import FLOAT_SORTS
from uopcheck.spec.optable import OP_TABLE
from uopcheck.spec.z3model import check

CAST_INTS = [dtypes.int32, dtypes.uint8, dtypes.int64]   # int dtypes a cast in a float instance may come from or go to

def float_bits(v:float, dt:DType) -> int:
  """the IEEE bit pattern of ``v`` (a value of ``dt``) in ``dt``'s format"""
  from uopcheck.spec.numpy_dtypes import bf16_to_bits
  if dt == dtypes.bfloat16: return int(bf16_to_bits(np.array([v], np.float32))[0])
  fmt = {dtypes.float16: "<e", dtypes.float32: "<f", dtypes.float64: "<d"}[dt]
  return int.from_bytes(struct.pack(fmt, v), "little")

def from_bits(bits:int, dt:DType) -> float:
  if dt == dtypes.bfloat16: return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
  fmt, size = {dtypes.float16: ("<e", 2), dtypes.float32: ("<f", 4), dtypes.float64: ("<d", 8)}[dt]
  return struct.unpack(fmt, bits.to_bytes(size, "little"))[0]

class Unsupported(Exception):
  """The expression uses something the IEEE model does not define (a transcendental op, a bitcast, int arithmetic)."""

class FPModel:
  """(value, defined) of a float instance in z3: floats as FP terms, bools as Bools, ints (cast operands) as BitVecs."""
  def __init__(self, ctx:z3.Context, symbolic:dict[str, UOp]|None=None):
    self.ctx, self.rm = ctx, z3.RNE(ctx=ctx)
    self.memo: dict[UOp, tuple] = {}
    self.vars: dict[str, tuple[object, DType]] = {}
    self.bounds: list = []
    self.symbolic = {id(u): name for name, u in (symbolic or {}).items()}   # free constants proved for all values

  def sort(self, dt:DType): return z3.FPSort(*FLOAT_SORTS[dt], ctx=self.ctx)

  def fconst(self, v:float, dt:DType): return z3.fpBVToFP(z3.BitVecVal(float_bits(v, dt), dt.bitsize, self.ctx), self.sort(dt), ctx=self.ctx)

  def translate(self, u:UOp):
    for x in u.toposort():
      if x not in self.memo: self.memo[x] = self._node(x)
    return self.memo[u]

  def _leaf(self, name:str, dt:DType):
    if name not in self.vars:
      if dtypes.is_float(dt): v = z3.FP(name, self.sort(dt))
      elif dt == dtypes.bool: v = z3.Bool(name, self.ctx)
      else: v = z3.BitVec(name, dt.bitsize, self.ctx)
      self.vars[name] = (v, dt)
    return self.vars[name][0]

  def _node(self, u:UOp):
    T = z3.BoolVal(True, self.ctx)
    op, dt = u.op, u.dtype
    if op is Ops.STACK and dt == dtypes.void: return T, T   # a variable's shape argument
    if dt not in FLOAT_SORTS and dt not in (dtypes.bool, dtypes.weakfloat) and dt not in CAST_INTS: raise Unsupported(f"{dt} in a float instance")
    if op is Ops.CONST:
      if id(u) in self.symbolic: return self._leaf(self.symbolic[id(u)], dt), T
      if u.arg is Invalid: return self._dummy(dt), z3.BoolVal(False, self.ctx)   # a lane with no value: undefined
      if dt == dtypes.weakfloat: return None, T   # a weak constant: committed to its user's dtype (_operand)
      if dtypes.is_float(dt): return self.fconst(float(u.arg), dt), T
      if dt == dtypes.bool: return z3.BoolVal(bool(u.arg), self.ctx), T
      return z3.BitVecVal(int(u.arg) % (1 << dt.bitsize), dt.bitsize, self.ctx), T
    if op is Ops.PARAM: return self._leaf(u.arg.name, dt), T
    at = u.src[1].dtype if op in GroupOp.Comparison and u.src[0].dtype == dtypes.weakfloat else u.src[0].dtype if op in GroupOp.Comparison else dt
    vals, defs = [self._operand(s, at) for s in u.src], [self.memo[s][1] for s in u.src]
    d = z3.And(*defs) if defs else T
    if op is Ops.WHERE: return z3.If(vals[0], vals[1], vals[2]), z3.And(defs[0], z3.If(vals[0], defs[1], defs[2]))
    if op is Ops.CAST: return (vals[0], d) if u.src[0].dtype == dtypes.weakfloat else self._cast(vals[0], u.src[0].dtype, dt, d)
    if op in GroupOp.Comparison: return self._compare(op, vals, at), d
    if dt == dtypes.bool:
      f = {Ops.AND: z3.And, Ops.MUL: z3.And, Ops.OR: z3.Or, Ops.ADD: z3.Or, Ops.MAX: z3.Or, Ops.XOR: z3.Xor}.get(op)
      if f is None: raise Unsupported(f"{op} on bool")
      return f(*vals), d
    if not dtypes.is_float(dt): raise Unsupported(f"{op} on {dt} (int arithmetic in a float instance)")
    if (sem := OP_TABLE[op].fp) is None: raise Unsupported(f"{op.name} has no exact IEEE definition (the spec gives it a tolerance)")
    r, conds = sem(self, u, vals)
    return r, (z3.And(d, *conds) if conds else d)

  def _dummy(self, dt:DType):
    if dtypes.is_float(dt): return self.fconst(0.0, dt)
    if dt == dtypes.bool: return z3.BoolVal(False, self.ctx)
    if dt in CAST_INTS: return z3.BitVecVal(0, dt.bitsize, self.ctx)
    raise Unsupported(f"Invalid at {dt}")

  def _operand(self, s:UOp, dt:DType):
    """a source's value; a weak float constant commits to ``dt`` (rounded to nearest even, as spec.alu.cast does)"""
    if s.dtype != dtypes.weakfloat: return self.memo[s][0]
    if s.op is not Ops.CONST or not dtypes.is_float(dt): raise Unsupported(f"a weakfloat {s.op.name} used at {dt}")
    from uopcheck.spec.numpy_dtypes import round_to
    return self.fconst(float(round_to(np.array(float(s.arg), np.float64), dt)), dt)

  def _compare(self, op:Ops, v, sdt:DType):
    a, b = v
    if dtypes.is_float(sdt):
      c = self.ctx
      return {Ops.CMPLT: lambda x, y: z3.fpLT(x, y, ctx=c), Ops.CMPEQ: lambda x, y: z3.fpEQ(x, y, ctx=c),
              Ops.CMPNE: lambda x, y: z3.Not(z3.fpEQ(x, y, ctx=c))}[op](a, b)
    lt = (lambda x, y: z3.And(z3.Not(x), y)) if sdt == dtypes.bool else z3.ULT if sdt in dtypes.uints else (lambda x, y: x < y)
    return {Ops.CMPLT: lt, Ops.CMPEQ: lambda x, y: x == y, Ops.CMPNE: lambda x, y: x != y}[op](a, b)

  def _cast(self, x, src:DType, dst:DType, d):
    """``spec.alu.cast``: to float rounds to nearest even (to bfloat16 from anything but float32 through float32, as the
    spec rounds); float to int truncates, and is undefined for NaN and out of range; anything to bool is ``!= 0``"""
    if src == dst: return x, d
    if dst == dtypes.bool:
      if dtypes.is_float(src): return z3.Not(z3.fpIsZero(x, ctx=self.ctx)), d
      return x != z3.BitVecVal(0, src.bitsize, self.ctx), d
    if dtypes.is_float(dst):
      via = dtypes.float32 if dst == dtypes.bfloat16 and src not in (dtypes.float32, dtypes.float16) else dst
      if src == dtypes.bool: r = z3.If(x, self.fconst(1.0, via), self.fconst(0.0, via))
      elif dtypes.is_float(src): r = z3.fpToFP(self.rm, x, self.sort(via), ctx=self.ctx)
      else: r = (z3.fpSignedToFP if src in dtypes.sints else z3.fpUnsignedToFP)(self.rm, x, self.sort(via), ctx=self.ctx)
      return (r if via == dst else z3.fpToFP(self.rm, r, self.sort(dst), ctx=self.ctx)), d
    if dtypes.is_float(src):
      rtz = z3.RTZ(ctx=self.ctx)
      c = self.ctx
      t = z3.fpRoundToIntegral(rtz, x, ctx=c)
      lo, hi = (z3.fpToFP(self.rm, z3.RealVal(v, c), self.sort(src), ctx=c) for v in (dst.min, dst.max + 1))
      ok = z3.And(z3.Not(z3.fpIsNaN(x, ctx=c)), z3.fpGEQ(t, lo, ctx=c), z3.fpLT(t, hi, ctx=c))
      r = (z3.fpToSBV if dst in dtypes.sints else z3.fpToUBV)(rtz, x, z3.BitVecSort(dst.bitsize, c), ctx=c)
      return r, z3.And(d, ok)
    if dst in CAST_INTS and src == dtypes.bool: return z3.If(x, z3.BitVecVal(1, dst.bitsize, self.ctx), z3.BitVecVal(0, dst.bitsize, self.ctx)), d
    if dst in CAST_INTS and src in CAST_INTS:   # int -> int wraps (two's complement), as spec.alu.cast
      if dst.bitsize < src.bitsize: return z3.Extract(dst.bitsize - 1, 0, x), d
      return (z3.SignExt if src in dtypes.sints else z3.ZeroExt)(dst.bitsize - src.bitsize, x), d
    raise Unsupported(f"cast {src} -> {dst}")

def _same(a, b, dt:DType):
  return a == b   # SMT-LIB equality: every NaN is one datum, +0 and -0 differ (floats); plain equality (bool, ints)

def prove(before:UOp, after:UOp, rlimit:int, symbolic:dict[str, UOp]|None=None, assume=None) -> tuple[str, object]:
  """("proved", None) / ("refuted", the model's assignment) / ("unknown", why) for before -> after at every value"""
  ctx = z3.Context()
  m = FPModel(ctx, symbolic)
  s = z3.Solver(ctx=ctx)
  s.set("rlimit", rlimit)
  try:
    bv, bd = m.translate(before)
    av, ad = m.translate(after)
    s.add(*m.bounds, bd, z3.Not(z3.And(ad, _same(bv, av, before.dtype))))
    if assume is not None: s.add(assume(m))
  except (Unsupported, z3.Z3Exception) as e: return "unknown", f"no IEEE model: {e}"
  r = check(s)
  if r == z3.unsat: return "proved", None
  if r == z3.unknown: return "unknown", f"z3: {s.reason_unknown()}"
  mdl = s.model()
  return "refuted", {name: _model_value(mdl, v, dt) for name, (v, dt) in m.vars.items()}

def _model_value(mdl, v, dt:DType):
  """a z3 model's value of one leaf, as a plain Python value of its dtype (floats by their bit pattern)"""
  x = mdl.eval(v, model_completion=True)
  if dt == dtypes.bool: return bool(z3.is_true(x))
  if dtypes.is_float(dt):
    nan = z3.is_true(mdl.eval(z3.fpIsNaN(v, ctx=v.ctx), model_completion=True))
    bits = None if nan else mdl.eval(z3.fpToIEEEBV(v, ctx=v.ctx), model_completion=True).as_long()
    return float("nan") if bits is None else from_bits(bits, dt)
  n = x.as_long()
  return n - (1 << dt.bitsize) if dt in dtypes.sints and n >= 1 << (dt.bitsize - 1) else n

# the IEEE classes of float input, for z3 (``np_classes`` is the same for numpy)
CLASSES = {"nan": z3.fpIsNaN, "inf": z3.fpIsInf, "zero": z3.fpIsZero, "subnormal": z3.fpIsSubnormal, "normal": z3.fpIsNormal}

