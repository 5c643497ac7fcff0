"""Bounded model checking of the rules no integer or float instance decides: Invalid gates, memory, ranges, reductions,
vectors and weak-dtype commits -- every instance up to a stated size, every value in it.

``fuzz/rule_verify.py`` and ``fuzz/float_verify.py`` decide a rule for all values when an ALU expression fires it. The
rules over INDEX/LOAD/STORE/RANGE/REDUCE/STACK, Invalid, weak commits and the rules whose code looks into its operands
(``lt_folding``, ``fold_where_closure``, ``simplify_valid``) never fire on such an expression. Here each is checked
over a finite space, stated as ``BOUND`` and printed as ``bounded(k=2)`` in the table:

1. **Instances** (``BoundedBuilder``, the integer builder's walk over the UPat with concrete values): every alternative of
   the pattern, every free constant in ``INT_CONSTS``, every variable's bounds in ``BOUND_PAIRS`` (all within [-k, k]),
   a pattern variable either a variable or one of the index shapes in ``SHAPES`` over two shared variables (so a rule that
   reads its operand's structure sees ``v*2+w``, ``(v//2)*2 + v%2``, ...), buffers of ``BUF_LEN`` elements, range ends in
   ``RANGE_ENDS``, stacks of width 1 and 2 -- enumerated by ``rule_verify.plans``; each must pass tinygrad's own
   ``type_verify``. Where that space is too large to enumerate (its cap), a smaller one of ``SPACES`` is: k=1 (bounds and
   constants within [-1, 1]), then plain pattern variables (a variable, a constant or a sized variable taken as weak),
   then one bound pair; the table prints the space each rule and dtype was checked in.
2. **Every value**: both sides are evaluated by the numpy spec (``ref.elementwise``) at *every* assignment of the
   instance's variables in their bounds (floats at ``FLOAT_VALUES``: NaN, +-inf, +-0, ...), every free range index, with
   buffers holding distinct values (so any change of address shows as a change of value) -- all rows at once.
3. **Refinement**: where ``before`` is defined, ``after`` is defined and equal; Invalid is a value of its own (a masked
   lane must stay masked, a live one live); a store's effect is the buffer's contents after it. Checked under both
   readings of signed overflow. A refutation is **confirmed** by substituting the counterexample's values as constants
   and evaluating both sides again, alone.

Verdicts per (rule, dtype): ``bounded`` (every instance of the space, every value: no counterexample), ``refuted``
(confirmed), ``unknown`` (an op the evaluator has no semantics for -- uopcheck's limit, said so), ``n/a`` (no instance
fires). Rules whose every root is AFTER/END/GROUP/SINK order or group effects and have no value semantics: ``n/a`` with
that reason (``spec.optable.ORDERING_OPS``: the op table's ``orders_only``)."""
from __future__ import annotations
from typing import Any
import itertools
from dataclasses import dataclass, field
import numpy as np
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp, UPat, PatternMatcher, AxisType
from tinygrad.dtype import DType, dtypes, Invalid, AddrSpace
from uopcheck.fuzz.rule_verify import Rule, Builder, NoInstance, Decision, plans, unused_context, estimate_plans
from uopcheck.spec.alu import Lanes
from uopcheck.spec.errors import SpecError
from uopcheck.spec.optable import ORDERING_OPS
from uopcheck.spec.numpy_dtypes import np_dtype, const_array
from uopcheck.ref.elementwise import alu_node, commit, bitcast_node, reduce_lanes
from uopcheck.ref.kernel_interp import render_expr
from uopcheck.fuzz.float_check import same_datum

K = 2
BOUND_PAIRS = ((0, 2), (-2, 2), (1, 2), (-2, -1), (0, 0))     # every variable's (vmin, vmax): all within [-K, K]
INT_CONSTS = (1, 2, 0, -1)                                     # every free integer constant
FLOAT_VALUES = (0.0, -0.0, 1.0, -2.5, float("inf"), -float("inf"), float("nan"))
RANGE_ENDS = (3, 1)
BUF_LEN = 4
STACK_WIDTHS = (2, 1)
SHAPES = ("var", "v*2+w", "(v//2)*2+v%2", "v%2", "v*2", "v+w", "const", "(weakint)int")  # what a weakint pattern variable may be
BOOL_SHAPES = ("var", "v<1", "v<2&w<2")                        # what a bool pattern variable may be

@dataclass(frozen=True)
class Space:
  """One stated bounded space: what a variable's bounds, a free constant and a pattern variable may be (the rest --
  floats, ranges, buffers, stacks -- is the same in every space), and ``cap``, the most plans it is enumerated to. ``label``
  is what the table prints: bounded(k=2)."""
  label: str
  pairs: tuple[tuple[int, int], ...]
  consts: tuple[int, ...]
  shapes: tuple[str, ...]
  bool_shapes: tuple[str, ...]
  cap: int
  def describe(self) -> str:
    return f"{self.label}: bounds {list(self.pairs)}, constants {list(self.consts)}, pattern variables {'/'.join(self.shapes)}, " \
           f"bools {'/'.join(self.bool_shapes)}"

# The spaces in order, each smaller than the one before: a rule at a dtype is checked in the first one whose plans all fit
# in its cap, and the table prints that one's label (k=1's bounds are within [-1, 1], so not all among k=2's). A space whose
# estimated plans (``estimate_plans``) pass twice its cap is not enumerated. The last, smallest one has a larger cap:
# ``symbolic.py:249`` (19 ops over two wheres of four pattern variables) has 10,003 plans at weakint even there.
SPACES = (Space("k=2", BOUND_PAIRS, INT_CONSTS, SHAPES, BOOL_SHAPES, 8000),
          Space("k=1", ((0, 1), (-1, 1), (0, 0)), (1, 0, -1), SHAPES, BOOL_SHAPES, 8000),
          Space("k=1,plain", ((0, 1), (-1, 1)), (1, 0, -1), ("var", "const", "(weakint)int"), ("var",), 8000),
          Space("k=1,minimal", ((-1, 1),), (1, -1), ("var", "const", "(weakint)int"), ("var",), 16000))
ESTIMATE_PROBES = 200                                          # random descents that estimate a space's plans
BOUND = "; ".join(s.describe() for s in SPACES) + f"; in every space: floats {len(FLOAT_VALUES)} values, ranges of " \
        f"{'/'.join(map(str, RANGE_ENDS))}, buffers of {BUF_LEN}, stacks of {'/'.join(map(str, STACK_WIDTHS))}"
DTYPES = (dtypes.weakint, dtypes.int32, dtypes.float32)
MAX_ROWS = 200_000

# ** instances **

def _is_var(p:UPat) -> bool: return p.op is None and not p.is_any

class BoundedBuilder(Builder):
  """A concrete instance of a UPat: every value a choice point, so ``plans`` enumerates the bounded space."""
  KIND = "bounded"
  def __init__(self, plan:tuple[int, ...], space:Space=SPACES[0]):
    super().__init__(unused_context(), plan, {})
    self.space = space
    self.pool: list[UOp] = []      # the shared index variables v, w
    self.ranges: list[UOp] = []    # ranges a pattern variable may read (a REDUCE's own)
    self.bools: list[UOp] = []     # conditions built so far: a pattern variable may read one (where-closure folding)
    self.nbufs = 0
    self.before: UOp|None = None   # the instance built (None: NoInstance), for verify_bounded_rule

  def dtype_choices(self) -> list[DType]: return [self.main, *DTYPES, dtypes.bool, dtypes.int64, dtypes.weakfloat]

  def enter(self, p:UPat, dt:DType, depth:int) -> tuple[UOp|None, DType]:
    main = getattr(self, "main", None)   # the integer walk enters the root again: the instance's dtype stays the first
    out = super().enter(p, dt, depth)
    if main is not None: self.main = main
    return out

  def _var(self, dt:DType) -> UOp:
    self.nvars += 1
    if dt == dtypes.bool: return UOp.variable(f"b{self.nvars}", False, True, dtypes.bool)
    if dtypes.is_float(dt): return UOp.variable(f"f{self.nvars}", -float("inf"), float("inf"), dt, param=True)
    lo, hi = self.choose(list(self.space.pairs))
    return UOp.variable(f"v{self.nvars}", lo, hi, dt, param=True)   # a kernel's form of a Variable (an ALU PARAM: irreducible)

  def _pooled(self, i:int) -> UOp:
    while len(self.pool) <= i: self.pool.append(self._var(dtypes.weakint))
    return self.pool[i]

  def variable(self, dt:DType) -> UOp:
    if dt == dtypes.bool:
      shape = self.choose(list(self.space.bool_shapes))
      if shape == "var": b = self._var(dt)
      else:
        v, w = self._pooled(0), self._pooled(1)
        b = v < 1 if shape == "v<1" else (v < 2) & (w < 2)
      self.bools.append(b)
      return b
    if dt != dtypes.weakint:
      kind = self.choose(["var", "const"] + (["range"] if self.ranges and dt not in dtypes.weaks else []))
      if kind == "const": return self.const(dt)
      if kind == "range": return self.ranges[-1].cast(dt)
      return self._var(self.choose([dt, dtypes.weakint]) if dt in (dtypes.int32, dtypes.int64) else dt)
    shape = self.choose(list(self.space.shapes) + (["range"] if self.ranges else []) + (["c?v:w"] if self.bools else []))
    if shape == "var": return self._var(dt)
    if shape == "const": return self.const(dt)
    if shape == "(weakint)int": return self._var(dtypes.int32).cast(dtypes.weakint)   # a sized value taken as weak (weak lowering)
    if shape == "range": return self.ranges[-1]
    if shape == "c?v:w": return self.bools[-1].where(self._pooled(0), self._pooled(1))
    v, w = self._pooled(0), self._pooled(1)
    return {"v*2+w": lambda: v*2+w, "(v//2)*2+v%2": lambda: (v//2)*2+v % 2, "v%2": lambda: v % 2, "v*2": lambda: v*2,
            "v+w": lambda: v+w}[shape]()

  def const(self, dt:DType, arg:Any=None) -> UOp:
    if arg is Invalid: return UOp.const(Invalid)
    if isinstance(arg, bool): return UOp.const(arg, dtypes.bool)   # ``.ne(True)``: a bool whatever the context
    if arg is not None and not isinstance(arg, tuple): return UOp.const(arg, dt)
    if dt == dtypes.bool: return UOp.const(self.choose([False, True]), dt)
    if dtypes.is_float(dt): return UOp.const(self.choose([1.0, 0.0, -2.5]), dt)
    return UOp.const(self.choose([c for c in self.space.consts if dt in dtypes.weaks or dt.min <= c <= dt.max]), dt)   # constants the dtype holds

  def buffer(self, dt:DType) -> UOp:
    self.nbufs += 1
    edt = dt if dt not in dtypes.weaks and dt != dtypes.bool else self.choose([dtypes.float32, dtypes.int32])
    return UOp.param(self.nbufs - 1, edt, (BUF_LEN,))

  def index(self, p:UPat|None, dt:DType, depth:int) -> UOp:
    kids = list(p.src[0]) if p is not None and p.src is not None and not isinstance(p.src[0], itertools.repeat) else []
    buf = self.build(kids[0], dt, depth + 1) if kids and not _is_var(kids[0]) else self._named_if(kids[0] if kids else None, self.buffer(dt))
    if buf.op is not Ops.PARAM: raise NoInstance("an INDEX of a non-buffer")
    if len(kids) > 1: idx = self.build(kids[1], self.choose([dtypes.weakint, dtypes.int64, dtypes.int32]), depth + 1)
    else:
      idx = self._pooled(0)
      if self.choose(["plain", "gated"]) == "gated": idx = idx.valid(self.variable(dtypes.bool))
    return buf.index(idx)

  def _named_if(self, p:UPat|None, u:UOp) -> UOp: return self._named(p, u) if p is not None else u

  def _address(self, kids:list[UPat], dt:DType, depth:int) -> UOp:
    """a LOAD's or STORE's first source: its own pattern, or (a pattern variable, or none) an INDEX built here"""
    if kids and not _is_var(kids[0]): idx = self.build(kids[0], dt, depth + 1)
    else: idx = self._named_if(kids[0] if kids else None, self.index(None, dt, depth))
    if idx.op is not Ops.INDEX: raise NoInstance("a LOAD or STORE of a non-INDEX")
    return idx

  def build(self, p:UPat, dt:DType, depth:int=0) -> UOp:
    done, dt = self.enter(p, dt, depth)
    if done is not None: return done
    if p.op is None: return self._named(p, self.variable(dt))
    op = self.choose(sorted(p.op, key=lambda o: o.value))
    kids = self._kids(p, op) if op not in (Ops.INDEX, Ops.STACK, Ops.REDUCE, Ops.LOAD, Ops.STORE) else \
           (list(p.src[0]) if p.src is not None and not isinstance(p.src[0], itertools.repeat) else [])
    if op is Ops.CONST: return self._named(p, self.const(dt, p.arg))
    if op is Ops.PARAM: return self._named(p, self.buffer(dt))
    if op is Ops.INDEX: return self._named(p, self.index(p, dt, depth))
    if op is Ops.LOAD:
      idx = self._address(kids, dt, depth)
      alt = [self.build(kids[1], idx.dtype, depth + 1)] if len(kids) > 1 else \
            ([self._var(idx.dtype)] if not p.strict_length and self.choose(["plain", "alt"]) == "alt" else [])
      return self._named(p, UOp(Ops.LOAD, idx.dtype, (idx, *alt)))
    if op is Ops.STORE:
      idx = self._address(kids, dt, depth)
      val = self.build(kids[1], idx.dtype, depth + 1) if len(kids) > 1 else self._var(idx.dtype)
      return self._named(p, UOp(Ops.STORE, dtypes.void, (idx, val)))
    if op is Ops.STACK:
      width = self.choose(list(STACK_WIDTHS))
      one = p.src[0] if p.src is not None and isinstance(p.src[0], itertools.repeat) else None
      pats = [next(iter(one))] * width if one is not None else (kids or [UPat()] * width)
      srcs = [self.build(k, dt, depth + 1) for k in pats]
      return self._named(p, UOp(Ops.STACK, srcs[0].dtype, tuple(srcs)))
    if op is Ops.RANGE:
      end = self.build(kids[0], dtypes.weakint, depth + 1) if kids else UOp.const(self.choose(list(RANGE_ENDS)), dtypes.weakint)
      return self._named(p, UOp(Ops.RANGE, dtypes.weakint, (end,), arg=(len(self.env) + 10, AxisType.LOOP)))
    if op is Ops.REDUCE:
      r = UOp(Ops.RANGE, dtypes.weakint, (UOp.const(self.choose(list(RANGE_ENDS)), dtypes.weakint),), arg=(len(self.ranges), AxisType.REDUCE))
      self.ranges.append(r)
      body = self.build(kids[0], dt, depth + 1) if kids else self.variable(dt)
      if r not in body.toposort(): raise NoInstance("a REDUCE whose body does not read its range")
      rop = p.arg[0] if isinstance(p.arg, tuple) else self.choose([Ops.ADD, Ops.MUL, Ops.MAX])
      return self._named(p, UOp(Ops.REDUCE, body.dtype, (body, r), arg=(rop, 0)))
    if op is Ops.BITCAST and dt in dtypes.weaks: raise NoInstance("a weak BITCAST")
    if op in (Ops.BITCAST, Ops.TRUNC) or (op in GroupOp.Unary and dt in dtypes.weaks):
      k0 = kids[0] if kids else UPat()
      inner = self._named(k0, self._var(dt)) if op is Ops.BITCAST and _is_var(k0) and k0.name not in self.env else self.build(k0, dt, depth + 1)
      out_dt = dt if op is not Ops.BITCAST else self.choose([d for d in (dtypes.int32, dtypes.float32, dtypes.uint32) if d != inner.dtype])
      return self._named(p, UOp(op, out_dt, (inner,), arg=out_dt if op is Ops.BITCAST else None))
    if op in (Ops.AFTER, Ops.END, Ops.GROUP, Ops.SINK, Ops.NOOP, Ops.SHRINK) or op not in set(GroupOp.ALU) | {Ops.CAST}:
      raise NoInstance(f"{op.name} instances are not built")
    arity = 3 if op in GroupOp.Ternary else 2 if op in GroupOp.Binary else 1
    if op in GroupOp.ALU and p.src is not None and not isinstance(p.src[0], itertools.repeat) and len(p.src[0]) != arity:
      raise NoInstance(f"{op.name} takes {arity} operands, the pattern gives {len(p.src[0])}")
    saved = p.op   # the integer walk builds ALU and CAST nodes: hand it the one op chosen here
    try:
      p.op = (op,)
      u = super().build(p, dt, depth)
      if u.op is Ops.CAST and u.src[0].op is Ops.INDEX: raise NoInstance("a cast pointer is outside the bounded space")
      if u.op in GroupOp.Comparison and dtypes.is_float(u.src[0].dtype) != dtypes.is_float(u.src[1].dtype):
        raise NoInstance("a comparison of a float with an int")
      return u
    finally: p.op = saved

# ** evaluation: every row of the bounded space at once **

@dataclass
class Lane:
  """one scalar per row: the value, undefined rows, Invalid rows, rows undefined only under C's signed overflow"""
  value: np.ndarray
  undefined: np.ndarray
  invalid: np.ndarray
  ub: np.ndarray

@dataclass
class Memory:
  """every buffer's contents after the instance's effects, per row: slot -> (values (rows, BUF_LEN), undefined)"""
  bufs: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

@dataclass
class Address:
  slot: int
  index: Lane

class Unsupported(Exception): pass

def _grid_columns(us:list[UOp]) -> tuple[list[UOp], list[np.ndarray]]:
  """the free symbols of the instance (variables, buffers' none, ranges no REDUCE binds) and each one's values"""
  syms: list[UOp] = []
  bound: set[UOp] = set()
  for u in us:
    for x in u.toposort():
      if x.op is Ops.REDUCE: bound |= set(x.src[1:])
  for u in us:
    for x in u.toposort():
      if x in syms: continue
      if (x.op in (Ops.BUFFER, Ops.PARAM)) and x.arg.addrspace is AddrSpace.ALU: syms.append(x)
      elif x.op is Ops.RANGE and x not in bound and not any(s.op is Ops.RANGE and s.arg == x.arg for s in syms): syms.append(x)
  vals = []
  for s in syms:
    if s.op is Ops.RANGE:
      end = s.src[0]
      hi = int(end.vmax) if end.op is not Ops.CONST else int(end.arg)
      vals.append(np.arange(0, max(hi, 0), dtype=np.int64))
    elif s.dtype == dtypes.bool: vals.append(np.array([False, True]))
    elif dtypes.is_float(s.dtype): vals.append(np.array(FLOAT_VALUES, dtype=np_dtype(s.dtype)))
    else:
      lo, hi = s.arg.vmin_vmax
      vals.append(np.arange(int(lo), int(hi) + 1, dtype=np.int64))
  return syms, vals

class Evaluator:
  """Evaluate instances over rows: each row one assignment of the free symbols (``rows``: symbol -> column)."""
  def __init__(self, rows:dict[UOp, np.ndarray], n:int):
    self.rows, self.n = rows, n
    self.memo: dict[tuple[UOp, tuple], object] = {}

  def contents(self, buf:UOp) -> tuple[np.ndarray, np.ndarray]:
    """a buffer's first contents: distinct values (so reading another address reads another value)"""
    base = np.arange(BUF_LEN) + 10 + 100 * buf.arg.slot
    v = np.broadcast_to(base.astype(np_dtype(buf.dtype)), (self.n, BUF_LEN)).copy()
    return v, np.zeros((self.n, BUF_LEN), bool)

  def lane(self, value:Any, undefined:Any=False, invalid:Any=False, ub:Any=False) -> Lane:
    def rows(x):
      return np.broadcast_to(np.asarray(x), (self.n,)).copy()
    return Lane(rows(value), rows(undefined), rows(invalid), rows(ub))

  def ev(self, u:UOp, bind:tuple=()) -> Any:
    key = (u, bind)
    if key in self.memo: return self.memo[key]
    out = self._ev(u, bind)
    self.memo[key] = out
    return out

  def _ev(self, u:UOp, bind:tuple):
    op, env = u.op, dict(bind)
    if u in env: return self.lane(np.int64(env[u]))
    if u in self.rows: return self.lane(self.rows[u])
    if op is Ops.CONST:
      if u.arg is Invalid: return self.lane(np.int64(0), invalid=True)
      return self.lane(const_array(u.arg, u.dtype) if u.dtype not in dtypes.weaks else np.asarray(u.arg))
    if op is Ops.PARAM and u.arg.addrspace is AddrSpace.GLOBAL: return u
    if op is Ops.STACK: return tuple(self.ev(s, bind) for s in u.src)
    if op is Ops.NOOP: return Memory()
    if op in (Ops.SINK, Ops.GROUP):
      mem = Memory()
      for s in u.src:
        m = self.ev(s, bind)
        if not isinstance(m, Memory): raise Unsupported(f"{op.name} of a value")
        mem = self._merge(mem, m)
      return mem
    if op is Ops.INDEX:
      buf = self.ev(u.src[0], bind)
      if not isinstance(buf, UOp) or len(u.src) != 2: raise Unsupported("INDEX of a non-buffer or with a gate operand")
      return Address(buf.arg.slot, self._scalar(self.ev(u.src[1], bind)))
    if op is Ops.LOAD:
      a = self.ev(u.src[0], bind)
      if not isinstance(a, Address): raise Unsupported("LOAD of a non-address")
      buf = self._buf(u.src[0])
      val = self._read(buf, a)
      if len(u.src) > 1:
        alt = self._scalar(self.ev(u.src[1], bind))
        m = a.index.invalid
        val = Lane(np.where(m, alt.value, val.value), np.where(m, alt.undefined, val.undefined), np.where(m, alt.invalid, val.invalid),
                   np.where(m, alt.ub, val.ub))
      return val
    if op is Ops.STORE:
      a = self.ev(u.src[0], bind)
      if not isinstance(a, Address) or len(u.src) != 2: raise Unsupported("STORE of a non-address")
      buf, val = self._buf(u.src[0]), self._scalar(self.ev(u.src[1], bind))
      if u.src[1].dtype != buf.dtype:   # a STORE commits its value at the buffer's dtype (spec cast: out of range is undefined)
        c = commit(Lanes(val.value, val.undefined, val.ub), u.src[1].dtype, buf.dtype)
        val = Lane(np.asarray(c.value), np.asarray(c.undefined), val.invalid, np.asarray(c.ub_overflow))
      return self._write(buf, a, val)
    if op is Ops.REDUCE:
      ranges = u.src[1:]
      ends = [int(r.src[0].arg) for r in ranges]
      parts = [self._scalar(self.ev(u.src[0], bind + tuple(zip(ranges, idx)))) for idx in itertools.product(*[range(e) for e in ends])]
      if not parts: raise Unsupported("an empty REDUCE")
      x = Lanes(np.stack([p.value for p in parts], -1), np.stack([p.undefined for p in parts], -1), np.stack([p.ub for p in parts], -1))
      r = reduce_lanes(x, (-1,), u.arg[0], u.dtype)
      return Lane(np.asarray(r.value), np.asarray(r.undefined), np.any(np.stack([p.invalid for p in parts], -1), -1), np.asarray(r.ub_overflow))
    srcs = [self.ev(s, bind) for s in u.src]
    if any(isinstance(s, tuple) for s in srcs):   # an ALU over stacks: lane by lane
      width = max(len(s) for s in srcs if isinstance(s, tuple))
      return tuple(self._alu(u, [(s[i] if len(s) > 1 else s[0]) if isinstance(s, tuple) else s for s in srcs]) for i in range(width))
    if any(not isinstance(s, Lane) for s in srcs): raise Unsupported(f"{op.name} of a non-value")
    return self._alu(u, srcs)

  def _alu(self, u:UOp, srcs:list[Lane]) -> Lane:
    op = u.op
    ls = [Lanes(s.value, s.undefined, s.ub) for s in srcs]
    inval = np.zeros(self.n, bool)
    for s in srcs: inval = inval | s.invalid
    if op is not Ops.WHERE and inval.all(): return self.lane(np.int64(0), invalid=True)   # Invalid poisons whatever the op
    try:
      if op is Ops.CAST: r = commit(ls[0], u.src[0].dtype, u.dtype)
      elif op is Ops.BITCAST: r = bitcast_node(u, ls[0])
      elif op is Ops.TRUNC and not dtypes.is_float(u.dtype): r = ls[0]   # an integer is its own truncation
      elif op in GroupOp.ALU: r = alu_node(u, ls)
      else: raise Unsupported(f"no value semantics here for {op.name}")
    except SpecError as e: raise Unsupported(f"{op.name}: {e}") from None
    if op is Ops.WHERE:   # Invalid follows the branch taken; an Invalid condition poisons
      c = np.asarray(srcs[0].value, bool)
      inval = srcs[0].invalid | np.where(c, srcs[1].invalid, srcs[2].invalid)
    return Lane(np.broadcast_to(r.value, (self.n,)).copy(), np.broadcast_to(r.undefined, (self.n,)).copy(), inval,
                np.broadcast_to(r.ub_overflow, (self.n,)).copy())

  @staticmethod
  def _scalar(x) -> Lane:
    if isinstance(x, tuple) and len(x) == 1: x = x[0]
    if not isinstance(x, Lane): raise Unsupported("a value where a scalar is needed")
    return x

  @staticmethod
  def _buf(idx:UOp) -> UOp:
    i = idx.src[0] if idx.op is Ops.CAST else idx
    return i.src[0]

  def _read(self, buf:UOp, a:Address) -> Lane:
    vals, undef = self.contents(buf)
    i = np.asarray(a.index.value, np.int64)
    live = ~a.index.invalid & ~a.index.undefined
    oob = live & ((i < 0) | (i >= BUF_LEN))
    safe = np.clip(i, 0, BUF_LEN - 1)
    rows = np.arange(self.n)
    return Lane(np.where(live, vals[rows, safe], np.zeros((), vals.dtype)), a.index.undefined | oob | (live & undef[rows, safe]),
                np.zeros(self.n, bool), a.index.ub.copy())

  def _write(self, buf:UOp, a:Address, val:Lane) -> Memory:
    vals, undef = self.contents(buf)
    i = np.asarray(a.index.value, np.int64)
    live = ~a.index.invalid & ~a.index.undefined & ~val.invalid
    oob = live & ((i < 0) | (i >= BUF_LEN))
    ok = live & ~oob
    rows = np.arange(self.n)[ok]
    vals[rows, i[ok]] = np.asarray(val.value)[ok].astype(vals.dtype)
    undef[rows, i[ok]] = val.undefined[ok]
    bad = a.index.undefined | oob            # a store through an undefined or out-of-bounds address: the whole row undefined
    undef[bad] = True
    return Memory({buf.arg.slot: (vals, undef)})

  def with_every_buffer(self, x:Any, *us:UOp) -> Any:
    """a store the rewrite removed leaves its buffer as it was: every buffer of either side is in the memory compared"""
    if not isinstance(x, Memory): return x
    bufs = {b.arg.slot: b for u in us for b in u.toposort() if b.op is Ops.PARAM and b.arg.addrspace is AddrSpace.GLOBAL}
    return Memory({s: x.bufs[s] if s in x.bufs else self.contents(b) for s, b in bufs.items()})

  @staticmethod
  def _merge(a:Memory, b:Memory) -> Memory:
    if set(a.bufs) & set(b.bufs): raise Unsupported("two effects on one buffer in a group")
    return Memory({**a.bufs, **b.bufs})

def rows_of(us:list[UOp]) -> tuple[dict[UOp, np.ndarray], int, np.ndarray]:
  """every assignment of the instances' free symbols, one row each; a free range's rows past its (variable) end are
  infeasible"""
  syms, vals = _grid_columns(us)
  n = int(np.prod([len(v) for v in vals])) if vals else 1
  if n > MAX_ROWS: raise Unsupported(f"{n} rows")
  grids = np.meshgrid(*vals, indexing="ij") if vals else []
  rows = {s: g.reshape(-1) for s, g in zip(syms, grids)}
  # a loop is its axis: a rewrite that restates a RANGE's end (the same value, another expression) keeps the same loop index
  free = [x for u in us for x in u.toposort() if x.op is Ops.RANGE and x not in rows and any(s.op is Ops.RANGE and s.arg == x.arg for s in syms)]
  for x in free: rows[x] = rows[next(s for s in syms if s.op is Ops.RANGE and s.arg == x.arg)]
  feasible = np.ones(n, bool)
  ev = Evaluator(rows, n)
  for s in [s for s in rows if s.op is Ops.RANGE]:   # a range's index is below its end on every row that runs
    end = Evaluator._scalar(ev.ev(s.src[0]))
    feasible &= ~end.undefined & ~end.invalid & (rows[s] < np.asarray(end.value).astype(np.int64))
  return rows, n, feasible

# ** refinement **

def wrong_rows(before:Any, after:Any, ub_is_undefined:bool) -> np.ndarray|None:
  """rows where ``after`` does not refine ``before`` (None: the two are not comparable)"""
  if isinstance(before, tuple) or isinstance(after, tuple):
    # a scalar or a 1-wide STACK stands for its broadcast (tinygrad's own rules read it so: symbolic.py:75, 443)
    bs = before if isinstance(before, tuple) else (before,)
    as_ = after if isinstance(after, tuple) else (after,)
    width = max(len(bs), len(as_))
    bs, as_ = (bs * width if len(bs) == 1 else bs), (as_ * width if len(as_) == 1 else as_)
    if len(bs) != len(as_): return None
    parts = [wrong_rows(b, a, ub_is_undefined) for b, a in zip(bs, as_)]
    if any(p is None for p in parts): return None
    return np.any(np.stack(parts), 0)   # type: ignore[arg-type]
  if isinstance(before, Memory) and isinstance(after, Memory):
    bad = None
    for slot in set(before.bufs) | set(after.bufs):
      (bv, bu), (av, au) = before.bufs[slot], after.bufs[slot]
      w = (~bu & (au | ~same_datum(bv, av))).any(-1)
      bad = w if bad is None else bad | w
    return bad if bad is not None else np.zeros(0, bool)
  if isinstance(before, Address) and isinstance(after, Address):   # the same element of the same buffer, where one is read
    if before.slot != after.slot: return np.ones(len(before.index.value), bool)
    i = before.index
    oob = ~i.invalid & ((np.asarray(i.value).astype(np.int64) < 0) | (np.asarray(i.value).astype(np.int64) >= BUF_LEN))
    return wrong_rows(Lane(i.value, i.undefined | oob, i.invalid, i.ub), after.index, ub_is_undefined)
  if isinstance(before, Lane) and isinstance(after, Lane):
    bu = before.undefined | (before.ub if ub_is_undefined else False)
    au = after.undefined | (after.ub if ub_is_undefined else False)
    same_value = before.invalid | same_datum(before.value, after.value)
    return ~bu & (au | (before.invalid != after.invalid) | ~same_value)
  return None

@dataclass
class BoundedVerdict:
  verdict: Decision            # bounded / refuted / unknown / n/a
  instances: int = 0
  fired: int = 0
  complete: bool = True        # every instance of the bounded space was enumerated (its cap not reached)
  space: str = ""              # the label of the space checked (``SPACES``)
  why: str = ""
  counterexample: dict|None = None

def check_instance(before:UOp, after:UOp) -> tuple[str, dict|None, str]:
  """(bounded / refuted / unknown, the counterexample, why) for one fired instance"""
  try:
    rows, n, feasible = rows_of([before, after])
    ev = Evaluator(rows, n)
    b, a = ev.with_every_buffer(ev.ev(before), before, after), ev.with_every_buffer(ev.ev(after), before, after)
    for reading, ub_undef in (("undefined", True), ("wrap", False)):
      w = wrong_rows(b, a, ub_undef)
      if w is None: return Decision.UNKNOWN, None, f"before is {type(b).__name__}, after {type(a).__name__}: not comparable"
      w = w & feasible
      if w.any():
        r = int(np.argmax(w))
        asg = {_name(s): _py(col[r]) for s, col in rows.items()}
        cex: dict[str, object] = {"before": show_uop(before), "after": show_uop(after), "assignment": asg, "reading": reading,
               "value_before": _show(b, r), "value_after": _show(a, r)}
        cex["zero_sign_only"] = _zero_sign_only(b, a, r)
        ok, why = confirm(before, after, {s: col[r] for s, col in rows.items()}, ub_undef)
        cex["confirmed"], cex["confirm"] = ok, why
        if ok: return Decision.REFUTED, cex, (f"wrong at {asg} under the {reading} reading: {cex['value_before']} -> {cex['value_after']}" +
                                       (" (only the sign of a zero)" if cex["zero_sign_only"] else ""))
        return Decision.UNKNOWN, cex, f"unconfirmed: {why}"
    return Decision.BOUNDED, None, ""
  except Unsupported as e: return Decision.UNKNOWN, None, f"uopcheck's bounded evaluator: {e}"
  except (IndexError, ValueError, TypeError, KeyError, AttributeError, OverflowError, SpecError) as e:   # uopcheck's own failure: never a verdict
    return Decision.UNKNOWN, None, f"uopcheck's bounded evaluator failed: {type(e).__name__}: {str(e)[:100]}"

def confirm(before:UOp, after:UOp, at:dict[UOp, object], ub_undef:bool) -> tuple[bool, str]:
  """the row again, alone: every free symbol replaced by its value as a constant, both sides evaluated on one row"""
  subs = {s: (UOp.const(bool(v), s.dtype) if s.dtype == dtypes.bool else UOp.const(_py(v), s.dtype)) for s, v in at.items()}
  try:
    b1, a1 = before.substitute(subs), after.substitute(subs)
    ev = Evaluator({}, 1)
    w = wrong_rows(ev.with_every_buffer(ev.ev(b1), b1, a1), ev.with_every_buffer(ev.ev(a1), b1, a1), ub_undef)
  except Exception as e: return False, f"{type(e).__name__}: {str(e)[:100]}"
  if w is None or not w.any(): return False, "the substituted instance agrees"
  return True, "the substituted instance disagrees"

def _zero_sign_only(b, a, r:int) -> bool:
  """both sides are zeros at the row and only their signs differ (strict IEEE; 1/x or copysign would see it)"""
  if not (isinstance(b, Lane) and isinstance(a, Lane)) or b.undefined[r] or a.undefined[r] or b.invalid[r] or a.invalid[r]: return False
  x, y = np.asarray(b.value[r], np.float64), np.asarray(a.value[r], np.float64)
  return bool(x == 0 and y == 0 and np.signbit(x) != np.signbit(y))

def show_uop(u:UOp) -> str:
  """tinygrad's own one-line render where it has one, else a plain one (memory, ranges, reductions, stacks)"""
  try:
    r = u.render(simplify=False)
    if "UOp(" not in r: return r
  except Exception: pass
  names = {x: _name(x) if x.op is not Ops.RANGE else f"{_name(x)}<{render_expr(x.src[0], {})}" for x in u.toposort()
           if (x.op in (Ops.BUFFER, Ops.PARAM) and x.arg.addrspace is AddrSpace.ALU) or x.op is Ops.RANGE}
  return render_expr(u, names)

def _name(s:UOp) -> str:
  if s.op is Ops.RANGE: return f"r{s.arg[0]}"
  return s.arg.name

def _py(x): return np.asarray(x).item()

def _show(x, r:int) -> str:
  if isinstance(x, tuple): return "(" + ", ".join(_show(e, r) for e in x) + ")"
  if isinstance(x, Memory):
    return "{" + ", ".join(f"buf{s}: {[_py(e) for e in v[r]]}{' (undefined)' if u[r].any() else ''}" for s, (v, u) in x.bufs.items()) + "}"
  if isinstance(x, Lane):
    if x.undefined[r]: return "undefined"
    return "Invalid" if x.invalid[r] else repr(_py(x.value[r]))
  return type(x).__name__

# ** per rule **

def verify_bounded_rule(rule:Rule, cap:int|None=None) -> dict[str, BoundedVerdict]:
  """the bounded verdict per main dtype (weakint, int32, float32) of a rule no other verifier decides, in the first of
  ``SPACES`` whose plans all fit in its cap (or ``cap``, for every space) -- enumerating a space's plans costs a build each,
  checking an evaluation each fired instance: only the space chosen is checked. Where none fits, the first plans of the
  smallest, ``complete`` False."""
  pm = PatternMatcher([(rule.pat, rule.fxn)])
  out: dict[str, BoundedVerdict] = {}
  for dt in DTYPES:
    for space in SPACES:
      def make(plan, dt=dt, space=space, rng=None):
        b = BoundedBuilder(plan, space)
        b.rng = rng
        try: b.before = b.build(rule.pat, dt)
        except NoInstance: b.before = None   # its choices so far still branch: the next plans try the other alternatives
        except (AssertionError, RuntimeError, TypeError, ValueError, KeyError, IndexError, AttributeError):
          b.before = None   # tinygrad refused to build the node: not an instance
        return b
      # a space far past the cap is not enumerated (only the choice of space rests on the estimate, never a verdict)
      n = cap or space.cap
      if space is not SPACES[-1] and estimate_plans(lambda rng: make((), rng=rng), ESTIMATE_PROBES, f"{rule.key} {dt.name} {space.label}") > 2 * n:
        continue
      built = [b for _, b in plans(make, n)]
      if len(built) < n or space is SPACES[-1]: break
    v = _check_space(pm, dt, built)
    v.space = space.label
    v.complete = len(built) < n and v.verdict != Decision.REFUTED   # a refutation stops the checking: the space was not all run
    if v.verdict == Decision.BOUNDED and not v.complete: v.why = f"the first {n} plans of the bounded space {space.label}"
    if v.fired or v.verdict != Decision.NA: out[dt.name] = v
  return out

def _check_space(pm:PatternMatcher, dt:DType, built:list[BoundedBuilder]) -> BoundedVerdict:
  """every distinct, well-typed instance built at ``dt``: rewritten by the rule and, where it fired, checked at every value"""
  from uopcheck.spec.structural import verify
  v = BoundedVerdict(Decision.NA)
  shapes: set = set()
  for b in built:
    if b.before is None or b.before in shapes: continue   # UOps are hash-consed: the same instance is the same node
    # a pattern fixed to weakint (``dtype=dtypes.weakint``) built "for int32" is the weakint instance again: not int32's
    if dt != dtypes.weakint and all(x.dtype != dt for x in b.before.toposort()): continue
    shapes.add(b.before)
    try: verify(b.before, "full")
    except SpecError: continue
    v.instances += 1
    try: after = pm.rewrite(b.before, ctx={})
    except Exception as e:   # the rule raising on a well-typed instance
      v.verdict, v.why = Decision.UNKNOWN, f"the rule raised {type(e).__name__}: {str(e)[:80]} on {show_uop(b.before)[:80]}"
      continue
    if not isinstance(after, UOp) or after is b.before: continue
    v.fired += 1
    verdict, cex, why = check_instance(b.before, after)
    if verdict == Decision.REFUTED:
      v.verdict, v.counterexample, v.why = Decision.REFUTED, cex, why
      break
    if verdict == Decision.UNKNOWN: v.verdict, v.why = Decision.UNKNOWN, why
    elif v.verdict == Decision.NA: v.verdict = Decision.BOUNDED
  return v

def no_value_semantics(rule:Rule) -> str|None:
  """the reason a rule has no value semantics to check, or None: every root op orders or groups effects"""
  ops = rule.pat.op
  if ops is not None and set(ops) <= ORDERING_OPS:
    return f"{'/'.join(sorted(o.name for o in ops))} only orders or groups effects (no value semantics)"
  return None
