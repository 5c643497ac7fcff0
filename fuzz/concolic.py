"""Concolic integers: run a rewrite rule's own Python on *symbolic* constants and record every decision it makes.

A ``SymInt`` is an ``int`` (its concrete value, so any code runs on it unchanged) that also carries a z3 ``Int`` term.
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
import contextlib, threading
from dataclasses import dataclass, field
import z3

class SymbolEscaped(Exception):
  """A symbolic value was used as a truth value or a plain number outside any recorded run."""

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
  def condition(self, upto:int|None=None) -> z3.BoolRef:
    cs = [c if o else z3.Not(c) for c, o, _ in self.conds[:upto]]
    return z3.And(*cs) if cs else z3.BoolVal(True, self.ctx)

_state = threading.local()

def current() -> Recorder|None: return getattr(_state, "rec", None)

@contextlib.contextmanager
def recording(rec:Recorder):
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
  def __repr__(self): return f"SymBool({self.value})"

def _term(x, ctx):
  if isinstance(x, SymInt): return x.term
  if isinstance(x, bool): return z3.IntVal(int(x), ctx)
  if isinstance(x, int): return z3.IntVal(x, ctx)
  return None

def _c(x) -> int:
  """the concrete value of an int or SymInt, never pinning"""
  return int.__int__(x)

def _floordiv(a, b):   # Python's floor division on z3 Ints (z3's own is Euclidean)
  return z3.If(b > 0, a / b, (-a) / (-b))

_BV = 72   # bit operations are modelled on 72-bit two's complement: exact for |x| < 2**71, which the path then requires

def _bits(op, a, b):
  A, B = z3.Int2BV(a, _BV), z3.Int2BV(b, _BV)
  return z3.BV2Int({"and": A & B, "or": A | B, "xor": A ^ B}[op], is_signed=True)

def _fits_bits(x) -> None:
  """record that a bit operation's operand lies where the 72-bit model is exact (true of every constant of a dtype)"""
  if isinstance(x, SymInt): SymBool(abs(_c(x)) < 2 ** (_BV - 1), z3.And(x.term < 2 ** (_BV - 1), x.term > -2 ** (_BV - 1))).__bool__()

class SymInt(int):
  """An int that carries a z3 term (see the module docstring)."""
  term: z3.ArithRef
  def __new__(cls, value:int, term):
    o = super().__new__(cls, _c(value))
    o.term = term
    return o
  # identity hashing: two symbols with equal concrete values are not one value, so dict/cache lookups never merge them
  def __hash__(self): return object.__hash__(self)
  def _ctx(self): return self.term.ctx
  def _bin(self, other, concrete, build, reverse=False):
    t = _term(other, self._ctx())
    if t is None: return NotImplemented
    a, b = (t, self.term) if reverse else (self.term, t)
    return SymInt(concrete, build(a, b))
  def _cmp(self, other, concrete, build):
    t = _term(other, self._ctx())
    if t is None: return NotImplemented
    return SymBool(concrete, build(self.term, t))
  def pin(self) -> int:
    _need().record(self.term == _c(self), True, pin=True)
    return _c(self)
  # arithmetic
  def __add__(self, o): return self._bin(o, _c(self) + _c(o), lambda a, b: a + b) if isinstance(o, int) else NotImplemented
  def __radd__(self, o): return self._bin(o, _c(o) + _c(self), lambda a, b: a + b, True) if isinstance(o, int) else NotImplemented
  def __sub__(self, o): return self._bin(o, _c(self) - _c(o), lambda a, b: a - b) if isinstance(o, int) else NotImplemented
  def __rsub__(self, o): return self._bin(o, _c(o) - _c(self), lambda a, b: a - b, True) if isinstance(o, int) else NotImplemented
  def __mul__(self, o): return self._bin(o, _c(self) * _c(o), lambda a, b: a * b) if isinstance(o, int) else NotImplemented
  def __rmul__(self, o): return self._bin(o, _c(o) * _c(self), lambda a, b: a * b, True) if isinstance(o, int) else NotImplemented
  def __neg__(self): return SymInt(-_c(self), -self.term)
  def __pos__(self): return self
  def __abs__(self): return SymInt(abs(_c(self)), z3.If(self.term < 0, -self.term, self.term))
  def _divisor_nonzero(self, d):
    if isinstance(d, SymInt): SymBool(_c(d) != 0, d.term != 0).__bool__()
  def __floordiv__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._divisor_nonzero(o)
    return self._bin(o, _c(self) // _c(o), _floordiv)
  def __rfloordiv__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._divisor_nonzero(self)
    return self._bin(o, _c(o) // _c(self), _floordiv, True)
  def __mod__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._divisor_nonzero(o)
    return self._bin(o, _c(self) % _c(o), lambda a, b: a - b * _floordiv(a, b))
  def __rmod__(self, o):
    if not isinstance(o, int): return NotImplemented
    self._divisor_nonzero(self)
    return self._bin(o, _c(o) % _c(self), lambda a, b: a - b * _floordiv(a, b), True)
  def __lshift__(self, o):
    if not isinstance(o, int): return NotImplemented
    k = o.pin() if isinstance(o, SymInt) else _c(o)
    return SymInt(_c(self) << k, self.term * (2 ** k))
  def __rlshift__(self, o): return _c(o) << self.pin() if isinstance(o, int) else NotImplemented
  def __rshift__(self, o):
    if not isinstance(o, int): return NotImplemented
    k = o.pin() if isinstance(o, SymInt) else _c(o)
    return SymInt(_c(self) >> k, _floordiv(self.term, z3.IntVal(2 ** k, self._ctx())))
  def __rrshift__(self, o): return _c(o) >> self.pin() if isinstance(o, int) else NotImplemented
  def __and__(self, o):
    _fits_bits(self); _fits_bits(o)
    return self._bin(o, _c(self) & _c(o), lambda a, b: _bits("and", a, b)) if isinstance(o, int) else NotImplemented
  def __rand__(self, o):
    _fits_bits(self); _fits_bits(o)
    return self._bin(o, _c(o) & _c(self), lambda a, b: _bits("and", a, b), True) if isinstance(o, int) else NotImplemented
  def __or__(self, o):
    _fits_bits(self); _fits_bits(o)
    return self._bin(o, _c(self) | _c(o), lambda a, b: _bits("or", a, b)) if isinstance(o, int) else NotImplemented
  def __ror__(self, o):
    _fits_bits(self); _fits_bits(o)
    return self._bin(o, _c(o) | _c(self), lambda a, b: _bits("or", a, b), True) if isinstance(o, int) else NotImplemented
  def __xor__(self, o):
    _fits_bits(self); _fits_bits(o)
    return self._bin(o, _c(self) ^ _c(o), lambda a, b: _bits("xor", a, b)) if isinstance(o, int) else NotImplemented
  def __rxor__(self, o):
    _fits_bits(self); _fits_bits(o)
    return self._bin(o, _c(o) ^ _c(self), lambda a, b: _bits("xor", a, b), True) if isinstance(o, int) else NotImplemented
  def __invert__(self): return SymInt(~_c(self), -self.term - 1)
  def __pow__(self, o, mod=None):
    if mod is not None or not isinstance(o, int): return NotImplemented
    return SymInt(_c(self) ** (k := o.pin() if isinstance(o, SymInt) else _c(o)), self.term ** k if k >= 0 else z3.RealVal(0))
  def __rpow__(self, o): return _c(o) ** self.pin() if isinstance(o, int) else NotImplemented
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
  def __bool__(self): return bool(SymBool(_c(self) != 0, self.term != 0))
  # where a plain number is needed: pin
  def __index__(self): return self.pin()
  def __int__(self): return self.pin()
  def __float__(self): return float(self.pin())
  def __trunc__(self): return self
  def __floor__(self): return self
  def __ceil__(self): return self
  def __round__(self, n=None): return self if n is None else round(self.pin(), n)
  def bit_length(self): return self.pin().bit_length()
  def __format__(self, spec): return format(self.pin(), spec)
  def __repr__(self): return f"Sym({int.__repr__(_c(self))})"
  __str__ = __repr__
  def __reduce__(self): raise TypeError("a SymInt is not serializable")

@contextlib.contextmanager
def keep_symbols():
  """Let SymInts through ``DType.const`` for int dtypes (tinygrad would call ``int()`` there, dropping the term: the
  mathematical value is the same). Restores tinygrad's method on exit."""
  from tinygrad.dtype import DType, dtypes
  orig = DType.const
  def const(self, val):
    if isinstance(val, SymInt) and (dtypes.is_int(self) or self == dtypes.weakint): return val
    return orig(self, val)
  DType.const = const
  try: yield
  finally: DType.const = orig
