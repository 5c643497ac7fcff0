"""Concolic integers: run a rewrite rule's own Python on *symbolic* constants and record every decision it makes.

A ``SymInt`` is an ``int`` (its concrete value, so any code runs on it unchanged) that also carries a z3 term (an
``Int`` for a weakint symbol, a 130-bit vector for a sized dtype's: z3 decides bit-vectors far faster than int2bv).
Arithmetic on it (``+ - * // % << >> & | ^``, ``abs``, ``min``/``max`` through comparisons) builds the term along; a
comparison gives a ``SymBool`` whose truth, when Python asks for it (``if``, ``and``, ``not``), is recorded in the active
``Recorder`` as a path condition with the outcome the concrete values take. Where the rule's code needs a plain number
(``int()``, ``math.gcd``, ``ctypes``, indexing) the value is *pinned*: the condition ``term == value`` is recorded and
marked, so a path is never wider than what was really executed -- a pin narrows the path instead of losing the symbol.

This is how CrossHair and concolic testers explore Python; ``explore`` (in ``fuzz/rule_verify.py``) reruns the rule with
constants z3 picks to flip one recorded decision at a time, until every feasible path has been run or a budget is spent.

The one place tinygrad itself would drop the symbol is ``DType.const`` (it calls ``int(val)`` on an int constant);
``keep_symbols()`` lets a SymInt through there unchanged for int dtypes (the value is the same mathematical integer) and
restores tinygrad's method on exit. Nothing else in tinygrad is touched."""
from __future__ import annotations
from typing import Iterator
import contextlib, threading
from dataclasses import dataclass, field
import z3

class SymbolEscaped(Exception):
  """A symbolic value was used as a truth value or a plain number outside any recorded run."""

class NotComputed(OverflowError):
  """This path's value is past what the symbolic integers compute (a shift count past their width): the path is not run.
  Never a verdict on the rule: held against it only as an undecided path where the original is defined."""

@dataclass
class Recorder:
  """The path conditions of one concrete run: (condition, outcome, is_pin) in the order they were decided."""
  ctx: z3.Context
  conds: list[tuple[z3.BoolRef, bool, bool]] = field(default_factory=list)
  def record(self, c:z3.BoolRef, outcome:bool, pin:bool=False) -> None:
    if z3.is_true(c) or z3.is_false(c): return
    self.conds.append((c, outcome, pin))
  @property
  def pinned(self) -> bool: return any(p for _, _, p in self.conds)

def path_literals(conds:list[tuple[z3.BoolRef, bool, bool]]) -> list[z3.BoolRef]:
  """recorded decisions as the conditions that held: ``c`` where it was true, ``Not(c)`` where false"""
  return [c if o else z3.Not(c) for c, o, _ in conds]

_state = threading.local()

def current() -> Recorder|None: return getattr(_state, "rec", None)

@contextlib.contextmanager
def recording(rec:Recorder) -> Iterator[Recorder]:
  prev, _state.rec = current(), rec
  try: yield rec
  finally: _state.rec = prev

def _need() -> Recorder:
  if (r := current()) is None: raise SymbolEscaped("a symbolic constant was used outside a recorded run")
  return r

class SymBool:
  """A comparison of symbolic integers: its truth is decided by the concrete values and recorded."""
  __slots__ = ("value", "term")
  def __init__(self, value:bool, term:z3.BoolRef): self.value, self.term = bool(value), term
  def __bool__(self) -> bool:
    _need().record(self.term, self.value)
    return self.value
  def __index__(self) -> int:   # a decision used as a number: tinygrad's ``cdiv`` indexes ``(1,-1)[x*y<0]``
    return int(self.__bool__())
  # a decision compared as a number (0 or 1): a bool node's ``vmin`` is one, and ``UOp.overflows`` compares it with a dtype's
  # bounds (``weak.py``'s ``default_dtype`` of a weak cast of a comparison)
  def _number(self) -> SymInt:
    return SymInt(int(self.value), z3.If(self.term, z3.IntVal(1, self.term.ctx), z3.IntVal(0, self.term.ctx)), 1)
  # two decisions compared (``x.vmin == x.vmax`` of a comparison node, ``symbolic.py:257``): without this Python compared
  # the objects, always unequal, so that rule never fired on a comparison -- an instance silently lost as "n/a"
  def __eq__(self, o):
    if isinstance(o, SymBool): return SymBool(self.value == o.value, self.term == o.term)
    return self._number() == o if isinstance(o, int) else NotImplemented
  def __ne__(self, o):
    if isinstance(o, SymBool): return SymBool(self.value != o.value, self.term != o.term)
    return self._number() != o if isinstance(o, int) else NotImplemented
  __hash__ = object.__hash__   # identity, as SymInt's: two decisions with equal outcomes are not one decision
  def __lt__(self, o): return self._number() < o if isinstance(o, int) else NotImplemented
  def __le__(self, o): return self._number() <= o if isinstance(o, int) else NotImplemented
  def __gt__(self, o): return self._number() > o if isinstance(o, int) else NotImplemented
  def __ge__(self, o): return self._number() >= o if isinstance(o, int) else NotImplemented
  def __repr__(self): return f"SymBool({self.value})"

W = 130   # a symbol of a sized dtype is a 130-bit vector: every dtype constant, and any product of two, fits exactly

def _c(x) -> int:
  """the concrete value of an int or SymInt, never pinning"""
  return int.__int__(x)

def _is_bv(t) -> bool: return z3.is_bv(t)

def _lift(x, like):
  """``x`` (an int or SymInt) as a term of ``like``'s sort; a bit-vector meeting an Int becomes an Int"""
  if isinstance(x, SymInt):
    t = x.term
    if _is_bv(t) and not _is_bv(like): return z3.BV2Int(t, is_signed=True)
    return t
  if isinstance(x, int): return z3.BitVecVal(_c(x), W, like.ctx) if _is_bv(like) else z3.IntVal(_c(x), like.ctx)
  return None

def _pair(a:"SymInt", o):
  """both operands as terms of one sort (Int if either is an Int)"""
  ta = a.term
  if isinstance(o, SymInt) and _is_bv(ta) and not _is_bv(o.term): ta = z3.BV2Int(ta, is_signed=True)
  return ta, _lift(o, ta)

def _guard(ok:z3.BoolRef, holds:bool) -> None:
  """record that a bit-vector operation did not overflow its 130 bits (so it equals Python's unbounded result)"""
  if not z3.is_true(ok): SymBool(holds, ok).__bool__()

def _fits(v:int) -> bool: return -(1 << (W - 1)) <= v < (1 << (W - 1))

def _floordiv(a, b):
  if not _is_bv(a): return z3.If(b > 0, a / b, (-a) / (-b))   # z3's Int division is Euclidean
  q, r = a / b, z3.SRem(a, b)                                  # z3py's bit-vector '/' is signed, truncating
  return z3.If(z3.And(r != 0, (r < 0) != (b < 0)), q - 1, q)

def _mod(a, b): return a - b * _floordiv(a, b)

def _bits(x) -> int:
  """a bound on the magnitude of every value ``x`` may take: |x| < 2**bits (W: no bound known)"""
  return x.bits if isinstance(x, SymInt) else abs(_c(x)).bit_length()

class SymInt(int):
  """An int that carries a z3 term (see the module docstring): an Int for weakint symbols, a 130-bit vector for sized ones.
  ``bits`` bounds its magnitude over every value its symbols' domains allow (|x| < 2**bits; W when unknown): an
  overflow guard that such a bound shows cannot fail is not recorded (a product of two 64-bit constants needs 128 bits,
  and z3's 130-bit multiply-overflow predicate in every path condition is what made MULACC folds undecidable)."""
  term: z3.ExprRef
  bits: int
  def __new__(cls, value:int, term, bits:int=W):
    o = super().__new__(cls, _c(value))
    o.term, o.bits = term, min(bits, W)
    return o
  # identity hashing: two symbols with equal concrete values are not one value, so dict/cache lookups never merge them
  def __hash__(self): return object.__hash__(self)
  def _op(self, o, concrete:int, build, reverse=False, overflow=None, width=None):
    """``width(bits_a, bits_b)``: a bound on the result's magnitude from its operands' (None: none known)"""
    if not isinstance(o, int): return NotImplemented
    ta, tb = _pair(self, o)
    a, b = (tb, ta) if reverse else (ta, tb)
    bits = min(width(self.bits, _bits(o)), W) if width is not None else W   # an unknown operand (W) gives W: the guard stays
    if _is_bv(a) and overflow is not None and bits >= W: _guard(overflow(a, b), _fits(concrete))
    return SymInt(concrete, build(a, b), bits)
  def _cmp(self, o, concrete:bool, build):
    if not isinstance(o, int): return NotImplemented
    a, b = _pair(self, o)
    return SymBool(concrete, build(a, b))
  def pin(self) -> int:
    _need().record(self.term == _lift(_c(self), self.term), True, pin=True)
    return _c(self)
  def _nonzero(self, d):
    if isinstance(d, SymInt): SymBool(_c(d) != 0, d.term != _lift(0, d.term)).__bool__()
  # arithmetic
  def __add__(self, o): return self._op(o, _c(self) + _c(o), lambda a, b: a + b, False, _add_ok, _sum_bits) if isinstance(o, int) else NotImplemented
  def __radd__(self, o): return self._op(o, _c(o) + _c(self), lambda a, b: a + b, True, _add_ok, _sum_bits) if isinstance(o, int) else NotImplemented
  def __sub__(self, o): return self._op(o, _c(self) - _c(o), lambda a, b: a - b, False, _sub_ok, _sum_bits) if isinstance(o, int) else NotImplemented
  def __rsub__(self, o): return self._op(o, _c(o) - _c(self), lambda a, b: a - b, True, _sub_ok, _sum_bits) if isinstance(o, int) else NotImplemented
  def __mul__(self, o):
    return self._op(o, _c(self) * _c(o), lambda a, b: a * b, False, _mul_ok, _product_bits) if isinstance(o, int) else NotImplemented
  def __rmul__(self, o):
    return self._op(o, _c(o) * _c(self), lambda a, b: a * b, True, _mul_ok, _product_bits) if isinstance(o, int) else NotImplemented
  def __neg__(self):
    if _is_bv(self.term): _guard(self.term != z3.BitVecVal(-(1 << (W - 1)), W, self.term.ctx), True)
    return SymInt(-_c(self), -self.term)
  def __pos__(self): return self
  def __abs__(self):
    if _is_bv(self.term): _guard(self.term != z3.BitVecVal(-(1 << (W - 1)), W, self.term.ctx), True)
    return SymInt(abs(_c(self)), z3.If(self.term < _lift(0, self.term), -self.term, self.term))
  def __floordiv__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._nonzero(o)
    return self._op(o, _c(self) // _c(o), _floordiv)
  def __rfloordiv__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._nonzero(self)
    return self._op(o, _c(o) // _c(self), _floordiv, True)
  def __mod__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._nonzero(o)
    return self._op(o, _c(self) % _c(o), _mod)
  def __rmod__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._nonzero(self)
    return self._op(o, _c(o) % _c(self), _mod, True)
  def __lshift__(self, o):
    if not isinstance(o, int): return NotImplemented
    return self * (1 << o if isinstance(o, SymInt) else 1 << _c(o))   # a symbolic count: SymInt.__rlshift__
  def __rlshift__(self, o):
    """``o << self`` for a plain ``o`` and a symbolic count (``(1 << k) - 1``, a mask below bit k): exact as a left
    shift of the 130-bit vector while the result fits, which the path then requires; a negative count raises as in
    Python (that decision recorded too). A count past the width raises ``NotComputed`` on its path: a raise is held
    against the rule only where the original is defined somewhere on the path (``_raise_matters``), and never proves
    anything. Pinning it instead covered one count per path, so the paths past the width multiplied until the budget was
    spent -- ``symbolic.py:138``, ``(x&mask)>>k`` with a weak ``k``, was undecided at every sized dtype although a shift
    by 8 or more is undefined there; and z3 picks counts up to 2**129. A symbolic ``o`` pins the count."""
    if not isinstance(o, int): return NotImplemented
    k, n = _c(self), _c(o)
    if isinstance(o, SymInt) or not 0 <= n.bit_length() < W - 1: return _c(o) << self.pin()
    t = self.term
    if not SymBool(k >= 0, t >= _lift(0, t)): raise ValueError("negative shift count")
    room = W - 1 - n.bit_length()   # 2**k * |n| < 2**(W-1) for every k below this
    if not SymBool(k < room, t < _lift(room, t)):
      raise NotComputed(f"a shift count of {k} is past the {W}-bit width")
    kb = t if _is_bv(t) else z3.Int2BV(t, W)
    out = z3.BitVecVal(n, W, t.ctx) << kb
    return SymInt(n << k, out if _is_bv(t) else z3.BV2Int(out, is_signed=True), W - 2)   # |n << k| < 2**(bit_length(n) + room - 1)
  def __rshift__(self, o):
    if not isinstance(o, int): return NotImplemented
    return self // (1 << o if isinstance(o, SymInt) else 1 << _c(o))
  def __rrshift__(self, o): return _c(o) // (1 << self) if isinstance(o, int) else NotImplemented
  def _bitop(self, o, concrete, op, reverse=False):
    if not isinstance(o, int): return NotImplemented
    ta, tb = _pair(self, o)
    if not _is_bv(ta):   # an Int symbol: exact on 130-bit two's complement, which the path then requires
      for t in (ta, tb): _guard(z3.And(t < 2 ** (W - 1), t >= -2 ** (W - 1)), True)
      A, B = z3.Int2BV(ta, W), z3.Int2BV(tb, W)
      return SymInt(concrete, z3.BV2Int(op(B, A) if reverse else op(A, B), is_signed=True))
    return SymInt(concrete, op(tb, ta) if reverse else op(ta, tb))
  def __and__(self, o): return self._bitop(o, _c(self) & _c(o), lambda a, b: a & b) if isinstance(o, int) else NotImplemented
  def __rand__(self, o): return self._bitop(o, _c(o) & _c(self), lambda a, b: a & b, True) if isinstance(o, int) else NotImplemented
  def __or__(self, o): return self._bitop(o, _c(self) | _c(o), lambda a, b: a | b) if isinstance(o, int) else NotImplemented
  def __ror__(self, o): return self._bitop(o, _c(o) | _c(self), lambda a, b: a | b, True) if isinstance(o, int) else NotImplemented
  def __xor__(self, o): return self._bitop(o, _c(self) ^ _c(o), lambda a, b: a ^ b) if isinstance(o, int) else NotImplemented
  def __rxor__(self, o): return self._bitop(o, _c(o) ^ _c(self), lambda a, b: a ^ b, True) if isinstance(o, int) else NotImplemented
  def __invert__(self): return SymInt(~_c(self), ~self.term if _is_bv(self.term) else -self.term - 1)
  def __pow__(self, o, mod=None):
    if mod is not None or not isinstance(o, int): return NotImplemented
    k = o.pin() if isinstance(o, SymInt) else _c(o)
    if k < 0: return _c(self) ** k
    out = SymInt(1, _lift(1, self.term))
    for _ in range(k): out = out * self
    return out
  def __rpow__(self, o): return _c(o) ** self.pin() if isinstance(o, int) else NotImplemented   # type: ignore[override]
  # comparisons
  def __eq__(self, o):
    if o is self: return True
    return self._cmp(o, _c(self) == _c(o), lambda a, b: a == b) if isinstance(o, int) else NotImplemented
  def __ne__(self, o):
    if o is self: return False
    return self._cmp(o, _c(self) != _c(o), lambda a, b: a != b) if isinstance(o, int) else NotImplemented
  def __lt__(self, o): return self._cmp(o, _c(self) < _c(o), lambda a, b: a < b) if isinstance(o, int) else NotImplemented
  def __le__(self, o): return self._cmp(o, _c(self) <= _c(o), lambda a, b: a <= b) if isinstance(o, int) else NotImplemented
  def __gt__(self, o): return self._cmp(o, _c(self) > _c(o), lambda a, b: a > b) if isinstance(o, int) else NotImplemented
  def __ge__(self, o): return self._cmp(o, _c(self) >= _c(o), lambda a, b: a >= b) if isinstance(o, int) else NotImplemented
  def __bool__(self): return bool(SymBool(_c(self) != 0, self.term != _lift(0, self.term)))
  # where a plain number is asked for: pin
  def __index__(self): return self.pin()
  def __int__(self): return self.pin()
  def __float__(self): return float(self.pin())
  def __trunc__(self): return self
  def __floor__(self): return self
  def __ceil__(self): return self
  def __round__(self, n=None): return self if n is None else round(self.pin(), n)
  def bit_length(self) -> int: return self.pin().bit_length()
  def __format__(self, spec): return format(self.pin(), spec)
  def __repr__(self): return f"Sym({int.__repr__(_c(self))})"
  __str__ = __repr__
  def __reduce__(self): raise TypeError("a SymInt is not serializable")

def _sum_bits(a:int, b:int) -> int: return max(a, b) + 1
def _product_bits(a:int, b:int) -> int: return a + b

def _add_ok(a, b): return z3.And(z3.BVAddNoOverflow(a, b, True), z3.BVAddNoUnderflow(a, b))
def _sub_ok(a, b): return z3.And(z3.BVSubNoOverflow(a, b), z3.BVSubNoUnderflow(a, b, True))
def _mul_ok(a, b): return z3.And(z3.BVMulNoOverflow(a, b, True), z3.BVMulNoUnderflow(a, b))

def value_of(model:z3.ModelRef, term:z3.ExprRef) -> int:
  """a symbol's value in a z3 model (bit-vectors read as signed, like a weakint)"""
  from uopcheck.spec.z3model import _signed_value
  from tinygrad.dtype import dtypes
  return _signed_value(model, term, dtypes.weakint)

@contextlib.contextmanager
def keep_symbols() -> Iterator[None]:
  """Let SymInts through ``DType.const`` for int dtypes (tinygrad would call ``int()`` there, dropping the term: the
  mathematical value is the same). Restores tinygrad's method on exit."""
  from tinygrad.dtype import DType, dtypes
  orig = DType.const
  def const(self, val):
    if isinstance(val, SymInt) and (dtypes.is_int(self) or self == dtypes.weakint): return val
    return orig(self, val)
  DType.const = const   # type: ignore[method-assign]
  try: yield
  finally: DType.const = orig   # type: ignore[method-assign]
