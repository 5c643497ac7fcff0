"""The reference interpreter for tensor-level UOp graphs: slow, obviously correct, numpy only.

``evaluate(x)`` reads the graph tinygrad's Tensor builds (before scheduling) and computes it op by
op from ``uopcheck.spec``. It imports tinygrad's UOp, Ops and dtypes only -- never the scheduler,
codegen, engine or runtime, and never calls ``simplify``/``graph_rewrite``
(``conformance/test_ref_independence.py`` enforces both).

State: a BUFFER's value is its contents when the graph was built (read from its device Buffer,
or all-undefined when unrealized). A STORE writes its value through its target view; an
AFTER is its source view of the buffer once the stores among its sources are done. Every value
carries two lane masks (``spec.alu.Lanes``): lanes the spec leaves undefined, and lanes that
rest on signed overflow (UB under the CPU backend's reading).

Sharding: ``Tensor.shard`` makes ``UNSHARD(x, RANGE(DEVICE))``; ``x`` depends on the device index (a SHRINK at
``index * size``). The UNSHARD evaluates ``x`` once per device index and concatenates along its axis, so a sharded
value is its logical (whole) value; nodes under an unbound device RANGE are evaluated only inside that loop.
A COPY to several devices is identity on values. A realized multi-device BUFFER is outside the reference's scope."""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp, buffers, AxisType
from tinygrad.dtype import dtypes, Invalid
from uopcheck.spec.errors import SpecError
from uopcheck.spec.optable import op_spec, check_typing, Stage
from uopcheck.spec.alu import Lanes
from uopcheck.ref.elementwise import commit, alu_node, bitcast_node, reduce_lanes
from uopcheck.spec.numpy_dtypes import np_dtype, from_bytes, round_to, const_array, order_dependent_sum, finite_abs, sum_may_overflow
from uopcheck.spec.structural import verify
from uopcheck.ref import movement

# the most elements one value may hold (checked on every node's shape before anything is allocated)
from uopcheck.settings import MAX_REF_ELEMENTS as MAX_ELEMENTS, max_ref_bytes

@dataclass
class Write:
  """A STORE's effect: ``value`` lands at ``index`` (flat positions) of ``buffer``."""
  buffer: UOp
  index: np.ndarray
  value: Lanes

PASSTHROUGH = {Ops.COPY, Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH}
# nodes that own storage a STORE can write into: a BUFFER, and the fresh buffer a COPY or CONTIGUOUS realizes into
STORAGE = {Ops.BUFFER, Ops.COPY, Ops.CONTIGUOUS}

def _lanes_move(op:Ops, x:Lanes, args:tuple) -> Lanes:
  return Lanes(movement.apply(op, x.value, args), movement.apply(op, x.undefined, args, False),
               movement.apply(op, x.ub_overflow, args, False))

def _as_ints(v:Lanes) -> tuple[int, ...]:
  return tuple(int(x) for x in np.atleast_1d(v.value).ravel())

def read_buffer(u:UOp) -> np.ndarray|None:
  """The contents of a realized BUFFER as a flat array in reference storage, or None when it holds no data.

  This is the reference's only contact with a device: it asks the Buffer object already attached to the UOp
  for its bytes (``Buffer.as_memoryview``). No kernel of the graph under test is scheduled or compiled."""
  buf = buffers.get(u)
  if buf is None or not hasattr(buf, "as_memoryview") or not buf.is_allocated() or not getattr(buf, "is_initialized", lambda: True)():
    return None
  return from_bytes(buf.as_memoryview(), u.dtype, (buf.size,))

def load_inputs(x) -> dict[UOp, np.ndarray]:
  """Read every realized BUFFER of a graph up front, so evaluation itself touches no device."""
  return {u: a for u in _root(x).toposort(enter_calls=False) if u.op is Ops.BUFFER and (a := read_buffer(u)) is not None}

class TensorInterpreter:
  """Evaluates one tensor-level graph. ``inputs`` overrides a BUFFER's initial contents (flat arrays). ``noise`` (a seed):
  the conditioning probe, not the oracle -- every float ALU/REDUCE result is moved by a random relative amount up to one
  ulp of its dtype, as any other evaluation order could round it, so a lane whose value rests on exact cancellation
  (a sum that is 0 in exact arithmetic, then divided by something tiny) shows how far rounding alone can move it."""
  def __init__(self, inputs:dict[UOp, np.ndarray]|None=None, bound:dict[UOp, Lanes|Write|tuple]|None=None, noise:int|None=None):
    self.noise = None if noise is None else np.random.default_rng(noise)
    self.vals: dict[UOp, Lanes|Write|tuple] = dict(bound or {})
    self.inputs = inputs or {}
    self.snapshots: dict[UOp, Lanes] = {}   # AFTER -> flat state of its buffer after its stores
    self.fused_reduces: set[UOp] = set()    # REDUCEs evaluated as one einsum (see _contract)
    self.deferred: set[UOp] = set()         # their inner MUL/PERMUTE nodes, evaluated only on demand

  # ** public **
  def run(self, root:UOp, check_spec:bool=True) -> Lanes|tuple:
    """Evaluate ``root``. Input is checked first: tinygrad's own structural spec for the tensor stage (``spec.structural``;
    validation only -- evaluation itself calls no tinygrad rewrite), then every node's size against ``MAX_ELEMENTS``."""
    order = list(root.toposort(enter_calls=False))
    if check_spec: verify(order, "tensor")
    try: self.fused_reduces, self.deferred = _plan_contractions(order)
    except Exception as e: raise SpecError(f"malformed graph: {type(e).__name__}: {e}") from None
    check_sizes(order, deferred=self.deferred)
    unbound = _under_unbound_device_range(order, self.vals)
    for u in order:
      if u in self.vals or u in self.deferred or u in unbound: continue
      self.vals[u] = self._eval_checked(u)
    if root in unbound: raise SpecError.at(root, "depends on a device RANGE that no UNSHARD binds")
    return self.vals[root]

  def _eval_checked(self, u:UOp):
    try: v = self._eval(u)
    except SpecError: raise
    except Exception as e: raise SpecError.at(u, "reference evaluation failed", f"{type(e).__name__}: {e}") from None
    return v if self.noise is None else self._rounded_anew(u, v)

  def _rounded_anew(self, u:UOp, v):
    """the conditioning probe (``noise``): a float ALU/REDUCE result moved by a random relative amount up to one ulp"""
    if not ((u.op in GroupOp.ALU or u.op is Ops.REDUCE) and dtypes.is_float(u.dtype) and isinstance(v, Lanes) and np.size(v.value)): return v
    a = np.asarray(v.value)
    if not np.issubdtype(a.dtype, np.floating): return v
    assert self.noise is not None
    with np.errstate(all="ignore"): moved = a * (1 + self.noise.uniform(-1, 1, a.shape) * np.finfo(a.dtype).eps)
    return Lanes(moved.astype(a.dtype), v.undefined, v.ub_overflow)

  # ** helpers **
  def _lanes(self, u:UOp) -> Lanes:
    if u not in self.vals: self.vals[u] = self._eval_checked(u)  # a deferred node someone needs after all
    v = self.vals[u]
    if not isinstance(v, Lanes): raise SpecError.at(u, "used as a value but it has none (a STORE/SINK/void op)")
    return v

  def _shape_arg(self, u:UOp) -> tuple[int, ...]:
    if u.op is Ops.STACK and len(u.src) == 0: return ()
    return _as_ints(self._lanes(u))

  def _initial(self, u:UOp) -> Lanes:
    size = self._shape_arg(u.src[0]) if u.src else ()
    shape = size if u.is_variable else (int(np.prod(size, dtype=np.int64)),) if size else ()
    if u in self.inputs:
      arr = np.asarray(self.inputs[u]).reshape(shape)
      return Lanes.ok(arr.astype(np_dtype(u.dtype)) if u.dtype != dtypes.bfloat16 else round_to(arr, u.dtype))
    if (stored := read_buffer(u)) is not None: return Lanes.ok(stored.reshape(shape))
    # unrealized storage: every lane undefined until a STORE defines it
    return Lanes(np.zeros(shape, np_dtype(u.dtype)), np.ones(shape, bool), np.zeros(shape, bool))

  def _base(self, u:UOp) -> UOp:
    while u.op in GroupOp.Movement or u.op is Ops.DETACH: u = u.src[0]
    return u

  def _buffer_of(self, u:UOp) -> UOp:
    b = self._base(u)
    while b.op is Ops.AFTER: b = self._base(b.src[0])
    if b.op not in STORAGE: raise SpecError.at(u, "a STORE target / AFTER source must be a view of a BUFFER", f"found {b.op}")
    return b

  def _state(self, base:UOp) -> Lanes:
    """Flat state of the buffer behind ``base`` (a BUFFER or an AFTER)."""
    if base.op in STORAGE:
      init = self._lanes(base)
      return Lanes(init.value.reshape(-1), init.undefined.reshape(-1), init.ub_overflow.reshape(-1))
    if base.op is Ops.AFTER: return self.snapshots[base]
    raise SpecError.at(base, "expected a BUFFER or AFTER as the base of a view")

  def _index_map(self, u:UOp) -> np.ndarray:
    """For a view ``u`` of a buffer: the flat buffer position of each of its elements."""
    if u.op in STORAGE:
      sz = self._lanes(u).value.size
      return np.arange(sz, dtype=np.int64).reshape(self._lanes(u).value.shape)
    if u.op is Ops.AFTER: return self._index_map(u.src[0])
    if u.op is Ops.DETACH: return self._index_map(u.src[0])
    if u.op is Ops.PAD: raise SpecError.at(u, "a STORE cannot write through a PAD")
    if u.op in GroupOp.Movement: return movement.apply(u.op, self._index_map(u.src[0]), self._mop_args(u))
    raise SpecError.at(u, "a STORE target must be movement ops over a BUFFER", f"found {u.op}")

  def _chain(self, u:UOp, base_val:Lanes, base:UOp) -> Lanes:
    if u is base: return base_val
    if u.op is Ops.DETACH: return self._chain(u.src[0], base_val, base)
    return _lanes_move(u.op, self._chain(u.src[0], base_val, base), self._mop_args(u))

  def _mop_args(self, u:UOp) -> tuple:
    if u.op in (Ops.RESHAPE, Ops.EXPAND): return (self._shape_arg(u.src[1]),)
    if u.op in (Ops.PAD, Ops.SHRINK): return (self._shape_arg(u.src[1]), self._shape_arg(u.src[2]))
    if u.op is Ops.FLIP: return (tuple(bool(x) for x in u.arg),)
    return (tuple(u.arg),)

  # ** the evaluator, one op at a time **
  def _eval(self, u:UOp):
    spec = op_spec(u.op)  # SpecError for an op uopcheck doesn't know
    if Stage.TENSOR not in spec.stages:
      raise SpecError.at(u, "not allowed at the tensor stage", f"the spec gives it stages {sorted(s.value for s in spec.stages) or 'none'}"
                         + (f" ({spec.out_of_scope})" if spec.out_of_scope else ""))
    if (broken := check_typing(u)) is not None: raise SpecError.at(u, f"typing rule broken: {broken}")
    op = u.op
    if op is Ops.CONST:
      if u.arg is Invalid: return Lanes(np.zeros((), np.bool_), np.ones((), bool), np.zeros((), bool))
      return Lanes.ok(const_array(u.arg, u.dtype))
    if op is Ops.STACK:
      if not u.src: return Lanes.ok(np.zeros((0,), np.int64))
      parts = [commit(self._lanes(s), s.dtype, u.dtype) if u.dtype != dtypes.void else self._lanes(s) for s in u.src]
      return Lanes(np.stack([p.value for p in parts]), np.stack([p.undefined for p in parts]), np.stack([p.ub_overflow for p in parts]))
    if op is Ops.BUFFER:
      if isinstance(u.device, tuple): raise SpecError.at(u, "outside the reference interpreter's scope: a realized multi-device BUFFER")
      return self._initial(u)
    if op in PASSTHROUGH: return self._lanes(u.src[0])
    if op in GroupOp.Movement: return _lanes_move(op, self._lanes(u.src[0]), self._mop_args(u))
    if op is Ops.STORE:
      if len(u.src) != 2: raise SpecError.at(u, "a tensor-level STORE is (target, value)")
      target, value = u.src
      idx = self._index_map(target)
      val = commit(self._lanes(value), value.dtype, target.dtype)
      val = Lanes(*(np.broadcast_to(a, idx.shape) for a in (val.value, val.undefined, val.ub_overflow)))
      return Write(self._buffer_of(target), idx, val)
    if op is Ops.AFTER: return self._after(u)
    if op is Ops.SINK: return tuple(self.vals[s] for s in u.src)
    if op in GroupOp.ALU: return self._alu(u)
    if op is Ops.CAST: return commit(self._lanes(u.src[0]), u.src[0].dtype, u.dtype)
    if op is Ops.BITCAST: return self._bitcast(u)
    if op is Ops.REDUCE: return self._reduce(u)
    if op is Ops.UNSHARD: return self._unshard(u)
    if op is Ops.RANGE: raise SpecError.at(u, "a RANGE at the tensor stage must be a device index bound by an UNSHARD")
    raise SpecError.at(u, f"outside the reference interpreter's scope: {spec.out_of_scope or 'no tensor-level evaluator'}")

  def _after(self, u:UOp) -> Lanes:
    src = u.src[0]
    base = self._base(src)
    if base.op not in STORAGE | {Ops.AFTER}:
      # AFTER over a non-buffer (e.g. CONTIGUOUS): an ordering edge only
      return self._lanes(src)
    buf = self._buffer_of(src)
    st = self._state(base)
    value, undef, ub = st.value.copy(), st.undefined.copy(), st.ub_overflow.copy()
    for d in u.src[1:]:
      w = self.vals[d]
      if isinstance(w, Write) and w.buffer is buf:
        value[w.index] = w.value.value
        undef[w.index] = w.value.undefined
        ub[w.index] = w.value.ub_overflow
      elif d.op is Ops.AFTER and d in self.snapshots and self._buffer_of(d) is buf:
        # a nested AFTER on the same buffer (e.g. a slice assign): its state already holds its stores
        later = self.snapshots[d]
        value, undef, ub = later.value.copy(), later.undefined.copy(), later.ub_overflow.copy()
      elif d.op is Ops.CALL: raise SpecError.at(d, "outside the reference interpreter's scope: a CALL inside a tensor graph")
    self.snapshots[u] = snap = Lanes(value, undef, ub)
    bshape = self._lanes(buf).value.shape
    shaped = Lanes(snap.value.reshape(bshape), snap.undefined.reshape(bshape), snap.ub_overflow.reshape(bshape))
    return self._chain(src, shaped, buf) if base is buf else self._chain(src, self._rechain_after(base, shaped), base)

  def _rechain_after(self, after:UOp, shaped:Lanes) -> Lanes:
    # the value of a nested AFTER base viewed with this AFTER's new state
    return self._chain(after.src[0], shaped, self._buffer_of(after)) if self._base(after.src[0]).op in STORAGE else shaped

  def _unshard(self, u:UOp) -> Lanes:
    """The logical value of a sharded tensor: ``src[0]`` once per device index, concatenated along ``arg[0]``."""
    if len(u.src) != 2 or u.src[1].op is not Ops.RANGE or u.src[1].arg[-1] is not AxisType.DEVICE:
      raise SpecError.at(u, "an UNSHARD is (value, device RANGE)")
    x, r = u.src
    parts = []
    for d in range(int(self._lanes(r.src[0]).value)):
      bound = {k: v for k, v in self.vals.items() if k is not r}
      bound[r] = Lanes.ok(const_array(d, r.dtype))
      sub = TensorInterpreter(self.inputs, bound)
      v = sub.run(x, check_spec=False)
      if not isinstance(v, Lanes): raise SpecError.at(u, "an UNSHARD's source must be a value")
      parts.append(v)
    ax = u.arg[0]
    return Lanes(*(np.concatenate([getattr(p, f) for p in parts], axis=ax) for f in ("value", "undefined", "ub_overflow")))

  def _alu(self, u:UOp) -> Lanes: return alu_node(u, [self._lanes(s) for s in u.src])

  def _bitcast(self, u:UOp) -> Lanes: return bitcast_node(u, self._lanes(u.src[0]))

  def _contract(self, u:UOp) -> Lanes|None:
    """REDUCE(ADD) of PERMUTEs of MUL(x, y) is a sum of products: evaluate it as one float64 einsum over x and y
    (never materializing the broadcast product). Same definition as the general path, without its n^3 memory."""
    chain, s = [], u.src[0]
    while s.op is Ops.PERMUTE:
      chain.append(s.arg)
      s = s.src[0]
    mul = s
    x, y = (commit(self._lanes(a), a.dtype, mul.dtype) for a in mul.src)
    if x.undefined.any() or y.undefined.any() or x.ub_overflow.any() or y.ub_overflow.any(): return None
    shape = np.broadcast_shapes(x.value.shape, y.value.shape)
    perm = list(range(len(shape)))
    for p in reversed(chain): perm = [perm[i] for i in p]  # axis i of the REDUCE input is axis perm[i] of the MUL
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(shape)]
    def operand(v:np.ndarray) -> tuple[np.ndarray, str]:
      v = v.reshape((1,) * (len(shape) - v.ndim) + v.shape)
      keep = [i for i in range(len(shape)) if v.shape[i] == shape[i] and not (shape[i] > 1 and v.strides[i] == 0)]
      idx = tuple(slice(None) if i in keep else 0 for i in range(len(shape)))
      return np.array(v[idx], dtype=np.float64, order="C"), "".join(letters[i] for i in keep)
    (xa, xs), (ya, ys) = operand(x.value), operand(y.value)
    present = set(xs) | set(ys)
    out_axes = [perm[i] for i in range(u.arg[1], len(shape))]       # MUL axes, in the REDUCE's output order
    def contract(xa:np.ndarray, ya:np.ndarray) -> np.ndarray:
      with np.errstate(all="ignore"):
        r = np.einsum(f"{xs},{ys}->{''.join(letters[a] for a in out_axes if letters[a] in present)}", xa, ya, optimize=True)
        for i in range(u.arg[1]):  # a reduced axis neither factor varies along (both broadcast): the sum is n copies
          if letters[perm[i]] not in present: r = r * shape[perm[i]]
      # an output axis neither factor varies along is a broadcast of the result
      return np.broadcast_to(np.reshape(r, [shape[a] if letters[a] in present else 1 for a in out_axes]), [shape[a] for a in out_axes])
    r = contract(xa, ya)
    z = np.zeros(np.shape(r), bool)
    ax, ay = finite_abs(xa), finite_abs(ya)
    n_terms = int(np.prod([shape[perm[i]] for i in range(u.arg[1])]))
    undefined = order_dependent_sum(contract(ax, ay), u.dtype) if sum_may_overflow(ax.max(initial=0) * ay.max(initial=0), n_terms, u.dtype) \
                else z.copy()
    return Lanes(round_to(np.asarray(r), u.dtype), undefined, z)

  def _reduce(self, u:UOp) -> Lanes:
    rop, n = u.arg
    if u in self.fused_reduces and (fused := self._contract(u)) is not None: return fused
    return reduce_lanes(self._lanes(u.src[0]), tuple(range(n)), rop, u.dtype)

def _under_unbound_device_range(order:list[UOp], bound) -> set[UOp]:
  """The nodes whose value depends on a device RANGE not yet bound (in ``bound``): an UNSHARD binds its own RANGE."""
  free: dict[UOp, frozenset] = {}
  for u in order:
    f = frozenset({u}) if u.op is Ops.RANGE and u not in bound else frozenset().union(*(free.get(s, frozenset()) for s in u.src))
    if u.op is Ops.UNSHARD and len(u.src) == 2: f = f - {u.src[1]}
    free[u] = f
  return {u for u, f in free.items() if f}

def _size(n:int) -> str: return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"

# numpy gives these a view of their source (no new memory); every other node's value is a new array (``Lanes``: the
# values and two bool masks), and the interpreter keeps every node's value until the graph is done
VIEW_OPS = {Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.SHRINK, Ops.FLIP, Ops.DETACH}

def check_sizes(order:list[UOp], limit:int|None=None, total_bytes:int|None=None, deferred:set[UOp]|frozenset=frozenset()) -> None:
  """Refuse, before allocating anything, a graph with a node holding more than ``limit`` elements, or whose values
  together would take more than ``total_bytes`` (``MAX_REF_BYTES``; the environment's UOPCHECK_MAX_REF_BYTES). A
  ``deferred`` node (the product inside a contraction, evaluated as one einsum) is not counted: it is never built.
  Measured: the ``small`` Llama train step, 1,953 counted nodes, 2.3 GiB (tiny: 0.1 GiB)."""
  limit = MAX_ELEMENTS if limit is None else limit
  if total_bytes is None:
    try: total_bytes = max_ref_bytes()
    except ValueError as e: raise SpecError(str(e)) from None
  total = 0
  for u in order:
    try: shape = u._shape
    except Exception as e: raise SpecError.at(u, "its shape cannot be computed", f"{type(e).__name__}: {e}") from None
    if shape is None: continue
    n = 1
    for s in shape:
      if isinstance(s, int): n *= max(s, 0)
    if n > limit: raise SpecError.at(u, f"{n} elements exceed the reference's size limit of {limit} (ref.tensor_interp.MAX_ELEMENTS)")
    if u.op not in VIEW_OPS and u not in deferred: total += n * (u.dtype.itemsize + 2)
    if total > total_bytes:
      raise SpecError.at(u, f"the graph's values would take more than {_size(total_bytes)} in the reference (reached at this node; "
                            f"the limit is MAX_REF_BYTES, or UOPCHECK_MAX_REF_BYTES in the environment)")

def _plan_contractions(order:list[UOp]) -> tuple[set[UOp], set[UOp]]:
  """Find float REDUCE(ADD) <- PERMUTE* <- MUL chains whose inner nodes have no other consumer: those inner nodes
  are evaluated only if something else asks for them (see TensorInterpreter._contract)."""
  consumers: dict[UOp, int] = {}
  for u in order:
    for s in u.src: consumers[s] = consumers.get(s, 0) + 1
  reduces: set[UOp] = set()
  deferred: set[UOp] = set()
  for u in order:
    if u.op is not Ops.REDUCE or u.arg[0] is not Ops.ADD or not dtypes.is_float(u.dtype) or u.dtype in dtypes.weaks: continue
    inner, s = [], u.src[0]
    while s.op is Ops.PERMUTE and consumers.get(s, 0) == 1:
      inner.append(s)
      s = s.src[0]
    if s.op is Ops.MUL and consumers.get(s, 0) == 1 and s.dtype == u.dtype and len(s.src) == 2:
      reduces.add(u)
      deferred.update(inner + [s])
  return reduces, deferred

def _root(x) -> UOp:
  if isinstance(x, UOp): return x
  if hasattr(x, "uop"): return x.uop  # a Tensor
  if isinstance(x, (list, tuple)): return UOp.sink(*[_root(t) for t in x])
  raise SpecError(f"evaluate takes a Tensor, a UOp or a list of them, got {type(x).__name__}")

def evaluate_lanes(x, inputs:dict[UOp, np.ndarray]|None=None, check_spec:bool=True) -> Lanes|tuple:
  """Evaluate with lane masks: Lanes for a single output, a tuple of them for a SINK."""
  return TensorInterpreter(inputs).run(_root(x), check_spec)

def evaluate(x, inputs:dict[UOp, np.ndarray]|None=None, check_spec:bool=True):
  """Evaluate a Tensor, a UOp, or a SINK (or a list of Tensors) -> a numpy array, or a list for several outputs.
  A malformed graph raises one SpecError (one line: op, dtype, shape, rule); never a raw exception, never a value."""
  r = evaluate_lanes(x, inputs, check_spec)
  return [v.value for v in r] if isinstance(r, tuple) else r.value
