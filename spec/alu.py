"""Value semantics of every ALU op, CAST and BITCAST, as pure functions over numpy arrays.

Each function takes operand arrays already held at the op's compute dtype (see
``numpy_dtypes``) and returns ``Lanes``: the value, the lanes whose value the spec leaves
undefined (division by zero, out-of-range float->int casts, shift counts out of range, MAX with
a NaN operand), and the lanes that are undefined behaviour only under the CPU backend's reading
of signed overflow (``ints.OverflowReading.UNDEFINED``)."""
from __future__ import annotations
from dataclasses import dataclass
from typing import Callable
import numpy as np
from tinygrad.dtype import DType, dtypes
from tinygrad.uop import Ops
from uopcheck.spec import ints
from uopcheck.spec.numpy_dtypes import np_dtype, round_to, to_bytes, from_bytes
from uopcheck.spec.errors import SpecError

@dataclass
class Lanes:
  value: np.ndarray
  undefined: np.ndarray
  ub_overflow: np.ndarray

  @staticmethod
  def ok(value:np.ndarray) -> "Lanes":
    z = np.zeros(np.shape(value), dtype=bool)
    return Lanes(np.asarray(value), z, z.copy())

def _is_intlike(dt:DType) -> bool: return dtypes.is_int(dt) or dt == dtypes.bool

def _float_compute(dt:DType, fxn, *xs:np.ndarray) -> np.ndarray:
  # bfloat16/fp8 compute in float32 and round once; float16/32/64 compute natively; weakfloat in float64
  with np.errstate(all="ignore"):
    if dt == dtypes.bfloat16 or dt in dtypes.fp8s: return round_to(fxn(*[np.asarray(x, np.float32) for x in xs]).astype(np.float32), dt)
    return np.asarray(fxn(*xs)).astype(np_dtype(dt))

def _undef(shape) -> np.ndarray: return np.zeros(shape, dtype=bool)

def threefry2x32(x:np.ndarray, key:np.ndarray) -> np.ndarray:
  """Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
  The uint64 counter and key are each split into (lo, hi) uint32 words; the result packs (hi<<32)|lo."""
  m32 = np.uint64(0xFFFFFFFF)
  x = x.astype(np.uint64)
  key = key.astype(np.uint64)
  x0, x1 = (x & m32).astype(np.uint32), (x >> np.uint64(32)).astype(np.uint32)
  k0, k1 = (key & m32).astype(np.uint32), (key >> np.uint64(32)).astype(np.uint32)
  k2 = k0 ^ k1 ^ np.uint32(0x1BD11BDA)
  ks = [k0, k1, k2]
  rot = [[13, 15, 26, 6], [17, 29, 16, 24]]
  with np.errstate(over="ignore"):
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
      for r in rot[i % 2]:
        x0 = x0 + x1
        x1 = ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))) ^ x0
      x0 = x0 + ks[(i + 1) % 3]
      x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
  return (x1.astype(np.uint64) << np.uint64(32)) | x0.astype(np.uint64)

def eval_alu(op:Ops, dt:DType, srcs:list[np.ndarray], src_dtype:DType) -> Lanes:
  """Evaluate ALU ``op`` whose result dtype is ``dt`` by its op-table entry's evaluator (``spec.optable``); ``src_dtype``
  is the dtype the operands are held at (equal to ``dt`` except for comparisons, and WHERE's condition)."""
  from uopcheck.spec.optable import op_spec   # the table holds the evaluators defined below
  shape = np.broadcast_shapes(*[np.shape(s) for s in srcs])
  srcs = [np.broadcast_to(s, shape) for s in srcs]
  if (f := op_spec(op).evaluate) is None: raise SpecError(f"no value semantics for {op}", op, dt, shape)
  return f(op, dt, srcs)

# ** the evaluators the op table names: (op, result dtype, operands broadcast to one shape) -> Lanes **

def eval_compare(op:Ops, dt:DType, srcs:list[np.ndarray]) -> Lanes:
  a, b = srcs
  with np.errstate(invalid="ignore"):
    v = {Ops.CMPLT: np.less, Ops.CMPNE: np.not_equal, Ops.CMPEQ: np.equal}[op](a, b)
  return Lanes.ok(v.astype(np.bool_))

def eval_where(op:Ops, dt:DType, srcs:list[np.ndarray]) -> Lanes:
  c, x, y = srcs
  return Lanes.ok(np.where(c.astype(bool), x, y).astype(x.dtype))

def eval_numeric(op:Ops, dt:DType, srcs:list[np.ndarray]) -> Lanes:
  """an arithmetic, bitwise or transcendental op: IEEE floats (spec.floats) or wrapping ints (spec.ints) by the dtype"""
  if dtypes.is_float(dt): return _eval_float(op, dt, srcs)
  if _is_intlike(dt): return _eval_int(op, dt, srcs)
  raise SpecError(f"no value semantics for {op} at dtype {dt}", op, dt, np.shape(srcs[0]))

_FLOAT_UNARY = {Ops.EXP2: np.exp2, Ops.LOG2: np.log2, Ops.SIN: np.sin, Ops.SQRT: np.sqrt, Ops.NEG: np.negative,
                Ops.TRUNC: np.trunc, Ops.RECIPROCAL: lambda x: np.divide(np.ones_like(x), x)}
_FLOAT_BINARY = {Ops.ADD: np.add, Ops.SUB: np.subtract, Ops.MUL: np.multiply, Ops.FDIV: np.divide, Ops.POW: np.power}

def _eval_float(op:Ops, dt:DType, srcs:list[np.ndarray]) -> Lanes:
  shape = srcs[0].shape
  if op in _FLOAT_UNARY: return Lanes.ok(_float_compute(dt, _FLOAT_UNARY[op], srcs[0]))
  if op in _FLOAT_BINARY: return Lanes.ok(_float_compute(dt, _FLOAT_BINARY[op], *srcs))
  if op is Ops.MAX:
    # tinygrad defines MAX by its lowering, ``a < b ? b : a`` (codegen/decomp/op.py; the C and LLVM renderers have no MAX):
    # a tie of +0 and -0 gives the first operand (numpy's maximum would give the second). Where an operand is NaN the
    # result depends on operand order (and PTX/NIR render a native max): the spec leaves those lanes open.
    a, b = srcs
    with np.errstate(invalid="ignore"): v = _float_compute(dt, lambda x, y: np.where(x < y, y, x), a, b)
    return Lanes(v, np.isnan(a) | np.isnan(b), _undef(shape))
  if op is Ops.MULACC: return Lanes.ok(_float_compute(dt, lambda a, b, c: a*b+c, *srcs))
  raise SpecError(f"{op} is not defined on floats", op, dt, shape)

def _eval_int(op:Ops, dt:DType, srcs:list[np.ndarray]) -> Lanes:
  shape = srcs[0].shape
  if dt == dtypes.bool:
    a = srcs[0]
    if op in (Ops.AND, Ops.OR, Ops.XOR, Ops.MAX, Ops.MUL, Ops.ADD):
      f = {Ops.AND: np.logical_and, Ops.MUL: np.logical_and, Ops.OR: np.logical_or, Ops.ADD: np.logical_or, Ops.MAX: np.logical_or,
           Ops.XOR: np.logical_xor}[op]
      return Lanes.ok(f(a, srcs[1]).astype(np.bool_))
    if op is Ops.NEG: return Lanes.ok(a.copy())
    raise SpecError(f"{op} is not defined on bool", op, dt, shape)
  if op in (Ops.ADD, Ops.SUB, Ops.MUL):
    name = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul"}[op]
    v, ovf = ints.arith(name, srcs[0], srcs[1], dt)
    undef = ovf if dt == dtypes.weakint else _undef(shape)  # a weakint that leaves int64 can't be held
    return Lanes(v, undef, ints.ub_overflow(name, srcs[0], srcs[1], dt, ovf))
  if op is Ops.NEG:
    v, ovf = ints.arith("sub", np.zeros_like(srcs[0]), srcs[0], dt)
    return Lanes(v, _undef(shape), ints.ub_overflow("sub", srcs[0], srcs[0], dt, ovf))
  if op is Ops.MULACC:
    m = _eval_int(Ops.MUL, dt, srcs[:2])
    s = _eval_int(Ops.ADD, dt, [m.value, srcs[2]])
    return Lanes(s.value, m.undefined | s.undefined, m.ub_overflow | s.ub_overflow)
  if op in (Ops.CDIV, Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD):
    f = {Ops.CDIV: ints.cdiv, Ops.CMOD: ints.cmod, Ops.FLOORDIV: ints.floordiv, Ops.FLOORMOD: ints.floormod}[op]
    v, undef, ovf = f(srcs[0], srcs[1], dt)
    return Lanes(v, undef, ovf & (dt in ints.C_UB_SIGNED))
  if op in (Ops.SHL, Ops.SHR):
    v, undef, ovf = ints.shift("shl" if op is Ops.SHL else "shr", srcs[0], srcs[1], dt)
    return Lanes(v, undef, ovf)
  if op in (Ops.AND, Ops.OR, Ops.XOR):
    bit: Callable = {Ops.AND: np.bitwise_and, Ops.OR: np.bitwise_or, Ops.XOR: np.bitwise_xor}[op]
    return Lanes.ok(bit(srcs[0], srcs[1]).astype(srcs[0].dtype))
  if op is Ops.MAX: return Lanes.ok(np.maximum(srcs[0], srcs[1]))
  if op is Ops.THREEFRY:
    if dt != dtypes.uint64: raise SpecError("THREEFRY is defined on uint64 only", op, dt, shape)
    return Lanes.ok(threefry2x32(srcs[0], srcs[1]))
  raise SpecError(f"{op} is not defined on ints", op, dt, shape)

def cast(x:np.ndarray, src:DType, dst:DType) -> Lanes:
  """CAST: float->int truncates toward zero, and a value outside the target's range (or NaN) is undefined;
  int->int wraps; int->float and float->float round to nearest even; anything->bool is ``!= 0``."""
  shape = np.shape(x)
  undef = _undef(shape)
  if dst == dtypes.bool: return Lanes.ok(np.asarray(x != 0, dtype=np.bool_))
  if dtypes.is_float(dst): return Lanes.ok(round_to(np.asarray(x, dtype=np.float64) if src == dtypes.weakint else x, dst))
  if src == dtypes.bool: return Lanes.ok(x.astype(np_dtype(dst)))
  if dtypes.is_float(src):
    xf = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"): t = np.trunc(xf)
    lo, hi = (-2**63, 2**63) if dst == dtypes.weakint else (dst.min, dst.max + 1)
    undef = ~((t >= lo) & (t < hi))  # NaN fails both
    safe = np.where(undef, 0, t)
    if dst in (dtypes.uint64,): v = np.array([int(s) for s in safe.ravel()], dtype=np.uint64).reshape(shape)
    else: v = safe.astype(np.int64)
    return Lanes(ints.wrap(v, dst), undef, _undef(shape))
  # int -> int: two's-complement wrap (conversion to signed is implementation-defined in C; clang wraps)
  v = ints.wrap(x, dst)
  if dst == dtypes.weakint and src == dtypes.uint64: undef = x > np.uint64(2**63 - 1)
  return Lanes(v, undef, _undef(shape))

def bitcast(x:np.ndarray, src:DType, dst:DType) -> np.ndarray:
  """BITCAST: reinterpret the bytes. When the itemsizes differ the last axis scales by src.itemsize/dst.itemsize."""
  shape = np.shape(x)
  raw = to_bytes(x, src)
  if len(shape) == 0:
    if src.itemsize != dst.itemsize: raise SpecError("a 0-d BITCAST must keep the itemsize", Ops.BITCAST, dst, shape)
    return from_bytes(raw, dst, ())
  last = shape[-1] * src.itemsize
  if last % dst.itemsize: raise SpecError("BITCAST's last axis does not divide into the new itemsize", Ops.BITCAST, dst, shape)
  return from_bytes(raw, dst, shape[:-1] + (last // dst.itemsize,))
