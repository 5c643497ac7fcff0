"""Integer ALU semantics, each op written once against an integer domain (no z3 here: a domain brings the solver's terms).

``spec.z3model`` has three domains: weakint as an exact ``Int``; a sized int as its exact ``Int``, wrapping by modulo
(``sized_as_int``); a sized int -- or weakint under ``weak_bits`` -- as a ``BitVec``. Each op below is one definition all
three share, in the manner of tinygrad's own ``z3_alu = python_alu | overrides``: the domain supplies the primitives
that really differ between sorts (what overflow means, C's truncating division, bitwise ops and shifts), and may
*override* a definition with an equivalent one it decides faster -- the Int domains floor-divide with z3's Euclidean
``/``. ``conformance/test_oracle_agreement.py`` proves every override equal to the definition here.

A definition takes ``(D, u, v)`` -- the domain, the UOp, its operands' values (weak operands already committed to
``u.dtype``) -- and returns ``(value, conditions)``: the tuple of conditions under which the op itself is defined
(division by zero, signed overflow read as UB, a shift count out of range); the model adds the operands' own.

A domain provides: ``arith(u, op, a, b)`` for ADD/SUB/MUL; ``trunc_divmod(u, a, b)`` -> (quotient, remainder,
conditions); ``bitwise(u, a, b)``; ``shift(u, a, b)``; ``lt(a, b, dtype)``; ``ite(c, x, y)``; ``and_(*c)``;
``const(value, dtype)``; ``overrides`` (op -> definition)."""
from __future__ import annotations
from typing import Callable
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes

def arith(D, u:UOp, v): return D.arith(u, u.op, v[0], v[1])

def neg(D, u:UOp, v): return D.arith(u, Ops.SUB, D.const(0, u.dtype), v[0])   # 0 - a, with SUB's overflow rule

def maximum(D, u:UOp, v): return D.ite(D.lt(v[0], v[1], u.dtype), v[1], v[0]), ()

def mulacc(D, u:UOp, v):
  """a*b+c with each step's own rules (spec.alu): a MUL, then an ADD, at the node's dtype"""
  m, c1 = D.arith(UOp(Ops.MUL, u.dtype, u.src[:2]), Ops.MUL, v[0], v[1])
  r, c2 = D.arith(UOp(Ops.ADD, u.dtype, (u.src[0], u.src[2])), Ops.ADD, m, v[2])
  return r, (*c1, *c2)

def trunc_div_mod(D, u:UOp, v):
  """CDIV / CMOD: C's truncating quotient and its remainder"""
  q, r, conds = D.trunc_divmod(u, v[0], v[1])
  return (q if u.op is Ops.CDIV else r), conds

def floor_div_mod(D, u:UOp, v):
  """FLOORDIV / FLOORMOD: the truncating quotient, one less where the remainder is non-zero and its sign differs from the
  divisor's (the remainder then moves by the divisor)"""
  q, r, conds = D.trunc_divmod(u, v[0], v[1])
  dt, zero = u.dtype, D.const(0, u.dtype)
  if dt in dtypes.uints: return (q if u.op is Ops.FLOORDIV else r), conds   # no negative operand: flooring is truncating
  adjust = D.and_(r != zero, D.lt(r, zero, dt) != D.lt(v[1], zero, dt))
  return (D.ite(adjust, q - D.const(1, dt), q) if u.op is Ops.FLOORDIV else D.ite(adjust, r + v[1], r)), conds

def bitwise(D, u:UOp, v): return D.bitwise(u, v[0], v[1])

def shift(D, u:UOp, v): return D.shift(u, v[0], v[1] if len(v) > 1 else None)

# op -> its one definition; spec.optable attaches each to the op's entry (OpSpec.z3)
INT_SEMANTICS: dict[Ops, Callable] = {
  Ops.ADD: arith, Ops.SUB: arith, Ops.MUL: arith, Ops.NEG: neg, Ops.MAX: maximum, Ops.MULACC: mulacc,
  Ops.CDIV: trunc_div_mod, Ops.CMOD: trunc_div_mod, Ops.FLOORDIV: floor_div_mod, Ops.FLOORMOD: floor_div_mod,
  Ops.AND: bitwise, Ops.OR: bitwise, Ops.XOR: bitwise, Ops.SHL: shift, Ops.SHR: shift,
}
