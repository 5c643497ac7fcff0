"""The reference interpreter for kernel ASTs, as rangeify makes them in tinygrad 0.14.0.

A kernel is a SINK of END(STORE(INDEX(PARAM, idx), value), RANGE...) trees; loads are INDEX(PARAM, idx) used
as values; REDUCE(op, value, RANGE...) folds over its ranges; an index may be WHERE(gate, expr, Invalid).
Every RANGE is one numpy axis of a grid, so each expression is an array broadcastable to the grid and the
whole kernel is evaluated at once -- the loop nest, written as broadcasting. Values follow ``uopcheck.spec``
(via ``ref.elementwise``); an index outside its buffer on a live lane is an error naming the kernel, the buffer,
the index expression and the range values -- never a silent wrap. Same independence rule as the tensor
interpreter: no tinygrad rewrite pass, codegen or runtime."""
from __future__ import annotations
from dataclasses import dataclass
from math import prod
from typing import cast
import numpy as np
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes, Invalid, AddrSpace, DType
from uopcheck.spec.errors import SpecError, KernelFault
from uopcheck.spec.structural import verify
from uopcheck.spec.optable import op_spec, check_typing, Stage
from uopcheck.spec.alu import Lanes
from uopcheck.spec.numpy_dtypes import np_dtype, round_to, const_array, order_dependent_sum, finite_abs, sum_may_overflow
from uopcheck.ref.elementwise import commit, alu_node, bitcast_node, reduce_lanes

@dataclass
class BufferState:
  """A kernel argument in reference storage: flat values, and which elements are undefined."""
  value: np.ndarray
  undefined: np.ndarray

  @staticmethod
  def of(value:np.ndarray, undefined:np.ndarray|None=None) -> "BufferState":
    v = np.asarray(value).reshape(-1)
    return BufferState(v.copy(), np.zeros(v.shape, bool) if undefined is None else np.asarray(undefined, bool).reshape(-1).copy())

def render_expr(u:UOp, names:dict[UOp, str]) -> str:
  """A plain-text rendering of an index expression (no tinygrad renderer: this stays independent)."""
  if u in names: return names[u]
  if u.op is Ops.CONST: return "Invalid" if u.arg is Invalid else repr(u.arg)
  if u.op is Ops.PARAM: return u.arg.name or f"p{u.arg.slot}"
  sym = {Ops.ADD: "+", Ops.MUL: "*", Ops.SUB: "-", Ops.FLOORDIV: "//", Ops.FLOORMOD: "%", Ops.CDIV: "/", Ops.CMOD: "%c", Ops.CMPLT: "<",
         Ops.CMPNE: "!=", Ops.CMPEQ: "==", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^", Ops.SHL: "<<", Ops.SHR: ">>"}
  if u.op in sym and len(u.src) == 2: return f"({render_expr(u.src[0], names)}{sym[u.op]}{render_expr(u.src[1], names)})"
  if u.op is Ops.WHERE: return f"({render_expr(u.src[0], names)} ? {render_expr(u.src[1], names)} : {render_expr(u.src[2], names)})"
  if u.op is Ops.MAX: return f"max({render_expr(u.src[0], names)}, {render_expr(u.src[1], names)})"
  if u.op is Ops.CAST: return f"({u.dtype}){render_expr(u.src[0], names)}"
  return f"{u.op.name}({', '.join(render_expr(s, names) for s in u.src)})"

def _share_axes(order:list[UOp], ranges:list[UOp]) -> tuple[dict[UOp, int], dict[UOp, frozenset]]:
  """Give each RANGE a grid axis; two ranges that are never open in one expression may share an axis (numpy caps the
  rank at 64 and some functions at 32, and a fused kernel -- a gradient norm over every weight -- can hold dozens of
  independent reductions). A range is open in a value from the RANGE up to the REDUCE or END that closes it."""
  open_in: dict[UOp, frozenset] = {}
  clash: dict[UOp, set] = {r: set() for r in ranges}
  for u in order:
    live = frozenset().union(*(open_in[s] for s in u.src)) if u.src else frozenset()
    if u.op is Ops.RANGE: live = live | {u}
    elif u.op is Ops.REDUCE: live = live - set(u.src[1:])
    elif u.op is Ops.END: live = live - set(u.src[1:])
    open_in[u] = live
    if len(live) > 1:
      for r in live: clash[r] |= live
  axis: dict[UOp, int] = {}
  for r in ranges:
    taken = {axis[o] for o in clash[r] if o in axis}
    axis[r] = next(i for i in range(len(ranges) + 1) if i not in taken)
  return axis, open_in

def sample_indices(end:int, k:int, rng:np.random.Generator) -> np.ndarray:
  """the indices of one output range a sampled run evaluates: both edges and ``k`` random interior ones, sorted"""
  picks = {0, end - 1} | ({int(x) for x in rng.integers(1, end - 1, k)} if end > 2 else set())
  return np.array(sorted(p for p in picks if 0 <= p < end), dtype=np.int64)

class KernelInterpreter:
  """Run one kernel AST on argument buffers (indexed by PARAM slot). ``run`` returns the new buffer states.

  ``sample=(k, seed)`` evaluates only sampled output lanes: each range an END closes (a store's loop, not a reduction's)
  runs over its two edges and ``k`` random indices (``sample_indices``), so the lanes evaluated are their product -- every
  corner and edge of the output plus random interior ones -- and a reduction lane still reads its whole reduction. Only
  the elements those lanes store are written (``written``: a mask per stored buffer); compare those alone."""
  def __init__(self, ast:UOp, name:str="kernel", var_vals:dict[str, int]|None=None, contract:bool=True,
               check_spec:bool=True, sample:tuple[int, int]|None=None):
    if ast.op is not Ops.SINK: raise SpecError.at(ast, "a kernel AST must be a SINK")
    self.ast, self.name, self.var_vals = ast, name, var_vals or {}
    self.sample_k: int|None = sample[0] if sample is not None else None
    self.sample_rng: np.random.Generator|None = np.random.default_rng(sample[1]) if sample is not None else None
    self.order = list(ast.toposort())
    if check_spec: verify(self.order, "kernel")  # tinygrad's own structural spec first (validation only)
    try:
      self.ranges = sorted([u for u in self.order if u.op is Ops.RANGE], key=lambda r: r.arg)
      self.axis, self.open_in = _share_axes(self.order, self.ranges)
      self.names = {r: f"r{'_'.join(str(a) for a in r.arg[:-1])}" for r in self.ranges}
      self.ndim = max(self.axis.values(), default=-1) + 1
      self.fused, self.deferred, _ = plan_contractions(self.order) if contract else (set(), set(), {})
      self.output_ranges = {r for u in self.order if u.op is Ops.END for r in u.src[1:] if r.op is Ops.RANGE}
    except Exception as e: raise SpecError(f"kernel {name}: malformed kernel AST: {type(e).__name__}: {e}") from None

  def lanes(self, u:UOp) -> int:
    """the lanes node ``u`` spans in a full run: the product of the ends of the ranges open in it (a RANGE: its own)"""
    def end(r:UOp) -> int: return int(r.src[0].arg) if r.src[0].op is Ops.CONST else int(r.src[0].vmax)
    return prod(end(r) for r in self.open_in[u] | ({u} if u.op is Ops.RANGE else set()))

  def widest(self, skip:set[UOp]|frozenset[UOp]=frozenset()) -> tuple[int, UOp|None]:
    """the node (not in ``skip``) a full run spans the most lanes at, and how many: a contraction's MUL spans its product
    (the einsum's work, M.N.K for a matmul), an elementwise kernel its output"""
    return max(((self.lanes(u), u) for u in self.order if u not in skip), key=lambda t: t[0], default=(0, None))

  def largest_buffer(self) -> int:
    """the element count of the kernel's largest global buffer argument"""
    return max((_param_size(p) for p in self.params().values()), default=1)

  def params(self) -> dict[int, UOp]:
    return {u.arg.slot: u for u in self.order if u.op is Ops.PARAM and u.arg.addrspace is AddrSpace.GLOBAL}

  def stored_slots(self) -> set[int]:
    return {p.arg.slot for u in self.order if u.op is Ops.STORE and u.src[0].op is Ops.INDEX and (p := _indexed_param(u.src[0])) is not None}

  def run(self, bufs:dict[int, BufferState]) -> dict[int, BufferState]:
    self.bufs = {k: BufferState(v.value.copy(), v.undefined.copy()) for k, v in bufs.items()}
    self.written = {k: np.zeros(v.value.shape, bool) for k, v in bufs.items()}
    self.vals: dict[UOp, Lanes] = {}
    for slot, p in self.params().items():
      if slot not in self.bufs: raise SpecError.at(p, f"kernel {self.name}: no buffer given for argument {slot}")
    for u in self.order:
      if u in self.deferred: continue  # a MUL only its REDUCE reads: evaluated inside the contraction
      try: self.vals[u] = self._eval(u)
      except SpecError: raise
      except Exception as e: raise SpecError.at(u, f"kernel {self.name}: reference evaluation failed", f"{type(e).__name__}: {e}") from None
    return self.bufs

  def _grid(self, x:Lanes) -> Lanes:
    """Give a value the grid's rank (scalars and rank-0 values become all-ones shapes)."""
    if np.ndim(x.value) == self.ndim: return x
    shp = (1,) * self.ndim
    return Lanes(np.reshape(x.value, shp), np.reshape(x.undefined, shp), np.reshape(x.ub_overflow, shp))

  def _eval(self, u:UOp):
    spec = op_spec(u.op)
    if Stage.KERNEL not in spec.stages:
      raise SpecError.at(u, f"kernel {self.name}: not allowed in a kernel AST", spec.out_of_scope or f"stages {sorted(s.value for s in spec.stages)}")
    if u.op in GroupOp.ALU and (broken := check_typing(u)) is not None: raise SpecError.at(u, f"kernel {self.name}: typing rule broken: {broken}")
    op = u.op
    if op is Ops.CONST:
      if u.arg is Invalid: return self._grid(Lanes(np.zeros((), np.bool_), np.ones((), bool), np.zeros((), bool)))
      v = const_array(u.arg, u.dtype)
      return self._grid(Lanes.ok(v))
    if op is Ops.RANGE:
      end = int(np.asarray(self.vals[u.src[0]].value).reshape(-1)[0])
      idx = np.arange(end, dtype=np.int64) if self.sample_rng is None or u not in self.output_ranges else \
            sample_indices(end, self.sample_k or 0, self.sample_rng)
      shp = [1] * self.ndim
      shp[self.axis[u]] = len(idx)
      return Lanes.ok(idx.reshape(shp))
    if op is Ops.PARAM:
      if u.arg.addrspace is AddrSpace.ALU:  # a scalar Variable
        if u.arg.name not in self.var_vals: raise SpecError.at(u, f"kernel {self.name}: variable {u.arg.name!r} has no value")
        return self._grid(Lanes.ok(np.array(self.var_vals[u.arg.name], dtype=np_dtype(u.dtype))))
      return None  # a buffer: read through INDEX
    if op is Ops.INDEX:
      if _indexed_param(u) is None:
        raise SpecError.at(u, f"kernel {self.name}: INDEX must be (PARAM, index) or (RESHAPE(PARAM, STACK of constant dims), one index per dim)")
      return None  # an address: LOAD/STORE read it, a value use reads through _load
    if op is Ops.STACK and all(s.op is Ops.CONST for s in u.src): return None   # a shape (RESHAPE's), never a value here
    if op is Ops.RESHAPE and u.src[0].op is Ops.PARAM and u.src[0].arg.addrspace is AddrSpace.GLOBAL and u.src[1].op is Ops.STACK:
      if prod(d := _dims(u)) > _param_size(u.src[0]):
        raise SpecError.at(u, f"kernel {self.name}: RESHAPE of buffer {u.src[0].arg.slot} to {d} is larger than its {_param_size(u.src[0])} elements")
      return None  # a buffer viewed with a shape: read through INDEX, one index per dim (the all-reduce's kernels)
    if op in (Ops.SINK, Ops.END): return None
    if op is Ops.STORE: return self._store(u)
    if op is Ops.REDUCE: return self._reduce(u)
    srcs = [self._value(s) for s in u.src]
    if op in GroupOp.ALU: return alu_node(u, srcs)
    if op is Ops.CAST: return commit(srcs[0], u.src[0].dtype, u.dtype)
    if op is Ops.BITCAST: return bitcast_node(u, srcs[0])
    if op is Ops.LOAD: return srcs[0]
    raise SpecError.at(u, f"kernel {self.name}: outside the kernel interpreter's scope: {spec.out_of_scope or 'no kernel-level evaluator'}")

  def _value(self, s:UOp) -> Lanes:
    if s.op is Ops.INDEX: return self._load(s)
    v = self.vals.get(s)
    if v is None: raise SpecError.at(s, f"kernel {self.name}: used as a value but it has none")
    return v

  def _flat_index(self, idx_uop:UOp) -> tuple[UOp, Lanes]:
    """an INDEX's flat position: (PARAM, idx) reads idx; (RESHAPE(PARAM, dims), i0, i1, ...) is row-major over dims"""
    if idx_uop.src[0].op is Ops.PARAM: return idx_uop.src[1], self._grid(self.vals[idx_uop.src[1]])
    dims, parts = _dims(idx_uop.src[0]), [self._grid(self.vals[i]) for i in idx_uop.src[1:]]
    pos, und = np.zeros((1,) * self.ndim, np.int64), np.zeros((1,) * self.ndim, bool)
    for d, part in zip(dims, parts):
      pos = pos * d + np.asarray(part.value).astype(np.int64)
      und = und | np.asarray(part.undefined, bool)
    return idx_uop.src[-1] if len(idx_uop.src) > 1 else idx_uop, Lanes(pos, und, np.zeros(np.shape(und), bool))

  def _address(self, idx_uop:UOp) -> tuple[int, np.ndarray, np.ndarray]:
    """(buffer slot, flat positions, live lanes) of an INDEX, checking bounds on every live lane."""
    slot = cast(UOp, _indexed_param(idx_uop)).arg.slot
    idx, iv = self._flat_index(idx_uop)
    live = ~np.asarray(iv.undefined, bool)
    pos = np.asarray(iv.value).astype(np.int64)
    size = self.bufs[slot].value.size
    oob = live & ((pos < 0) | (pos >= size))
    if oob.any():
      at = tuple(int(i) for i in np.argwhere(oob)[0])
      def value_of(r):
        return int(np.asarray(self.vals[r].value).reshape(-1)[at[self.axis[r]]]) if iv.value.shape[self.axis[r]] > 1 else 0
      rng = ", ".join(f"{self.names[r]}={value_of(r)}" for r in self.ranges if r in self.open_in[idx]) or "no ranges"
      bad = int(np.broadcast_to(pos, oob.shape)[at])
      raise KernelFault.at(idx_uop, f"kernel {self.name}: out-of-bounds INDEX on buffer {slot} (size {size})",
                         f"index {render_expr(idx, self.names)} = {bad} at {rng}")
    return slot, pos, live

  def _load(self, u:UOp) -> Lanes:
    slot, pos, live = self._address(u)
    b = self.bufs[slot]
    safe = np.where(live, pos, 0)
    return Lanes(b.value[safe], b.undefined[safe] | ~live, np.zeros(safe.shape, bool))

  def _store(self, u:UOp) -> None:
    if u.src[0].op is not Ops.INDEX or len(u.src) != 2: raise SpecError.at(u, f"kernel {self.name}: STORE must be (INDEX(PARAM, idx), value)")
    slot, pos, live = self._address(u.src[0])
    b = self.bufs[slot]
    val = commit(self._value(u.src[1]), u.src[1].dtype, u.src[0].dtype)
    shape = np.broadcast_shapes(np.shape(pos), np.shape(val.value), np.shape(live))
    pos, live = np.broadcast_to(pos, shape), np.broadcast_to(live, shape)
    v, und = np.broadcast_to(val.value, shape), np.broadcast_to(val.undefined, shape)
    p, vv, uu = pos[live], v[live], und[live]
    if p.size > 1 and np.bincount(p, minlength=0).max() > 1:  # several lanes write one element: they must agree, else it's a race
      order = np.argsort(p, kind="stable")
      ps, vs = p[order], vv[order]
      same = ps[1:] == ps[:-1]
      differ = same & ~((vs[1:] == vs[:-1]) | (np.isnan(vs[1:].astype(np.float64)) & np.isnan(vs[:-1].astype(np.float64))
                                              if vs.dtype.kind == "f" else False))
      if differ.any():
        raise KernelFault.at(u, f"kernel {self.name}: lanes write different values to one element of buffer {slot}",
                           f"element {int(ps[1:][differ][0])} (a race)")
    b.value[p] = vv.astype(b.value.dtype)
    b.undefined[p] = uu
    self.written[slot][p] = True
    return None

  def _contract(self, u:UOp) -> Lanes:
    """REDUCE(ADD, MUL(x, y)) as one float64 einsum over x and y: the grid-sized product (M*N*K for a matmul) is never
    built. Same definition as the general path except that products are not rounded to the dtype before the sum: a lane
    where one would overflow is undefined (``order_dependent_sum``), as the general path makes it."""
    mul = u.src[0]
    x, y = (commit(self._grid(self._value(a)), a.dtype, mul.dtype) for a in mul.src)
    if x.undefined.any() or y.undefined.any() or x.ub_overflow.any() or y.ub_overflow.any():
      self.vals[mul] = alu_node(mul, [x, y])  # masks need the lane-wise path
      return self._reduce_lanes(u, self.vals[mul])
    red = {self.axis[r]: int(np.asarray(self.vals[r].value).shape[self.axis[r]]) for r in u.src[1:]}
    def operand(v:np.ndarray) -> tuple[np.ndarray, list[int]]:
      a, keep = broadcast_free(v)
      return np.asarray(a, dtype=np.float64), keep
    (xa, xk), (ya, yk) = operand(np.asarray(x.value)), operand(np.asarray(y.value))
    out_axes = sorted((set(xk) | set(yk)) - set(red))
    def sub(axes):
      return "".join(LETTERS[i] for i in axes)
    def contract(xa:np.ndarray, ya:np.ndarray) -> np.ndarray:
      with np.errstate(all="ignore"):
        r = np.einsum(f"{sub(xk)},{sub(yk)}->{sub(out_axes)}", xa, ya, optimize=True)
        for i, n in red.items():  # a reduced range neither factor reads: the sum is n copies
          if i not in xk and i not in yk: r = r * n
      return np.asarray(r).reshape(shape)
    shape = [1] * self.ndim
    for i in out_axes: shape[i] = xa.shape[xk.index(i)] if i in xk else ya.shape[yk.index(i)]
    ax, ay = finite_abs(xa), finite_abs(ya)
    may = sum_may_overflow(ax.max(initial=0) * ay.max(initial=0), int(np.prod(list(red.values()))), u.dtype)
    return Lanes(round_to(contract(xa, ya), u.dtype), order_dependent_sum(contract(ax, ay), u.dtype) if may else np.zeros(shape, bool),
                 np.zeros(shape, bool))

  def _reduce(self, u:UOp) -> Lanes:
    if u in self.fused: return self._contract(u)
    return self._reduce_lanes(u, self._value(u.src[0]))

  def _reduce_lanes(self, u:UOp, value:Lanes) -> Lanes:
    x = self._grid(value)
    axes = tuple(self.axis[r] for r in u.src[1:])
    dims = list(np.shape(x.value))
    for r in u.src[1:]: dims[self.axis[r]] = int(np.asarray(self.vals[r].value).shape[self.axis[r]])
    full = tuple(dims)
    x = Lanes(np.broadcast_to(x.value, full), np.broadcast_to(x.undefined, full), np.broadcast_to(x.ub_overflow, full))
    return reduce_lanes(commit(x, u.src[0].dtype, u.dtype), axes, reduce_op(u), u.dtype, keepdims=True)

def _dims(reshape:UOp) -> tuple[int, ...]: return tuple(int(c.arg) for c in reshape.src[1].src)

def _param_size(p:UOp) -> int: return int(p.src[0].arg) if p.src and p.src[0].op is Ops.CONST else int(p.max_numel())

def _indexed_param(idx:UOp) -> UOp|None:
  """the global buffer PARAM an INDEX addresses: INDEX(PARAM, idx), or INDEX(RESHAPE(PARAM, STACK(constant dims)), one index
  per dim) -- the form of the kernels tinygrad's all-reduce builds directly (schedule/allreduce.py); else None"""
  b = idx.src[0] if idx.src else None
  if b is not None and b.op is Ops.PARAM and len(idx.src) == 2: return b
  if b is not None and b.op is Ops.RESHAPE and b.src[0].op is Ops.PARAM and len(b.src) == 2 and b.src[1].op is Ops.STACK and \
     all(c.op is Ops.CONST for c in b.src[1].src) and len(idx.src) == 1 + len(b.src[1].src): return b.src[0]
  return None

def consumer_counts(order:list[UOp]) -> dict[UOp, int]:
  """how many nodes read each node (a source read twice by one node counts twice)"""
  consumers: dict[UOp, int] = {}
  for u in order:
    for s in u.src: consumers[s] = consumers.get(s, 0) + 1
  return consumers

def reduce_op(u:UOp) -> Ops:
  """a kernel REDUCE's fold op (its arg is the op, or a tuple that starts with it)"""
  return u.arg if isinstance(u.arg, Ops) else u.arg[0]

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"   # einsum's names for grid axes

def broadcast_free(v:np.ndarray) -> tuple[np.ndarray, list[int]]:
  """a grid value without its broadcast (size-1 or stride-0) axes, and the grid axes it keeps (0-d stays 0-d)"""
  keep = [i for i in range(v.ndim) if v.shape[i] > 1 and v.strides[i] != 0]
  return np.asarray(v[tuple(slice(None) if i in keep else 0 for i in range(v.ndim))]), keep

def plan_contractions(order:list[UOp], mixed:bool=False) -> tuple[set[UOp], set[UOp], dict[UOp, DType]]:
  """Float REDUCE(ADD) nodes whose source is a MUL that nothing else reads: (those REDUCEs, the nodes between them and
  their operands, and {}). ``mixed``: also REDUCE(ADD, CAST(MUL)) with a float MUL -- half or bfloat16 products summed in
  a wider float, each product rounded first -- whose MUL dtype is the third item's value (the interpreter evaluates
  those lane by lane; Freivalds' check projects them too)."""
  consumers = consumer_counts(order)
  fused, deferred, product_dtype = set(), set(), {}
  for u in order:
    if u.op is not Ops.REDUCE or reduce_op(u) is not Ops.ADD: continue
    if not dtypes.is_float(u.dtype) or u.dtype in dtypes.weaks: continue
    m = u.src[0]
    if m.op is Ops.MUL and len(m.src) == 2 and m.dtype == u.dtype and consumers.get(m, 0) == 1:
      fused.add(u)
      deferred.add(m)
    elif mixed and m.op is Ops.CAST and m.dtype == u.dtype and (mm := m.src[0]).op is Ops.MUL and len(mm.src) == 2 and \
         dtypes.is_float(mm.dtype) and consumers.get(m, 0) == consumers.get(mm, 0) == 1:
      fused.add(u)
      deferred |= {m, mm}
      product_dtype[u] = mm.dtype
  return fused, deferred, product_dtype
