"""Freivalds' check of a kernel's contractions: every output lane checked at the cost of a matrix-vector product.

A sampled reference (``KernelInterpreter(sample=...)``) checks a matmul kernel on its edges and k random lanes. This module
checks all of them, probabilistically: for a kernel whose one STORE writes ``C = A.B`` (a float ``REDUCE(ADD, MUL(x, y))``,
possibly inside sums, scalings, casts and further ADD-reductions of such terms), the device's C is projected on a random
+-1 vector r over some output axes P and compared with the same projection of the reference, computed as ``A.(B.r)`` --
O(M.K + K.N + M.N) instead of O(M.N.K). A lane of C that is wrong by d changes its row's projection by +-d, so it is seen
when d exceeds the row's summed tolerance (see ``bound``); a wrong row *vector* e is missed only when e.r happens to vanish
within it, which for exact arithmetic has probability <= 1/2 per independent r (Freivalds 1977) -- hence ``trials``.

No false failure by construction: where every lane of the device is within the per-lane tolerance of the reference (the
all-lanes check's criterion), every projection is within ``bound``, which sums that tolerance over the row on an upper
bound of each lane's magnitude (|x|.|y| summed, not the value), plus the rounding of the reference itself and of this
module's float64 sums. Where the kernel is not of this form -- a store that is masked, a contraction under an op that is not
linear, a value that is undefined or not finite, a sum that may overflow its dtype -- the check says why it does not apply
and the caller keeps its sampled verdict. Same independence rule as the interpreter it extends: no tinygrad rewrite pass,
codegen or runtime."""
from __future__ import annotations
from dataclasses import dataclass
from math import prod
import numpy as np
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec.errors import SpecError, KernelFault
from uopcheck.spec.floats import Tolerance, EPS
from uopcheck.spec.alu import Lanes
from uopcheck.spec.numpy_dtypes import max_finite, finite_abs
from uopcheck.ref.elementwise import commit
from uopcheck.ref.kernel_interp import KernelInterpreter, BufferState, LETTERS, broadcast_free, plan_contractions, reduce_op

MAX_TERMS = 64    # a stored value that expands to more products than this is left to the sampled check
COST_FACTOR = 8   # a projection whose first einsum touches more than this many times the operands' and output's lanes is not used

class NotApplicable(Exception):
  """the kernel is not (here) a sum of contractions Freivalds can project; the message says which op or lane stops it"""

@dataclass
class Product:
  """sum over the grid axes ``red`` of the product of ``factors`` (float64, broadcastable to the kernel's grid)"""
  factors: list[np.ndarray]
  red: frozenset[int] = frozenset()

@dataclass(frozen=True)
class Term:
  """a Product before evaluation: its factors are value nodes (a load, a scale) or (fused REDUCE, operand 0 or 1); ``red``
  the RANGEs it sums"""
  factors: tuple[UOp|tuple[UOp, int], ...]
  red: frozenset[UOp] = frozenset()
  sign: float = 1.0

  def negated(self) -> "Term": return Term(self.factors, self.red, -self.sign)

@dataclass
class FreivaldsVerdict:
  applies: bool
  ok: bool = True
  why: str = ""          # not applicable: why; failed: where
  lanes: int = 0         # output lanes the projections covered
  projections: int = 0
  max_excess: float = 0.0   # max over rows of |device.r - reference.r| / bound (<= 1 passes)

@dataclass
class _Store:
  slot: int
  pos: np.ndarray
  live: np.ndarray

class _Collector(KernelInterpreter):
  """The interpreter with every node that reads a fused contraction left unevaluated: the contractions' operands and the
  store's address are recorded instead (``_contract``, ``_store``); ``linear`` reads the store's value as Terms from the
  AST, and ``product`` gives each Term its values once ``run`` has evaluated the rest."""
  def __init__(self, ast:UOp, name:str, var_vals:dict[str, int]|None):
    super().__init__(ast, name, var_vals)
    # mixed precision too: REDUCE(ADD, CAST(MUL(x, y))), half or bfloat16 products summed in float32 -- the products'
    # rounding counted (eps of the MUL's dtype, ``_linear``) and their overflow ruled out (``_contract``)
    self.fused, self.deferred, self.product_dtype = plan_contractions(self.order, mixed=True)
    self.tainted: set[UOp] = set()
    for u in self.order:
      if u in self.fused or any(s in self.tainted for s in u.src): self.tainted.add(u)
    self.operands: dict[UOp, tuple[Lanes, Lanes]] = {}
    self.stores: list[_Store] = []
    self.forms: dict[UOp, tuple[list[Term], float]] = {}

  def _eval(self, u:UOp):
    if u.op is Ops.STORE: return self._store(u)
    if u in self.tainted and u not in self.fused and u.op is not Ops.END and u.op is not Ops.SINK: return None
    return super()._eval(u)

  def _contract(self, u:UOp):
    """record the contraction's operands, at the MUL's dtype; its value is never built"""
    mul = u.src[0] if u.src[0].op is Ops.MUL else u.src[0].src[0]
    x, y = (commit(self._grid(self._value(a)), a.dtype, mul.dtype) for a in mul.src)
    if u in self.product_dtype and (top := max_finite(mul.dtype)) is not None:
      def largest(v:Lanes) -> float: return float(np.max(finite_abs(np.asarray(v.value, np.float64)), initial=0))
      if largest(x) * largest(y) > top / 2: raise NotApplicable(f"a product may overflow {mul.dtype} before the sum")
    self.operands[u] = (x, y)

  def _store(self, u:UOp) -> None:
    if u.src[0].op is not Ops.INDEX or len(u.src) != 2: raise SpecError.at(u, f"kernel {self.name}: STORE must be (INDEX(PARAM, idx), value)")
    slot, pos, live = self._address(u.src[0])
    self.stores.append(_Store(slot, pos, live))
    return None

  def check_cost(self, bufs:dict[int, BufferState]) -> None:
    """every node this check evaluates spans at most COST_FACTOR times the largest buffer's lanes (a kernel whose other
    part spans a product of ranges -- an unfused reduction -- costs as much as the full reference: not this check's)"""
    limit = COST_FACTOR * max((b.value.size for b in bufs.values()), default=1)
    n, u = self.widest({u for u in self.order if (u in self.tainted and u not in self.fused) or u in self.deferred})
    if n > limit and u is not None:
      raise NotApplicable(f"{u.op.name} spans {n:,} lanes, more than {COST_FACTOR}x the largest buffer (the full reference's cost)")

  def float64(self, x:Lanes, what:str) -> np.ndarray:
    if np.asarray(x.undefined).any() or np.asarray(x.ub_overflow).any(): raise NotApplicable(f"{what} has undefined lanes")
    v = np.asarray(x.value, np.float64)
    if not np.isfinite(v).all(): raise NotApplicable(f"{what} holds a value that is not finite")
    return v

  def linear(self, u:UOp) -> tuple[list[Term], float]:
    """the value of ``u`` as a sum of Terms -- read from the AST alone, before anything is evaluated -- and the relative
    rounding the reference adds on the way (each rounding op's eps at its own dtype: a half contraction cast to float
    rounds at half's)"""
    if (hit := self.forms.get(u)) is None: hit = self.forms[u] = self._linear(u)
    if len(hit[0]) > MAX_TERMS: raise NotApplicable(f"the stored value expands to more than {MAX_TERMS} products")
    return hit

  def _linear(self, u:UOp) -> tuple[list[Term], float]:
    if u not in self.tainted: return [Term((u,))], 0.0   # the reference's own value of a node that reads no contraction
    eps = EPS.get(u.dtype, 2.0**-7)   # a float dtype the table lacks: bfloat16's (the coarsest but fp8's)
    if u in self.fused:   # float64 sum, rounded once; mixed precision: each product rounded first
      narrow = EPS.get(self.product_dtype[u], 2.0**-7) if u in self.product_dtype else 0.0
      return [Term(((u, 0), (u, 1)), frozenset(u.src[1:]))], eps + narrow
    if u.op is Ops.ADD or u.op is Ops.SUB:
      (a, ra), (b, rb) = self.linear(u.src[0]), self.linear(u.src[1])
      return a + ([t.negated() for t in b] if u.op is Ops.SUB else b), max(ra, rb) + eps
    if u.op is Ops.NEG:
      a, ra = self.linear(u.src[0])
      return [t.negated() for t in a], ra
    if u.op is Ops.MUL and sum(s in self.tainted for s in u.src) == 1:
      lin, plain = (u.src[0], u.src[1]) if u.src[0] in self.tainted else (u.src[1], u.src[0])
      a, ra = self.linear(lin)
      return [Term((*t.factors, plain), t.red, t.sign) for t in a], ra + eps
    if u.op is Ops.CAST and dtypes.is_float(u.dtype) and dtypes.is_float(u.src[0].dtype):
      a, ra = self.linear(u.src[0])
      return a, ra + eps
    if u.op is Ops.REDUCE and reduce_op(u) is Ops.ADD:
      a, ra = self.linear(u.src[0])
      more = frozenset(u.src[1:])
      if any({self.axis[r] for r in t.red} & {self.axis[r] for r in more} for t in a):
        raise NotApplicable("a nested reduction shares a grid axis with the one it sums")
      return [Term(t.factors, t.red | more, t.sign) for t in a], ra + eps   # float64 sum, rounded once
    raise NotApplicable(f"a contraction flows through {u.op.name}, which is not linear")

  def product(self, t:Term) -> Product:
    """a Term's values, once ``run`` has evaluated the kernel"""
    fs, red = [], {self.axis[r] for r in t.red}
    for f in t.factors:
      if isinstance(f, tuple): fs.append(self.float64(self.operands[f[0]][f[1]], "a contraction's operand"))
      else:
        fs.append(v := self.float64(self._grid(self._value(f)), f"{f.op.name} operand"))
        if any(v.shape[i] > 1 and not any(self.axis[r] == i for r in self.open_in[f] & t.red) for i in red):
          raise NotApplicable("a factor varies along an axis the contraction sums (a shared grid axis)")
    fs[0] = fs[0] * t.sign
    return Product(fs, frozenset(red))

def _einsum(ops:list[tuple[np.ndarray, list[int]]], out:list[int]) -> np.ndarray:
  sub = ",".join("".join(LETTERS[i] for i in axes) for _, axes in ops)
  return np.einsum(f"{sub}->{''.join(LETTERS[i] for i in out)}", *[a for a, _ in ops], optimize=True)

def _first_axes(p:Product, P:set[int]) -> tuple[list[int], list[int]]:
  """(the factors of ``p`` that read an axis of P, by index; the grid axes they read): what ``project`` contracts with r first"""
  first = [j for j, f in enumerate(p.factors) if set(broadcast_free(f)[1]) & P]
  return first, sorted(set(P).union(*(broadcast_free(p.factors[j])[1] for j in first)))

def cheap(products:list[Product], P:set[int], out:list[int], sizes:dict[int, int]) -> bool:
  """whether projecting on P stays near the operands' own size (the factors that read P, with r, never span the product)"""
  for p in products:
    axes = _first_axes(p, P)[1]
    if prod(sizes[i] for i in axes) > COST_FACTOR * (sum(f.size for f in p.factors) + prod(sizes[i] for i in out)): return False
  return True

def project(products:list[Product], r:np.ndarray, P:set[int], out:list[int], sizes:dict[int, int], magnitude:bool) -> np.ndarray:
  """sum over the axes P of r times the value of ``products`` (``magnitude``: of |factors|, an upper bound of |value|), over
  the output axes ``out`` minus P -- the factors that read P first (with r), then the rest: A.(B.r)"""
  rest_out = [i for i in out if i not in P]
  total = np.zeros([sizes[i] for i in rest_out])
  for p in products:
    ops = [broadcast_free(np.abs(f) if magnitude else f) for f in p.factors]
    first_idx, first_axes = _first_axes(p, P)
    keep = [i for i in first_axes if i not in P]
    part = (_einsum([*(ops[j] for j in first_idx), broadcast_free(np.abs(r) if magnitude else r)], keep), keep)
    later = [o for j, o in enumerate(ops) if j not in first_idx] + [part]
    got_axes = [i for i in rest_out if any(i in axes for _, axes in later)]
    with np.errstate(all="ignore"): got = _einsum(later, got_axes)
    total = total + np.reshape(got, [sizes[i] if i in got_axes else 1 for i in rest_out])
  return total

def random_signs(rng:np.random.Generator, shape:tuple[int, ...]) -> np.ndarray:
  """Freivalds' vector: independent +-1 entries (a nonzero error row e has e.r == 0 with probability <= 1/2)"""
  return rng.choice(np.array([-1.0, 1.0]), size=shape)

def bound(tol:Tolerance, dt, slack:float, mag:np.ndarray, count:int, summed:int) -> np.ndarray:
  """what a row's projection may differ by when each of its ``count`` lanes is within ``tol`` of the reference: per lane
  atol + rtol.|ref| (plus ``ulps`` of it), with |ref| <= the lane's magnitude bound ``mag`` times (1 + slack + eps); the
  reference's own rounding (``slack``, relative) and the store's (eps of ``dt``) of that magnitude; and this module's
  float64 sums over ``summed`` terms"""
  eps = EPS[dt]
  rel = float(np.max(tol.rtol)) + tol.ulps * eps
  return (float(np.max(tol.atol)) * count + (rel * (1 + slack + eps) + slack + eps) * mag) * 1.001 + summed * 2.0**-50 * mag

def check_contractions(ast:UOp, bufs:dict[int, BufferState], device_out:dict[int, np.ndarray], tol:Tolerance, seed:int, trials:int=2,
                       var_vals:dict[str, int]|None=None, name:str="kernel") -> FreivaldsVerdict:
  """Freivalds' check of kernel ``ast`` run on ``bufs`` (the arguments before the call), against ``device_out`` (what the
  device left in each stored slot): ``trials`` projections on independent random +-1 vectors (see the module docstring).
  Raises ``KernelFault`` when a lane reads or writes out of bounds (the kernel AST is wrong on a lane a sample missed)."""
  try:
    with np.errstate(invalid="ignore", over="ignore"):   # a value that is not finite is a verdict here, never a warning
      return _check(ast, bufs, device_out, tol, seed, trials, var_vals, name)
  except NotApplicable as e: return FreivaldsVerdict(False, why=str(e))
  except KernelFault: raise   # a lane no sample reached reads or writes out of bounds: the kernel AST's fault, the caller's verdict
  except SpecError as e: return FreivaldsVerdict(False, why=f"the reference could not evaluate every lane: {e}")

def _check(ast, bufs, device_out, tol, seed, trials, var_vals, name) -> FreivaldsVerdict:
  col = _Collector(ast, name, var_vals)
  if not col.fused: raise NotApplicable("no float contraction (REDUCE(ADD, MUL))")
  stores = [u for u in col.order if u.op is Ops.STORE]
  if len(stores) != 1: raise NotApplicable(f"{len(stores)} stores (one is checked)")
  value, dt = stores[0].src[1], stores[0].src[0].dtype
  if value not in col.tainted: raise NotApplicable("the store's value reads no contraction")
  if not dtypes.is_float(dt) or dt not in EPS: raise NotApplicable(f"stored dtype {dt} is not a float")
  terms, slack = col.linear(value)   # from the AST alone: a kernel this check does not fit is never evaluated
  col.check_cost(bufs)
  col.run(bufs)
  st = col.stores[0]
  if not np.asarray(st.live).all(): raise NotApplicable("the store is masked")
  products = [col.product(t) for t in terms]
  out = sorted({col.axis[r] for r in col.output_ranges})
  sizes = {i: int(np.asarray(col.vals[r].value).shape[i]) for r in col.output_ranges if (i := col.axis[r]) in out}
  for f in (f for p in products for f in p.factors):
    for i in range(f.ndim):
      if i not in out: sizes[i] = max(sizes.get(i, 1), f.shape[i])
  full = tuple(sizes[i] if i in out else 1 for i in range(col.ndim))
  pos = np.broadcast_to(st.pos, full).reshape(-1)
  hit = np.zeros(np.asarray(device_out[st.slot]).size, np.bool_)
  hit[pos] = True
  if int(hit.sum()) != pos.size: raise NotApplicable("several lanes store to one element")
  dev = np.asarray(device_out[st.slot], np.float64)[pos].reshape(full)
  lanes = pos.size
  # P: the output axes one factor of a contraction reads and the others do not (B's columns, or A's rows)
  cands: list[frozenset[int]] = []
  for p in products:
    if len(p.factors) < 2 or not p.red: continue
    axes = [set(broadcast_free(f)[1]) & set(out) for f in p.factors]
    for i, a in enumerate(axes):
      own = frozenset(a - set().union(*(b for j, b in enumerate(axes) if j != i)))
      if own and own not in cands: cands.append(own)
  if frozenset(out) not in cands: cands.append(frozenset(out))   # last: every output lane in one sum (a dot product per lane)
  rng = np.random.default_rng(seed)
  mag_limit = (max_finite(dt) or 3e38) / 4
  verdict = FreivaldsVerdict(True, lanes=lanes)
  magnitudes: dict[frozenset[int], np.ndarray] = {}   # with |r| = 1 a row's magnitude bound depends on P alone
  usable = [P for P in cands if cheap(products, set(P), out, sizes)]
  if not usable: raise NotApplicable("no output axes to project on without building the full product")
  for t in range(trials):
    key = usable[t % len(usable)]
    P = set(key)
    r = random_signs(rng, tuple(full[i] if i in P else 1 for i in range(col.ndim)))
    if (mag := magnitudes.get(key)) is None: mag = magnitudes[key] = project(products, r, P, out, sizes, True)
    if not np.isfinite(mag).all() or float(np.max(mag, initial=0)) > mag_limit: raise NotApplicable("a sum may overflow its dtype")
    if not np.isfinite(dev).all():
      at = tuple(int(i) for i in np.argwhere(~np.isfinite(dev))[0])
      return FreivaldsVerdict(True, False, f"buffer {st.slot} lane {at}: device wrote {dev[at]} where every term is finite and bounded",
                              lanes, t + 1, np.inf)
    rest = [i for i in out if i not in P]
    with np.errstate(all="ignore"):
      lhs = _einsum([broadcast_free(dev), broadcast_free(r)], rest).reshape(mag.shape)
    rhs = project(products, r, P, out, sizes, False)
    summed = sum(sizes.values())
    b = bound(tol, dt, slack, mag, prod(full[i] for i in P), summed)
    excess = np.abs(lhs - rhs) / np.maximum(b, np.finfo(np.float64).tiny)
    verdict.projections, verdict.max_excess = t + 1, max(verdict.max_excess, float(np.max(excess, initial=0)))
    if (excess > 1).any():
      at = tuple(int(i) for i in np.argwhere(excess > 1)[0])
      verdict.ok = False
      verdict.why = (f"buffer {st.slot}: Freivalds projection {t + 1} over output axes {sorted(P)} differs at row {at}: "
                     f"device.r = {float(lhs[at]):.6g}, reference A.(B.r) = {float(rhs[at]):.6g}, bound {float(b[at]):.3g}")
      return verdict
  return verdict

