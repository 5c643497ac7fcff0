"""One float rewrite decided: the numpy spec searches and confirms, z3's IEEE model proves.

``decide(before, after)`` runs the numpy spec (``ref.elementwise``, the reference's own evaluator) first over special
values (NaN, +-inf, +-0, +-1, the largest finite, the smallest subnormal and normal, ...) and random ones for every
float variable: a mismatch there is a refutation already confirmed by the spec, found in milliseconds; with one 16-bit
float variable (and bools) it tries *every* value, a proof. Otherwise z3 (``spec.z3float``) proves or refutes it for
all values within a resource limit. A transcendental op (EXP2, LOG2, SIN, POW) has no exact value: such an instance is
compared under the spec's tolerance, its NaN/inf classes exactly. ``confirm`` re-evaluates any counterexample with numpy
before it counts."""
from __future__ import annotations
from typing import Any
from dataclasses import dataclass, field
import numpy as np
import z3
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import DType, dtypes, Invalid
from uopcheck.spec.z3float import Unsupported, prove, CLASSES, from_bits
from uopcheck.spec.optable import OP_TABLE
from uopcheck.spec.errors import SpecError
from uopcheck.settings import FLOAT_PROOF_RLIMIT

PROBES = ("nan", "inf", "-inf", 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, "max", "tiny")

def probe_value(p:str|float, dt:DType) -> float:
  """a probe (a number, or a named special value) as a value of ``dt`` (rounded into it)"""
  from uopcheck.spec.numpy_dtypes import round_to, max_finite
  if p == "max": v = max_finite(dt) or 0.0
  elif p == "tiny": v = {dtypes.float16: 2.0**-24, dtypes.bfloat16: 2.0**-133, dtypes.float32: 2.0**-149, dtypes.float64: 5e-324}[dt]
  else: v = float(p)
  return float(round_to(np.array(v, np.float64), dt))

# ** numpy confirmation **

def evaluate(us:list[UOp], values:dict[str, np.ndarray], symbolic:dict[str, UOp]|None=None) -> list[Any]:
  """``Lanes`` of each of ``us`` with every leaf (a variable by name, or a free constant in ``symbolic``) at its array of
  values (the arrays broadcast together), by the numpy spec: the reference's own evaluator (``ref.elementwise``)"""
  from uopcheck.spec.alu import Lanes
  from uopcheck.spec.numpy_dtypes import const_array, np_dtype, round_to
  from uopcheck.ref.elementwise import alu_node, commit
  sym = {id(u): n for n, u in (symbolic or {}).items()}
  def leaf(x, dt):
    if dtypes.is_float(dt): return Lanes.ok(round_to(np.asarray(x, np.float64), dt))
    with np.errstate(invalid="ignore"): return Lanes.ok(np.asarray(x).astype(np_dtype(dt)))   # a float row at an int leaf: one int, both sides
  vals: dict[UOp, Lanes] = {}
  for u in UOp.sink(*us).toposort():
    if u.op is Ops.SINK or (u.op is Ops.STACK and u.dtype == dtypes.void): continue
    if u.op is Ops.PARAM: vals[u] = leaf(values[u.arg.name], u.dtype)
    elif u.op is Ops.CONST and id(u) in sym: vals[u] = leaf(values[sym[id(u)]], u.dtype)
    elif u.op is Ops.CONST:
      if u.arg is Invalid: raise Unsupported("an Invalid lane")
      vals[u] = Lanes.ok(round_to(np.array(float(u.arg)), u.dtype) if dtypes.is_float(u.dtype) else const_array(u.arg, u.dtype))
    elif u.op in GroupOp.ALU: vals[u] = alu_node(u, [vals[s] for s in u.src])
    elif u.op is Ops.CAST: vals[u] = commit(vals[u.src[0]], u.src[0].dtype, u.dtype)
    else: raise Unsupported(f"{u.op} has no numpy evaluation here")
  return [vals[u] for u in us]

def transcendental(*us:UOp) -> int:
  """how many ops without an exact IEEE value (EXP2, LOG2, SIN, POW: the spec gives them a tolerance) the graphs hold"""
  return sum(1 for u in us for x in u.toposort() if x.op in OP_TABLE and OP_TABLE[x.op].tolerance == "transcendental")

def same_datum(a:Any, b:Any) -> np.ndarray:
  """lane by lane, the same datum by the numpy spec: equal values, every NaN one datum, +0 and -0 two (ints: equal)"""
  a, b = np.asarray(a), np.asarray(b)
  if a.dtype.kind != "f" and b.dtype.kind != "f": return a.astype(object) == b.astype(object)
  with np.errstate(invalid="ignore"):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))

def mismatches(before:UOp, after:UOp, values:dict[str, np.ndarray], symbolic:dict[str, UOp]|None=None) -> np.ndarray:
  """where the rewrite is wrong by the numpy spec: before defined, and after undefined or another datum (NaN is one
  datum, +0 and -0 are two)"""
  bl, al = evaluate([before, after], values, symbolic)
  shape = np.broadcast_shapes(bl.value.shape, al.value.shape, bl.undefined.shape, al.undefined.shape)
  bv, av = np.broadcast_to(bl.value, shape), np.broadcast_to(al.value, shape)
  if dtypes.is_float(before.dtype) and (n := transcendental(before, after)):
    from uopcheck.spec.floats import float_close, graph_tolerance   # no exact value: the spec's tolerance, classes kept
    same = float_close(bv, av, before.dtype, graph_tolerance(before.dtype, depth=n))
  elif dtypes.is_float(before.dtype): same = same_datum(bv, av)
  else: same = bv == av
  return ~np.broadcast_to(bl.undefined, shape) & (np.broadcast_to(al.undefined, shape) | ~same)

def evaluate_at(us:list[UOp], asg:dict[str, object]) -> list[Any]:
  """(value, undefined) of each of ``us`` with every leaf at one value"""
  return [(l.value.reshape(-1)[0].item(), bool(l.undefined.reshape(-1)[0])) for l in evaluate(us, {k: np.array(v) for k, v in asg.items()})]

def _identical(a, b, dt:DType) -> bool:
  return a == b if not dtypes.is_float(dt) else bool(same_datum(a, b))

def confirm(before:UOp, after:UOp, asg:dict) -> dict:
  """the numpy spec's verdict at a counterexample: confirmed when before is defined there and after is undefined or
  a different datum"""
  try: (bv, bu), (av, au) = evaluate_at([before, after], asg)
  except Exception as e: return {"confirmed": False, "why": f"numpy evaluation failed: {type(e).__name__}: {str(e)[:80]}"}
  if dtypes.is_float(before.dtype) and (n := transcendental(before, after)):
    from uopcheck.spec.floats import float_close, graph_tolerance
    wrong = not bu and (au or not bool(float_close(np.array(bv), np.array(av), before.dtype, graph_tolerance(before.dtype, depth=n))))
  else: wrong = not bu and (au or not _identical(bv, av, before.dtype))
  zero_sign = wrong and not au and dtypes.is_float(before.dtype) and bool(bv == av)
  return {"confirmed": wrong, "why": "" if wrong else f"numpy gives {bv} and {av} (before {'undefined' if bu else 'defined'})",
          "assignment": {k: show(v) for k, v in asg.items()}, "value_before": show(bv), "value_after": "undefined" if au else show(av),
          "zero_sign_only": zero_sign}

# ** numpy first: special values and random ones, or every value of a 16-bit float **

def _leaves(*us:UOp) -> dict[str, DType]:
  return {x.arg.name: x.dtype for u in us for x in u.toposort() if x.op is Ops.PARAM}

def candidates(dt:DType, rng:np.random.Generator, n_random:int=48) -> np.ndarray:
  """a float variable's search values: every probe and its negation, the smallest normal, and random ones (bit patterns,
  small integers, values in [-2, 2])"""
  from uopcheck.spec.numpy_dtypes import round_to
  if dt == dtypes.bool: return np.array([False, True])
  if not dtypes.is_float(dt): return np.array([0, 1, -1, 2, dt.min, dt.max, *rng.integers(dt.min, dt.max, 8, endpoint=True)], dtype=np.float64)
  special = [probe_value(p, dt) for p in PROBES] + [-probe_value(p, dt) for p in ("max", "tiny", 0.5, 3.0)]
  special.append(float(round_to(np.array(2.0 ** {dtypes.float16: -14, dtypes.bfloat16: -126, dtypes.float32: -126, dtypes.float64: -1022}[dt]), dt)))
  bits = rng.integers(0, 1 << dt.bitsize, n_random // 3, dtype=np.uint64)
  rand = [from_bits(int(b), dt) for b in bits] + list(rng.integers(-8, 9, n_random // 3)) + list(rng.uniform(-2, 2, n_random // 3))
  return np.array([float(round_to(np.array(float(x)), dt)) for x in special + rand], dtype=np.float64)

EXHAUSTIVE = (dtypes.float16, dtypes.bfloat16)
def all_values(dt:DType) -> np.ndarray:
  """every value of a 16-bit float (all 65536 bit patterns), as float64"""
  bits = np.arange(1 << 16, dtype=np.uint32)
  with np.errstate(invalid="ignore"):
    if dt == dtypes.bfloat16: return (bits << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    return bits.astype(np.uint16).view(np.float16).astype(np.float64)

def np_classes(x:np.ndarray, dt:DType) -> dict[str, np.ndarray]:
  """the IEEE class of each value (as ``CLASSES`` names them for z3)"""
  from uopcheck.spec.numpy_dtypes import round_to
  tiny = float(round_to(np.array(2.0 ** {dtypes.float16: -14, dtypes.bfloat16: -126, dtypes.float32: -126, dtypes.float64: -1022}[dt]), dt))
  with np.errstate(invalid="ignore"):
    a = np.abs(x)
    return {"nan": np.isnan(x), "inf": np.isinf(x), "zero": x == 0, "subnormal": (a > 0) & (a < tiny), "normal": np.isfinite(x) & (a >= tiny)}

@dataclass
class NumpyVerdict:
  verdict: str                       # refuted / proved (every value tried) / open
  assignment: dict|None = None
  classes: list[str] = field(default_factory=list)   # the classes of float input seen failing
  why: str = ""

def numpy_decide(before:UOp, after:UOp, seed:str, symbolic:dict[str, UOp]|None=None, exclude:dict[str, set[str]]|None=None) -> NumpyVerdict:
  """refuted (with an assignment) when the numpy spec finds the rewrite wrong at a searched value; proved when every value
  was tried (one 16-bit float variable, with any bools); else open. ``exclude``: leaf -> classes it may not take (a
  liberty's assumption)."""
  names = _leaves(before, after)
  for n, u in (symbolic or {}).items(): names[n] = u.dtype
  floats = [n for n, dt in names.items() if dtypes.is_float(dt)]
  rng = np.random.default_rng(int.from_bytes(seed.encode()[:8].ljust(8, b"\0"), "little"))
  exhaustive = len(floats) == 1 and names[floats[0]] in EXHAUSTIVE and all(dt == dtypes.bool for n, dt in names.items() if n not in floats)
  cands = {n: (all_values(dt) if exhaustive and n in floats else candidates(dt, rng)) for n, dt in names.items()}
  order = sorted(names)
  if np.prod([len(cands[n]) for n in order], dtype=np.float64) <= 1 << 17:   # the whole grid, one axis per leaf
    values = {n: cands[n].reshape([-1 if i == j else 1 for j in range(len(order))]) for i, n in enumerate(order)}
  else:   # random rows
    rows = 1 << 14
    values = {n: cands[n][rng.integers(0, len(cands[n]), rows)] for n in order}
    exhaustive = False
  try: bad = mismatches(before, after, values, symbolic)
  except (Unsupported, SpecError, ValueError, TypeError, OverflowError) as e: return NumpyVerdict("open", why=f"{type(e).__name__}: {str(e)[:80]}")
  cls = {n: {k: np.broadcast_to(m, bad.shape) for k, m in np_classes(np.asarray(values[n], np.float64), names[n]).items()} for n in floats}
  for n, banned in (exclude or {}).items():
    for k in banned:
      if n in cls: bad = bad & ~cls[n][k]
  if not bad.any(): return NumpyVerdict("proved" if exhaustive else "open")
  at = tuple(int(i) for i in np.argwhere(bad)[0])
  def pick(v):
    return np.broadcast_to(v, bad.shape)[at].item()
  def plain(n, x):
    return bool(x) if names[n] == dtypes.bool else x if dtypes.is_float(names[n]) else int(x)
  asg = {n: plain(n, pick(values[n])) for n in order}
  seen = [k for k in CLASSES if any((bad & cls[n][k]).any() for n in floats)]
  return NumpyVerdict("refuted", asg, seen)

def show(v:Any) -> object:
  return repr(float(v)) if isinstance(v, float) else v

def _z3_excluding(ex:dict[str, set[str]]):
  return lambda m: z3.And(*[z3.Not(CLASSES[k](m.vars[n][0], ctx=m.ctx)) for n, ks in ex.items() if n in m.vars for k in sorted(ks)])

def decide(before:UOp, after:UOp, seed:str, budget:list[int], symbolic:dict[str, UOp]|None=None,
           exclude:dict[str, set[str]]|None=None) -> tuple[str, dict|None, list[str], str]:
  """(verdict, assignment, classes seen failing, why): the numpy search first (it refutes in milliseconds, and proves a
  one-variable 16-bit instance outright), then z3 for all values within the rule's budget"""
  nv = numpy_decide(before, after, seed, symbolic, exclude)
  if nv.verdict != "open": return nv.verdict, nv.assignment, nv.classes, "every value tried (numpy)" if nv.verdict == "proved" else ""
  if budget[0] <= 0: return "budget", None, [], "z3 budget spent"
  v, info = prove(before, after, min(FLOAT_PROOF_RLIMIT, budget[0]), symbolic, _z3_excluding(exclude) if exclude else None)
  budget[0] -= FLOAT_PROOF_RLIMIT // 4 if v == "proved" else FLOAT_PROOF_RLIMIT
  if v == "refuted" and isinstance(info, dict): return v, info, [], ""
  return v, None, [], info if isinstance(info, str) else ""

