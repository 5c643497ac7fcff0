"""Exhaustive evaluation of an integer expression over every assignment of its (small-ranged) variables.

Each variable is one numpy axis; the expression is evaluated once over the whole grid with the spec's semantics
(``ref.elementwise``), so "before == after wherever before is defined" can be checked for every assignment --
a proof for those bounds, and the fast pre-check before z3."""
from __future__ import annotations
from typing import Any
import numpy as np
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes, Invalid, AddrSpace
from uopcheck.spec.alu import Lanes
from uopcheck.spec.numpy_dtypes import np_dtype, const_array
from uopcheck.ref.elementwise import alu_node, commit

class TooLarge(Exception): pass

def declarations(*us:UOp) -> list[tuple[str, object, int, int]]:
  """Every variable declaration under ``us``: (name, dtype, lo, hi). One name may be declared more than once."""
  out = []
  for u in UOp.sink(*us).toposort():
    if u.op in (Ops.BUFFER, Ops.PARAM) and u.arg.addrspace is AddrSpace.ALU and u.arg.vmin_vmax is not None:
      out.append((u.arg.name, u.dtype, int(u.arg.vmin_vmax[0]), int(u.arg.vmin_vmax[1])))
  return out

def variables(*us:UOp) -> dict[str, tuple[int, int]]:
  """name -> the values it may take: one name is one runtime value, so every declaration's range applies (intersected).
  An empty intersection is (lo, hi) with lo > hi: no assignment exists."""
  out: dict[str, tuple[int, int]] = {}
  for name, _, lo, hi in declarations(*us):
    olo, ohi = out.get(name, (lo, hi))
    out[name] = (max(lo, olo), min(hi, ohi))
  return out

def in_every_range(assignment:dict[str, int], *us:UOp) -> str|None:
  """None when ``assignment`` gives every variable of ``us`` a value inside each of its declared ranges; else why not."""
  for name, dt, lo, hi in declarations(*us):
    if name not in assignment: return f"variable {name} has no value"
    if not lo <= assignment[name] <= hi: return f"{name}={assignment[name]} lies outside its declared range [{lo}, {hi}] ({dt})"
  return None

def evaluate_grid(us:list[UOp], names:list[str], bounds:dict[str, tuple[int, int]]) -> list[Lanes]:
  n = len(names)
  vals: dict[UOp, Lanes] = {}
  for u in UOp.sink(*us).toposort():
    if u.op is Ops.SINK: continue
    if u.op in (Ops.BUFFER, Ops.PARAM) and u.arg.addrspace is AddrSpace.ALU and u.arg.vmin_vmax is not None:
      lo, hi = bounds[u.arg.name]
      shp = [1] * n
      shp[names.index(u.arg.name)] = hi - lo + 1
      grid_t = np.uint64 if hi > np.iinfo(np.int64).max else np.int64  # uint64 values past int64 (lo >= 0 then)
      vals[u] = Lanes.ok(np.arange(lo, hi + 1, dtype=grid_t).astype(np_dtype(u.dtype)).reshape(shp))
    elif u.op is Ops.STACK and u.dtype == dtypes.void: vals[u] = Lanes.ok(np.zeros((1,) * n, np.int64))
    elif u.op is Ops.CONST:
      shp = [1] * n
      if u.arg is Invalid: vals[u] = Lanes(np.zeros(shp, np.bool_), np.ones(shp, bool), np.zeros(shp, bool))
      else: vals[u] = Lanes.ok(np.broadcast_to(const_array(u.arg, u.dtype), shp))
    elif u.op in GroupOp.ALU: vals[u] = alu_node(u, [vals[s] for s in u.src])
    elif u.op is Ops.CAST: vals[u] = commit(vals[u.src[0]], u.src[0].dtype, u.dtype)
    else: raise TooLarge(f"{u.op} has no exhaustive evaluator")
  return [vals[u] for u in us]

def exhaustive_check(before:UOp, after:UOp, limit:int=1 << 14, ub_is_undefined:bool=True) -> tuple[bool, dict|None, Any, Any]|None:
  """None when the domain is too large; else (ok, first counterexample assignment or None, before value, after value)."""
  b = variables(before, after)
  size = 1
  for lo, hi in b.values(): size *= hi - lo + 1
  if any(lo > hi for lo, hi in b.values()): return True, None, None, None  # no assignment satisfies every declaration
  if size > limit or size <= 0: return None
  names = sorted(b)
  try: bv, av = evaluate_grid([before, after], names, b)
  except (TooLarge, OverflowError): return None  # e.g. a weakint constant past int64: z3's Int decides
  if before.dtype == dtypes.weakint and bv.undefined.any(): return None  # left int64: only z3's Int can say
  shape = np.broadcast_shapes(bv.value.shape, av.value.shape)
  bdef = ~np.broadcast_to(bv.undefined | (bv.ub_overflow if ub_is_undefined else False), shape)
  adef = ~np.broadcast_to(av.undefined | (av.ub_overflow if ub_is_undefined else False), shape)
  eq = np.broadcast_to(bv.value, shape) == np.broadcast_to(av.value, shape)
  bad = bdef & (~adef | ~eq)
  if not bad.any(): return True, None, None, None
  at = tuple(int(i) for i in np.argwhere(bad)[0])
  asg = {nm: b[nm][0] + (at[i] if np.shape(np.broadcast_to(bv.value, shape))[i] > 1 else 0) for i, nm in enumerate(names)}
  return False, asg, np.broadcast_to(bv.value, shape)[at].item(), (np.broadcast_to(av.value, shape)[at].item() if adef[at] else "undefined")

def evaluate_at(us:list[UOp], assignment:dict[str, int], ub_is_undefined:bool=True) -> list[tuple[object, bool]]:
  """(value, undefined) of each of ``us`` at one assignment, by the numpy semantics (an independent second opinion to z3).
  Signed overflow counts as undefined only under C's reading (``ub_is_undefined``)."""
  names = sorted(assignment)
  lanes = evaluate_grid(us, names, {n: (v, v) for n, v in assignment.items()})
  return [(l.value.reshape(-1)[0].item(), bool(l.undefined.reshape(-1)[0] or (ub_is_undefined and l.ub_overflow.reshape(-1)[0])))
          for l in lanes]
