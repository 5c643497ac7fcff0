"""The spec's integer semantics in z3: weakint as unbounded ``Int``, each sized int as a ``BitVec`` of its width.

Translation follows ``spec.ints``: two's-complement wrap for sized ints (signed vs unsigned comparison,
division and shifts), CDIV/CMOD truncating, FLOORDIV/FLOORMOD flooring, variable bounds as constraints.
Undefined behaviour is modelled Alive2-style: every expression carries a *defined* predicate. Division by
zero, a shift count outside [0, bits), and an Invalid index are undefined in both readings; signed overflow
of int32/int64 (and uint16*uint16 promoted to C int) is undefined under ``OverflowReading.UNDEFINED`` (the CPU
backend's C) and wraps under ``WRAP`` (numpy, DEV=PYTHON).

``check_rewrite(before, after)`` proves refinement: wherever ``before`` is defined (within the variables'
bounds), ``after`` is defined too and equal. It answers Proved, Refuted (with an assignment and both values)
or Unknown (with z3's reason) -- a timeout is never reported as a pass."""
from __future__ import annotations
import operator
from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable
import z3
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes, Invalid, AddrSpace
from uopcheck.spec.ints import OverflowReading, C_UB_SIGNED
from uopcheck.spec.optable import OP_TABLE

@runtime_checkable
class SymbolicConst(Protocol):
  """A constant whose value is a z3 term (an Int or a wide bit-vector) rather than a number: the rule verifier's symbolic
  constants (``fuzz.concolic.SymInt``) meet it. The model reads a constant's term through this, never a fuzz/ class."""
  term: z3.ExprRef

def term_of(v) -> z3.ExprRef|None:
  """the z3 term of a symbolic constant, or None for a plain value"""
  return v.term if isinstance(v, SymbolicConst) else None

@dataclass(frozen=True, eq=False)
class _Term:
  """a z3 term standing where a constant goes (``Z3Model.const`` reads ``.term``)"""
  term: object

class Unsupported(Exception):
  """The expression uses something the z3 model does not cover (floats, loads, ...)."""

@dataclass
class Proved:
  def __str__(self): return "proved"

@dataclass
class Refuted:
  assignment: dict[str, int]
  before: object
  after: object
  reason: str
  def __str__(self): return f"refuted ({self.reason}) at {self.assignment}: before={self.before} after={self.after}"

@dataclass
class Unknown:
  why: str
  def __str__(self): return f"unknown: {self.why}"

# bitwise ops on bit-vectors, one definition for every encoding (Int values reach them through their 64-bit or exact bits)
BITWISE = {Ops.AND: operator.and_, Ops.OR: operator.or_, Ops.XOR: operator.xor}

WEAK_SHIFTS = 64   # a weakint shifted by a symbolic count is modelled for counts 0..63 (check_rewrite proves no other occurs)

def _is_bv(dt:DType) -> bool: return dt in dtypes.ints
def _signed(dt:DType) -> bool: return dt in dtypes.sints or dt == dtypes.weakint

@dataclass
class Z3Model:
  reading: OverflowReading = OverflowReading.UNDEFINED
  ctx: z3.Context = field(default_factory=z3.Context)
  memo: dict = field(default_factory=dict)
  variables: dict = field(default_factory=dict)    # name -> (z3 var, dtype)
  bounds: list = field(default_factory=list)       # z3 constraints on the variables
  declared: set = field(default_factory=set)       # (name, dtype, lo, hi) of every declaration seen
  weak_bits: int|None = None  # model weakint as a BitVec this wide (overflow = not representable = undefined) instead of Int
  exact: list = field(default_factory=list)   # where the model's value is exact (a weakint fits weak_bits, a count < WEAK_SHIFTS)
  bits_of: dict = field(default_factory=dict)   # Int term id -> (term, the 64-bit vector it stands for) (_bits64)
  links: list = field(default_factory=list)   # hard constraints tying helper terms to the values they stand for (_bits64)
  sym_bits: int|None = None   # a symbolic constant (fuzz.concolic) is known to fit this many bits, signed (see weak_width)
  widths: dict = field(default_factory=dict)
  sized_as_int: bool = False  # each sized int as an Int in its dtype's range (the exact value; wraps by modulo): z3's
                              # arithmetic decides overflow of products that bit-blasting cannot (see check_rewrite)

  def bits(self, dt:DType) -> int: return self.weak_bits if dt == dtypes.weakint and self.weak_bits else dt.bitsize
  def is_bv(self, dt:DType) -> bool:
    return (_is_bv(dt) and not self.sized_as_int) or (dt == dtypes.weakint and self.weak_bits is not None)
  def is_int(self, dt:DType) -> bool: return (dt == dtypes.weakint and not self.weak_bits) or (self.sized_as_int and _is_bv(dt))

  def weak_width(self, u:UOp) -> int:
    """An upper bound on the signed bits a weakint node's value needs, read off its sources' dtypes, constants and
    bounds (``sym_bits`` for a symbolic one); a product of two 65-bit values needs 130. Under ``weak_bits`` an operation
    whose width bound fits needs no overflow check -- a 130-bit multiplier's overflow is what bit-blasting cannot decide."""
    if u in self.widths: return self.widths[u]
    BIG = 1 << 20
    def of_int(v) -> int:
      if term_of(v) is not None: return self.sym_bits or BIG
      return max(int(v).bit_length(), (-int(v) - 1).bit_length()) + 1 if isinstance(v, int) else BIG
    ws = [self.weak_width(x) if x.dtype == dtypes.weakint else x.dtype.bitsize + (0 if _signed(x.dtype) else 1) if _is_bv(x.dtype) else
          2 for x in u.src]
    op = u.op
    if op is Ops.CONST: r = of_int(u.arg) if u.arg is not Invalid else 1
    elif op in (Ops.BUFFER, Ops.PARAM) and getattr(u.arg, "vmin_vmax", None) is not None: r = max(of_int(x) for x in u.arg.vmin_vmax)
    elif op is Ops.CAST: r = ws[0]
    elif op in (Ops.ADD, Ops.SUB, Ops.NEG, Ops.CDIV, Ops.FLOORDIV, Ops.CMOD, Ops.FLOORMOD): r = max(ws) + 1
    elif op is Ops.MUL: r = ws[0] + ws[1]
    elif op in (Ops.MAX, Ops.AND, Ops.OR, Ops.XOR): r = max(ws)
    elif op is Ops.WHERE: r = max(ws[1:])
    elif op is Ops.SHR: r = ws[0]
    else: r = BIG
    self.widths[u] = r
    return r

  def wrap(self, x, dt:DType):
    """an Int (exact value) into ``dt``'s range by two's complement: canonical signed or unsigned"""
    if dt == dtypes.weakint: return x
    n = 1 << dt.bitsize
    return x % n if not _signed(dt) else (x + n // 2) % n - n // 2

  # ** sorts and constants **
  def const(self, v, dt:DType):
    if (t := term_of(v)) is not None:   # a symbolic constant (SymbolicConst): its z3 term, Int or wide BV
      if dt == dtypes.bool: return t != 0
      if self.is_bv(dt):
        if dt == dtypes.weakint and (z3.is_int(t) or t.size() > self.bits(dt)):   # a weak symbol must fit weak_bits (exactness)
          lim = 1 << (self.bits(dt) - 1)
          self.exact.append(z3.And(t >= -lim, t < lim) if z3.is_int(t) else z3.SignExt(t.size() - self.bits(dt), z3.Extract(self.bits(dt) - 1, 0,
                                                                                                                            t)) == t)
        return z3.Extract(self.bits(dt) - 1, 0, t) if z3.is_bv(t) else z3.Int2BV(t, self.bits(dt))
      if dt == dtypes.weakint: return z3.BV2Int(t, is_signed=True) if z3.is_bv(t) else t
      if self.is_int(dt): return self.wrap(z3.BV2Int(t, is_signed=True) if z3.is_bv(t) else t, dt)
      raise Unsupported(f"symbolic constant of {dt}")
    if dt == dtypes.bool: return z3.BoolVal(bool(v), self.ctx)
    if self.is_bv(dt):
      if dt == dtypes.weakint and not -(1 << (self.bits(dt) - 1)) <= int(v) < 1 << (self.bits(dt) - 1):
        self.exact.append(z3.BoolVal(False, self.ctx))   # a weak constant past weak_bits: the model would wrap it
      return z3.BitVecVal(int(v) % (1 << self.bits(dt)), self.bits(dt), self.ctx)
    if dt == dtypes.weakint: return z3.IntVal(int(v), self.ctx)
    if self.is_int(dt):
      low = int(v) % (1 << dt.bitsize)
      return z3.IntVal(low - ((1 << dt.bitsize) if _signed(dt) and low >= 1 << (dt.bitsize - 1) else 0), self.ctx)
    raise Unsupported(f"no z3 sort for {dt}")

  def var(self, name:str, dt:DType, lo:int|_Term, hi:int|_Term):
    """One name is one runtime value (tinygrad binds variables by name): a name declared again -- with another range,
    or another dtype (weak lowering retypes it) -- is the same value, and every declaration's range applies at once."""
    if name in self.variables and self.variables[name][1] != dt:
      v0, dt0 = self.variables[name]
      key = f"{name}@{dt.name.replace(' ', '_')}"   # the same value seen through another sort
      if key not in self.variables:
        self.variables[key] = (self._fresh(key, dt), dt)
        self.bounds.append(self.to_int(self.variables[key][0], dt) == self.to_int(v0, dt0))
      v = self.variables[key][0]
    elif name in self.variables: v = self.variables[name][0]
    else:
      v = self._fresh(name, dt)
      self.variables[name] = (v, dt)
    if (name, dt, lo, hi) not in self.declared:   # a bool variable too: lo -> v -> hi (it had no bounds, so z3 reported
      # counterexamples outside them that the confirmation then rejected: symbolic.py:257 at bool was 'unknown')
      self.declared.add((name, dt, lo, hi))
      self.bounds.append(z3.And(self.le(self.const(lo, dt), v, dt), self.le(v, self.const(hi, dt), dt)))
    return v

  def _fresh(self, name:str, dt:DType):
    if self.is_bv(dt): return z3.BitVec(name, self.bits(dt), self.ctx)
    if self.is_int(dt): return z3.Int(name, self.ctx)
    if dt == dtypes.bool: return z3.Bool(name, self.ctx)
    raise Unsupported(f"variable {name} of {dt}")

  def lt(self, a, b, dt):
    if dt == dtypes.bool: return z3.And(z3.Not(a), b)   # False < True
    return z3.ULT(a, b) if dt in dtypes.uints and self.is_bv(dt) else a < b
  def le(self, a, b, dt):
    if dt == dtypes.bool: return z3.Or(z3.Not(a), b)
    return z3.ULE(a, b) if dt in dtypes.uints and self.is_bv(dt) else a <= b

  def to_int(self, x, dt:DType):
    """A value as a mathematical integer (for comparing across sorts)."""
    if dt == dtypes.bool: return z3.If(x, self.const(1, dtypes.weakint), self.const(0, dtypes.weakint))
    if dt == dtypes.weakint or self.is_int(dt): return x
    if self.weak_bits:
      if not _signed(dt) and dt.bitsize >= self.weak_bits: self.exact.append(z3.Extract(self.weak_bits - 1, self.weak_bits - 1, x) == 0)
      return (z3.SignExt if _signed(dt) else z3.ZeroExt)(self.weak_bits - dt.bitsize, x)
    return z3.BV2Int(x, is_signed=_signed(dt))

  # ** translation **
  def translate(self, u:UOp) -> tuple[z3.ExprRef, z3.BoolRef]:
    """(value, defined) of ``u``."""
    for x in u.toposort():
      if x not in self.memo: self.memo[x] = self._node(x)
    return self.memo[u]

  def _node(self, u:UOp):
    T = z3.BoolVal(True, self.ctx)
    op, dt = u.op, u.dtype
    if op is Ops.CONST:
      if u.arg is Invalid: return self.const(0, dtypes.weakint), z3.BoolVal(False, self.ctx)
      return self.const(u.arg, dt), T
    if op in (Ops.BUFFER, Ops.PARAM) and u.arg.addrspace is AddrSpace.ALU and u.arg.vmin_vmax is not None:
      lo, hi = u.arg.vmin_vmax
      return self.var(u.arg.name, dt, lo, hi), T
    if op is Ops.AFTER and u.is_bound_var: return self.memo[u.src[0]]
    if op in (Ops.RANGE, Ops.SPECIAL):
      end = u.src[0]
      if end.op is not Ops.CONST: raise Unsupported("a RANGE with a symbolic end")
      name = f"r{'_'.join(map(str, u.arg[:-1]))}" if op is Ops.RANGE else u.arg
      # a symbolic end (fuzz.concolic) stays a term: its Python arithmetic would record a decision outside any run
      hi = end.arg - 1 if (t := term_of(end.arg)) is None else _Term(t - 1)
      return self.var(name, dt, 0, hi), T
    if op is Ops.STACK and dt == dtypes.void: return z3.BoolVal(True, self.ctx), T
    srcs = [self.memo[s] for s in u.src]
    vals, defs = [s[0] for s in srcs], [s[1] for s in srcs]
    d = z3.And(*defs) if defs else T
    # weak operands commit to the node's dtype (spec.weak): a weakint CONST or node becomes dt's value, wrapping
    commit_from = 1 if op is Ops.WHERE else 0
    commit_to = 1 if op in (Ops.SHL, Ops.SHR) else len(vals)
    if op not in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.CAST, Ops.BITCAST):
      vals = [(self.const(0, dt) if s_.base.is_invalid else self._commit(v_, s_, dt)) if commit_from <= i < commit_to and s_.dtype != dt
              else v_ for i, (v_, s_) in enumerate(zip(vals, u.src))]
    if op is Ops.WHERE:
      c, a, b = vals
      return z3.If(c, a, b), z3.And(defs[0], z3.If(c, defs[1], defs[2]))
    if op is Ops.CAST: return self._cast(vals[0], u.src[0].dtype, dt), d
    if op is Ops.TRUNC and dt != dtypes.bool and (dt == dtypes.weakint or _is_bv(dt)): return vals[0], d   # an int is its own trunc
    if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
      a, b = vals
      sdt = u.src[0].dtype
      if sdt != u.src[1].dtype:
        a, b = self.to_int(a, sdt), self.to_int(b, u.src[1].dtype)
        sdt = dtypes.weakint
      return {Ops.CMPLT: lambda: self.lt(a, b, sdt), Ops.CMPNE: lambda: a != b, Ops.CMPEQ: lambda: a == b}[op](), d
    if dt == dtypes.bool:
      if op is Ops.AND: return z3.And(*vals), d
      if op is Ops.OR: return z3.Or(*vals), d
      if op is Ops.XOR: return z3.Xor(*vals), d
      if op is Ops.MUL: return z3.And(*vals), d
      if op is Ops.ADD or op is Ops.MAX: return z3.Or(*vals), d
      if op is Ops.NEG: return vals[0], d   # spec.alu: the identity on bool (C: -b is nonzero exactly when b is)
      raise Unsupported(f"{op} on bool")
    if (dom := self.domain(dt)) is None: raise Unsupported(f"{op} at {dt} (only int/bool expressions have a z3 model)")
    # the op's one definition (spec.intsem, via the op table), or the domain's proved-equal override
    if (sem := dom.overrides.get(op) or OP_TABLE[op].z3) is None: raise Unsupported(f"{op} on {dt}")
    r, conds = sem(dom, u, vals)
    return r, (z3.And(d, *conds) if conds else d)

  def _commit(self, x, s:UOp, dt:DType):
    """a weak operand at the node's dtype; a symbolic constant goes straight to ``dt`` (no detour through an Int)"""
    if s.op is Ops.CONST and z3.is_bv(term_of(s.arg)) and self.is_bv(dt): return self.const(s.arg, dt)
    return self._cast(x, s.dtype, dt)

  def _cast(self, x, src:DType, dst:DType):
    if src == dst: return x
    if src == dtypes.bool:
      one, zero = self.const(1, dst), self.const(0, dst)
      return z3.If(x, one, zero)
    if dst == dtypes.bool: return x != self.const(0, src)
    if dst == dtypes.weakint: return self.to_int(x, src)
    if not _is_bv(dst): raise Unsupported(f"cast to {dst}")
    if self.is_int(dst): return self.wrap(self.to_int(x, src), dst)
    if src == dtypes.weakint:  # commit: the value wraps into the width
      return z3.Extract(dst.bitsize - 1, 0, x) if self.weak_bits else z3.Int2BV(x, dst.bitsize)
    if not _is_bv(src): raise Unsupported(f"cast from {src}")
    if dst.bitsize < src.bitsize: return z3.Extract(dst.bitsize - 1, 0, x)
    if dst.bitsize > src.bitsize: return (z3.SignExt if _signed(src) else z3.ZeroExt)(dst.bitsize - src.bitsize, x)
    return x

  def _bits64(self, a):
    """an Int's 64-bit two's complement: a fresh bit-vector *linked* to it (``links``: ``bv2int(A) == a`` wherever a fits
    int64) instead of ``int2bv(a)``, which z3 decides poorly; where a does not fit, the op using it is undefined anyway"""
    if z3.is_int_value(a): return z3.BitVecVal(a.as_long() % 2**64, 64, self.ctx)
    if (hit := self.bits_of.get(a.get_id())) is not None: return hit[1]
    A = z3.BitVec(f"bits64_{len(self.links)}", 64, self.ctx)
    self.links.append(z3.Implies(z3.And(a >= -2**63, a <= 2**63 - 1), z3.BV2Int(A, is_signed=True) == a))
    self.bits_of[a.get_id()] = (a, A)   # one vector per Int term (the term is kept alive with it: ids are reused)
    return A

  def domain(self, dt:DType):
    """the integer domain ``dt``'s values live in here (spec.intsem's definitions are written against it)"""
    if dt == dtypes.weakint and not self.weak_bits: return ExactInt(self)
    if self.is_int(dt): return WrappedInt(self)
    if self.is_bv(dt): return BitVector(self)
    return None

class _Domain:
  """what the three integer domains share: their model, its Z3 helpers, and no overrides"""
  overrides: dict = {}
  def __init__(self, m:Z3Model): self.m = m
  def const(self, v, dt:DType): return self.m.const(v, dt)
  def lt(self, a, b, dt:DType): return self.m.lt(a, b, dt)
  def ite(self, c, x, y): return z3.If(c, x, y)
  def and_(self, *c): return z3.And(*c)

def _floor_by_euclid(D, u:UOp, v):
  """FLOORDIV / FLOORMOD on exact Ints from z3's Euclidean ``/`` (what z3 decides best); proved equal to
  ``spec.intsem.floor_div_mod`` by conformance/test_oracle_agreement.py"""
  a, b = v[0], v[1]
  return D.result(_int_divmod(u, a, b), u.dtype), D.divmod_conditions(u, a, b)

class _IntTerms(_Domain):
  """the two domains whose values are z3 ``Int`` terms: division from z3's Euclidean ``/``, the result then ``result``"""
  overrides = {Ops.FLOORDIV: _floor_by_euclid, Ops.FLOORMOD: _floor_by_euclid}
  def result(self, r, dt:DType): return r
  def divmod_conditions(self, u:UOp, a, b) -> tuple: return (b != 0,)
  def trunc_divmod(self, u:UOp, a, b):
    q = _int_divmod(u.replace(op=Ops.CDIV), a, b)
    return self.result(q, u.dtype), self.result(a - q * b, u.dtype), self.divmod_conditions(u, a, b)

class ExactInt(_IntTerms):
  """weakint as an unbounded mathematical integer: arithmetic is exact, nothing overflows"""
  def arith(self, u:UOp, op:Ops, a, b): return {Ops.ADD: a + b, Ops.SUB: a - b, Ops.MUL: a * b}[op], ()
  def shift(self, u:UOp, a, b):
    op, m = u.op, self.m
    if u.src[1].op is not Ops.CONST or not isinstance(u.src[1].arg, int): raise Unsupported("weakint shift by a non-constant count")
    def sh(k):
      return a * (2 ** k) if op is Ops.SHL else a / (2 ** k)   # z3's Int '/' by a positive number floors
    if type(k := u.src[1].arg) is int: return (sh(k), ()) if k >= 0 else (z3.IntVal(0, m.ctx), (z3.BoolVal(False, m.ctx),))
    # a symbolic count (fuzz.concolic): one case per count below WEAK_SHIFTS; a larger count is outside the model (exact)
    if b is None: raise Unsupported(f"{op} without a count")
    m.exact.append(b < WEAK_SHIFTS)
    return _by_count(sh, b, WEAK_SHIFTS), (b >= 0,)
  def bitwise(self, u:UOp, a, b):
    # exact identities on two's complement mathematical integers first (x^-1 = -x-1; x&(2^k-1) = x mod 2^k; x&-2^k = x - x mod 2^k)
    op, m = u.op, self.m
    cs = [s_.arg if s_.op is Ops.CONST and type(s_.arg) is int else None for s_ in u.src]
    for (x, c) in ((a, cs[1]), (b, cs[0])):
      if x is None or not isinstance(c, int): continue
      if op is Ops.XOR and c == -1: return -x - 1, ()
      if op is Ops.AND and c >= 0 and (c + 1) & c == 0: return x % (c + 1), ()
      if op is Ops.AND and c < 0 and (-c) & (-c - 1) == 0: return x - x % (-c), ()
    # otherwise: two's complement on the mathematical integer, modelled at 64 bits (defined within int64)
    def inr(x):
      return z3.And(x >= -2**63, x <= 2**63 - 1)
    r = BITWISE[op](m._bits64(a), m._bits64(b))
    out = z3.BV2Int(r, is_signed=True)
    m.bits_of[out.get_id()] = (out, r)   # a later bitwise op on this value reads its bits directly
    return out, (inr(a), inr(b))

class WrappedInt(_IntTerms):
  """a sized int as its exact Int (``sized_as_int``): the same semantics as ``BitVector``, overflow read off the exact value"""
  def result(self, r, dt:DType): return self.m.wrap(r, dt)
  def arith(self, u:UOp, op:Ops, a, b):
    dt, m = u.dtype, self.m
    r = {Ops.ADD: a + b, Ops.SUB: a - b, Ops.MUL: a * b}[op]
    ub = m.reading is OverflowReading.UNDEFINED
    if ub and dt in C_UB_SIGNED: return r, (z3.And(r >= dt.min, r <= dt.max),)   # defined only where it fits: then it is its value
    if ub and dt == dtypes.uint16 and op is Ops.MUL: return m.wrap(r, dt), (r <= 2**31 - 1,)   # promoted to C int
    return m.wrap(r, dt), ()
  def divmod_conditions(self, u:UOp, a, b) -> tuple:
    dt = u.dtype
    if _signed(dt) and self.m.reading is OverflowReading.UNDEFINED: return (b != 0, z3.Not(z3.And(a == dt.min, b == -1)))   # MIN / -1: UB in C
    return (b != 0,)
  def bitwise(self, u:UOp, a, b):
    w = u.dtype.bitsize
    return z3.BV2Int(BITWISE[u.op](z3.Int2BV(a, w), z3.Int2BV(b, w)), is_signed=_signed(u.dtype)), ()
  def shift(self, u:UOp, a, b):
    op, dt, m = u.op, u.dtype, self.m
    w, ub = dt.bitsize, m.reading is OverflowReading.UNDEFINED
    cnt = m.to_int(b, u.src[1].dtype)
    conds: tuple = (cnt >= 0, cnt < w)
    def sh(k):
      return a * (2 ** k) if op is Ops.SHL else a / (2 ** k)   # Int '/' by a positive number floors (arithmetic >>)
    c = u.src[1].arg if u.src[1].op is Ops.CONST and type(u.src[1].arg) is int else None
    r = (sh(c) if 0 <= c < w else m.const(0, dt)) if c is not None else _by_count(sh, cnt, w)
    if op is Ops.SHL and ub and dt in C_UB_SIGNED: return r, (*conds, a >= 0, r <= dt.max)   # C: a negative or overflowing shift is UB
    return (m.wrap(r, dt) if op is Ops.SHL else r), conds

class BitVector(_Domain):
  """a sized int as a bit-vector of its width; weakint under ``weak_bits`` as a wide one standing for a mathematical
  integer (leaving it is undefined, and the model records where its value is exact)"""
  def arith(self, u:UOp, op:Ops, a, b):
    dt, m = u.dtype, self.m
    w, weak = m.bits(dt), dt == dtypes.weakint
    ub = m.reading is OverflowReading.UNDEFINED or weak
    r = {Ops.ADD: a + b, Ops.SUB: a - b, Ops.MUL: a * b}[op]
    conds: tuple = ()
    if ub and (dt in C_UB_SIGNED or weak) and not (weak and m.weak_width(u) <= w):   # (a weak value that surely fits: no check)
      no = {Ops.ADD: z3.And(z3.BVAddNoOverflow(a, b, True), z3.BVAddNoUnderflow(a, b)),
            Ops.SUB: z3.And(z3.BVSubNoOverflow(a, b), z3.BVSubNoUnderflow(a, b, True)),
            Ops.MUL: z3.And(z3.BVMulNoOverflow(a, b, True), z3.BVMulNoUnderflow(a, b))}[op]
      if weak: m.exact.append(no)
      conds = (no,)
    if ub and dt == dtypes.uint16 and op is Ops.MUL:  # promoted to C int
      conds = (*conds, z3.ULE(z3.ZeroExt(16, a) * z3.ZeroExt(16, b), z3.BitVecVal(2**31 - 1, 32, m.ctx)))  # unsigned compare
    return r, conds
  def trunc_divmod(self, u:UOp, a, b):
    dt, m = u.dtype, self.m
    w, weak = m.bits(dt), dt == dtypes.weakint
    nz = b != m.const(0, dt)
    if not _signed(dt): return z3.UDiv(a, b), z3.URem(a, b), (nz,)
    ovf = z3.And(a == z3.BitVecVal(1 << (w - 1), w, m.ctx), b == m.const(-1, dt))
    if weak: m.exact.append(z3.Not(ovf))
    # z3py '/' on bit-vectors is signed, truncating (C); MIN / -1: UB in C, wraps under WRAP (spec.ints.cdiv)
    return a / b, z3.SRem(a, b), ((nz, z3.Not(ovf)) if m.reading is OverflowReading.UNDEFINED or weak else (nz,))
  def bitwise(self, u:UOp, a, b): return BITWISE[u.op](a, b), ()
  def shift(self, u:UOp, a, b):
    op, dt, m = u.op, u.dtype, self.m
    w, weak = m.bits(dt), dt == dtypes.weakint
    bdt = u.src[1].dtype
    cnt = b if bdt == dt else m._cast(b, bdt, dt) if bdt != dtypes.weakint else \
          (z3.Extract(w - 1, 0, b) if m.weak_bits and w <= m.weak_bits else z3.Int2BV(b, w))
    cnt_int = m.to_int(b, bdt)
    in_range = z3.And(cnt_int >= 0, cnt_int < w)
    if op is Ops.SHR: return (a >> cnt if _signed(dt) else z3.LShR(a, cnt)), (in_range,)
    r = a << cnt
    if weak:   # a mathematical integer: defined while the product fits, negative or not
      m.exact.append((r >> cnt) == a)
      return r, ((r >> cnt) == a, in_range)
    if m.reading is OverflowReading.UNDEFINED and dt in C_UB_SIGNED:
      return r, (a >= m.const(0, dt), (r >> cnt) == a, in_range)   # C: a negative or overflowing shift is UB
    return r, (in_range,)

@dataclass(frozen=True)
class PathQuery:
  """How a refinement question about symbolic constants (``SymbolicConst``, the rule verifier's) is asked: ``ctx`` is the
  z3 context their terms live in, ``assume`` the path condition under which the rewrite was made, ``terms`` (name ->
  term) the constants a counterexample reports; ``rlimit`` bounds z3 by its deterministic resource counter instead of
  wall-clock time (the same answer every run) and ``on_check`` sees each solver after its check (to charge a budget);
  ``sized_as_int`` holds every sized int as its exact Int (wrapping by modulo), ``sym_bits`` bounds a symbol's width."""
  ctx: z3.Context|None = None
  assume: tuple = ()
  terms: dict|None = None
  rlimit: int|None = None
  on_check: Callable|None = None
  sized_as_int: bool = False
  sym_bits: int|None = None

def check_rewrite(before:UOp, after:UOp, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=5000,
                  weak_bits:int|None=None, query:PathQuery=PathQuery()) -> Proved|Refuted|Unknown:
  """Is ``after`` a refinement of ``before`` (defined wherever before is, and equal there)? ``weak_bits`` models weakint
  as a bit-vector that wide instead of an unbounded Int: much faster when an expression mixes weakint and sized ints
  (lowering), exact as long as no value needs more bits: the original's values are first proved to fit (else Unknown),
  so a value past the width can never make a rewrite hold vacuously. ``query``: symbolic constants (``PathQuery``)."""
  ctx, assume, terms, rlimit, on_check = query.ctx, query.assume, query.terms, query.rlimit, query.on_check
  sized_as_int, sym_bits = query.sized_as_int, query.sym_bits
  if before.dtype != after.dtype:
    return Refuted({}, str(before.dtype), str(after.dtype), f"the rewrite changes the dtype from {before.dtype} to {after.dtype}")
  m = Z3Model(reading, weak_bits=weak_bits, sized_as_int=sized_as_int, sym_bits=sym_bits, **({"ctx": ctx} if ctx is not None else {}))
  try:
    bv, bd = m.translate(before)
    before_vars, n_exact = set(m.variables), len(m.exact)
    av, ad = m.translate(after)
  except Unsupported as e: return Unknown(str(e))
  except z3.Z3Exception as e: return Unknown(f"z3 model could not express it: {e}")
  if (extra := {n.split("@")[0] for n in m.variables} - {n.split("@")[0] for n in before_vars}):
    return Refuted({}, "-", "-", f"the rewrite introduces variables {sorted(extra)}")
  if (why := _inexact(m, n_exact, assume, rlimit, timeout_ms, on_check)): return Unknown(why)
  goal = [*m.bounds, *m.links, *assume, bd, z3.Or(z3.Not(ad), av != bv)]
  s = solver_for(goal, m.ctx)
  if rlimit is not None: s.set("rlimit", rlimit)
  else: s.set("timeout", timeout_ms)
  s.add(*goal)
  r = check(s)
  if on_check is not None: on_check(s)   # e.g. to charge the resource units spent to a budget
  if r == z3.unsat: return Proved()
  if r == z3.unknown: return Unknown(f"z3: {s.reason_unknown()}")
  mdl = s.model()
  dt = before.dtype
  asg = {n: _signed_value(mdl, v, vdt) for n, (v, vdt) in m.variables.items() if "@" not in n}
  asg.update({n: _signed_value(mdl, t, dtypes.weakint) for n, t in (terms or {}).items()})   # symbols: signed, Int or BV
  defined_after = z3.is_true(mdl.eval(ad, model_completion=True))
  bval = _signed_value(mdl, bv, dt)
  aval = _signed_value(mdl, av, dt) if defined_after else "undefined"
  reason = "the rewrite is undefined where the original is defined (introduces UB)" if not defined_after else "values differ"
  return Refuted(asg, bval, aval, reason)

def _inexact(m:Z3Model, n:int, assume:tuple, rlimit:int|None, timeout_ms:int, on_check) -> str:
  """Where the model is not exact (under ``weak_bits`` a weakint value that needs more bits is *undefined*; a weakint
  shift count past WEAK_SHIFTS) the refinement would hold vacuously: prove the original never goes there (else no
  verdict). '' when exact."""
  if not (ex := m.exact[:n]): return ""
  q = [*m.bounds, *m.links, *assume, z3.Not(z3.And(*ex))]
  s = solver_for(q, m.ctx)
  if rlimit is not None: s.set("rlimit", rlimit)
  else: s.set("timeout", timeout_ms)
  s.add(*q)
  r = check(s)
  if on_check is not None: on_check(s)
  if r == z3.unsat: return ""
  return f"the original may leave the z3 model's exact range (a weakint past {m.weak_bits} bits or a shift count past {WEAK_SHIFTS}): " + \
         ('z3: ' + s.reason_unknown() if r == z3.unknown else 'it does')

def _by_count(shift, cnt, n:int):
  """a shift by a symbolic count as one case per count 0..n-1 (the last case also stands for every larger count: the
  caller makes those undefined or outside the exact range)"""
  out = shift(n - 1)
  for i in reversed(range(n - 1)): out = z3.If(cnt == i, shift(i), out)
  return out

def _int_divmod(u:UOp, a, b):
  """truncating (CDIV/CMOD) or flooring (FLOORDIV/FLOORMOD) division of exact Ints: z3's Int division is Euclidean"""
  op = u.op
  if u.src[1].op is Ops.CONST and type(u.src[1].arg) is int and u.src[1].arg != 0:  # a constant divisor: no case split on its sign
    c = u.src[1].arg
    fdiv = a / c if c > 0 else (-a) / (-c)
    tdiv = z3.If(a >= 0, a / abs(c), -((-a) / abs(c))) * (1 if c > 0 else -1)
  else:
    fdiv = z3.If(b > 0, a / b, (-a) / (-b))
    tdiv = z3.If(a >= 0, z3.If(b > 0, a / b, -(a / (-b))), z3.If(b > 0, -((-a) / b), (-a) / (-b)))
  q = {Ops.CDIV: tdiv, Ops.CMOD: tdiv, Ops.FLOORDIV: fdiv, Ops.FLOORMOD: fdiv}[op]
  return q if op in (Ops.CDIV, Ops.FLOORDIV) else a - q * b

def pure_bv(exprs) -> bool:
  """no Int term anywhere in ``exprs`` (then z3's bit-blasting QF_BV solver decides it, often 1000x faster)"""
  seen, todo = set(), list(exprs)
  while todo:
    e = todo.pop()
    if e.get_id() in seen: continue
    seen.add(e.get_id())
    if z3.is_int(e) or z3.is_real(e): return False
    todo.extend(e.children())
  return True

def check(solver:z3.Solver) -> z3.CheckSatResult:
  """``solver.check()``, except that a Ctrl-C is an interrupt, never a verdict: z3 catches SIGINT itself during a check and
  answers ``unknown`` ("interrupted from keyboard"), so Python never sees it -- raised here as ``KeyboardInterrupt``"""
  r = solver.check()
  if r == z3.unknown and "interrupted" in solver.reason_unknown(): raise KeyboardInterrupt("z3 check interrupted")
  return r

def solver_for(exprs, ctx:z3.Context) -> z3.Solver:
  return z3.SolverFor("QF_BV", ctx=ctx) if pure_bv(exprs) else z3.Solver(ctx=ctx)

def _signed_value(mdl, e, dt:DType):
  v = mdl.eval(e, model_completion=True)
  if z3.is_true(v) or z3.is_false(v): return z3.is_true(v)
  if z3.is_bv_value(v): return v.as_signed_long() if _signed(dt) else v.as_long()
  if z3.is_int_value(v): return v.as_long()
  return str(v)

def check_bounds(e:UOp, vmin, vmax, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=5000) -> Proved|Refuted|Unknown:
  """Does every defined value of ``e`` lie in [vmin, vmax] (tinygrad's range analysis claims ``e.vmin``/``e.vmax``)?"""
  m = Z3Model(reading)
  try: v, d = m.translate(e)
  except (Unsupported, z3.Z3Exception) as ex: return Unknown(str(ex))
  iv = m.to_int(v, e.dtype)
  s = z3.Solver(ctx=m.ctx)
  s.set("timeout", timeout_ms)
  s.add(*m.bounds, *m.links, d, z3.Or(iv < int(vmin), iv > int(vmax)))
  r = check(s)
  if r == z3.unsat: return Proved()
  if r == z3.unknown: return Unknown(f"z3: {s.reason_unknown()}")
  mdl = s.model()
  return Refuted({n: _signed_value(mdl, x, vdt) for n, (x, vdt) in m.variables.items()}, f"[{vmin}, {vmax}]",
                 _signed_value(mdl, iv, dtypes.weakint), "value outside the claimed [vmin, vmax]")
