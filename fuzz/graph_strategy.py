"""The hypothesis strategy that draws graph-fuzz programs (``fuzz/program.py`` is their format), valid by construction.

Every value is tracked with its shape, dtype and device, so each step is drawn to fit: movement chains with consistent
arguments (permute, reshape, pad, shrink, flip, expand, and merges/splits of adjacent axes followed by a pad, shrink, flip
or reduction on the merged axis), broadcasting binary and ternary ops, reductions (sum only where tinygrad keeps the
dtype), reductions over a Variable-bounded prefix, casts (float->int clipped into range: the spec leaves out-of-range
casts undefined), narrowing int casts whose value is used again beside the wide one, bitcasts of inputs, matmul, cumsum,
gather, scatter through a permutation (no two writes to one place), setitem, assign to an input, copies between two
devices, sharding over both (split along an even axis, or replicated), narrow-int arithmetic that overflows and is
consumed in the same kernel (by a compare, a widening cast or a reduction of the widened value), and TinyJit capture and
replay -- with loop-carried state some of the time (``carry``: an output fed back as the next call's input, x = f(x)).
Inputs come from edge distributions too: all negative, all -inf (or the int
minimum), NaN-heavy, dtype extremes, denormals.

Two profiles: ``small`` (<= 6 steps, <= 4,096 elements: fast, for throughput) and ``large`` (<= 40 steps, up to 2M
elements: loops that are not unrolled, buffers the memory planner must reuse, boundaries on merged axes)."""
from __future__ import annotations
from typing import Any
from dataclasses import dataclass
from hypothesis import strategies as st
from uopcheck.fuzz.program import DTYPES, is_float, shift_ids, numel

@dataclass(frozen=True)
class Profile:
  max_steps: int
  max_elems: int
  dims: tuple[int, ...]
  max_ndim: int
  jit_chance: float = 0.1      # a program runs through TinyJit (3 calls: run, capture, replay)
  carry_chance: float = 0.6    # a jitted program feeds an output back as an input (x = f(x), 4 calls) when one fits
  device_chance: float = 0.1   # an input lives on the second device

PROFILES = {
  "small": Profile(6, 4096, (1, 2, 3, 4, 5, 6, 7, 8), 3),
  "large": Profile(40, 1 << 21, (1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 127, 128, 256, 1000, 1024), 4),
}
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float32", "float16", "bfloat16", "float64"]
INPUT_DTYPES = ["float32", "float32", "float16", "bfloat16", "float64", "int32", "int8", "int16", "int64", "uint8", "uint16", "uint32", "uint64"]
SUM_KEEPS_DTYPE = {"float32", "float16", "bfloat16", "float64", "int32", "int64", "uint32", "uint64"}
ITEMSIZE = {d: DTYPES[d].itemsize for d in DTYPES}
CONSTS = [2, 4, 8, 16, 1, 3, 5, 7, 0, -1, -2, -4, -3, 15, 17, 32, 64, 127, 128, 255, 256]
KINDS = ["unary", "binary", "binary", "const", "const", "flip", "where", "reduce", "movement", "movement", "cast", "narrow", "bitcast", "matmul",
         "cumsum", "contiguous",
         "gather", "scatter", "setitem", "assign", "symreduce", "copy", "merge", "split_reduce", "shard", "overflow"]
NARROW_INTS = ("int8", "uint8", "int16", "uint16")   # C promotes these to int: an inlined overflow can escape its wrap
CARRY_REFUSED = {"reshape", "permute", "flip", "shrink", "expand", "bitcast", "contiguous", "assign", "copy", "shard"}   # outputs never fed back
# what a sharded value (device "shard:AXIS", AXIS -1 when copied to both devices) may go through: tinygrad refuses
# movement on a sharded axis (pad, flip), so a sharded value only meets elementwise ops, reductions and a copy back
SHARDED_OK = {"unary", "binary", "const", "where", "reduce", "cast", "narrow", "contiguous", "copy"}

def sharded_axis(dev:str) -> int|None:
  """the axis a value is split along (-1: the same copy on both devices), None when it lives on one device"""
  return int(dev.split(":")[1]) if dev.startswith("shard:") else None

def reduced_device(dev:str, axes:list[int], keep:bool) -> str:
  """where a reduction of a value on ``dev`` lives: reducing the split axis leaves each device the whole result"""
  ax = sharded_axis(dev)
  if ax is None or ax < 0: return dev
  if ax in axes: return "shard:-1"
  return f"shard:{ax if keep else ax - sum(a < ax for a in axes)}"

def _chances(p:float) -> list[bool]:
  """draw from this for an event of probability ``p`` (False first: hypothesis shrinks towards the plain case)"""
  n = round(p * 100)
  return [False] * (100 - n) + [True] * n

@st.composite
def programs(draw:Any, max_steps:int|None=None, max_elems:int|None=None, profile:str="small") -> dict:
  """A random valid program (see the module docstring). ``max_steps``/``max_elems`` override the profile's."""
  pf = PROFILES[profile]
  max_steps, max_elems = max_steps or pf.max_steps, max_elems or pf.max_elems
  ndim = draw(st.integers(1, pf.max_ndim))
  shape = tuple(draw(st.lists(st.sampled_from(pf.dims), min_size=ndim, max_size=ndim)))
  while numel(shape) > max_elems: shape = tuple(max(1, x // 2) if x == max(shape) else x for x in shape)
  dt = draw(st.sampled_from(INPUT_DTYPES))
  kinds = ["normal", "normal", "edge", "negative", "neginf", "nan", "extreme", "denormal"]
  def new_input(shp, d, kind=None, device="CPU") -> dict:
    return {"shape": list(shp), "dtype": d, "seed": draw(st.integers(0, 2**16)), "kind": kind or draw(st.sampled_from(kinds)), "device": device}
  inputs = [new_input(shape, dt, device="CPU:1" if draw(st.sampled_from(_chances(pf.device_chance))) else "CPU") for _ in range(draw(st.integers(1,
                                                                                                                                                 2)))]
  vals = [(tuple(i["shape"]), i["dtype"], i["device"]) for i in inputs]
  steps: list[list] = []
  assigned: set[int] = set()
  def add(step, shp, d, dev) -> int:
    steps.append(step)
    vals.append((tuple(shp), d, dev))
    return len(vals) - 1
  def pick(pred=lambda s, d, dev: True):
    ok = [i for i, v in enumerate(vals) if pred(*v)]
    return draw(st.sampled_from(ok)) if ok else None
  def fits(shp) -> bool: return numel(shp) <= max_elems
  def axis_op(i, s, d, dev, ax:int):
    """a pad, shrink or flip on axis ``ax`` only"""
    m = draw(st.sampled_from(["pad", "shrink", "flip"]))
    if m == "flip": return add(["flip", i, [ax]], s, d, dev)
    if m == "pad":
      pads = [[draw(st.integers(0, 3)), draw(st.integers(0, 3))] if a == ax else [0, 0] for a in range(len(s))]
      ns = tuple(x + p[0] + p[1] for x, p in zip(s, pads))
      return add(["pad", i, pads], ns, d, dev) if fits(ns) else None
    a = draw(st.integers(0, s[ax] - 1))
    b = draw(st.integers(a + 1, s[ax]))
    return add(["shrink", i, [[a, b] if k == ax else [0, x] for k, x in enumerate(s)]], tuple(b - a if k == ax else x for k, x in enumerate(s)), d,
               dev)
  def reduce_fn(d) -> str: return draw(st.sampled_from(["sum", "max", "min"] if d in SUM_KEEPS_DTYPE else ["max", "min"]))

  for _ in range(draw(st.integers(1, max_steps))):
    kind = draw(st.sampled_from(KINDS))
    i = pick(lambda s, d, dev: d != "bool") if kind != "where" else pick()
    if i is None: continue
    s, d, dev = vals[i]
    isf = is_float(d)
    if sharded_axis(dev) is not None and kind not in SHARDED_OK: continue
    if len(s) == 0 and kind in ("reduce", "movement", "flip", "cumsum", "gather", "scatter", "setitem", "symreduce", "merge",
                                "split_reduce"): continue
    if kind == "unary":
      fn = draw(st.sampled_from(["relu", "neg", "exp2", "sqrt", "sin", "recip", "abs", "trunc", "square", "sigmoid"] if isf else ["neg", "abs",
                                                                                                                                  "relu", "square"]))
      add(["unary", fn, i], s, d, dev)
    elif kind == "binary":
      j = pick(lambda s2, d2, dev2: d2 == d and dev2 == dev and (s2 == s or s2 == tuple(1 for _ in s)))
      if j is None: j = i
      fn = draw(st.sampled_from(["add", "sub", "mul", "max", "min", "lt", "ne"] + ([] if isf else ["eq", "idiv", "mod", "xor", "and"])))
      add(["binary", fn, i, j], s, "bool" if fn in ("lt", "eq", "ne") else d, dev)
    elif kind == "const":   # an op with a constant: powers of two and their neighbours, small and signed values
      fns = ["add", "mul", "max", "lt"] + ([] if isf else ["idiv", "mod", "tdiv"])
      fn = draw(st.sampled_from(fns))
      lo, hi = (DTYPES[d].min, DTYPES[d].max) if not isf else (-1e9, 1e9)
      cs = [c for c in CONSTS if (fn not in ("idiv", "mod", "tdiv") or c not in (0, -1)) and lo <= c <= hi]
      if not isf and d != "bool" and fn in ("add", "mul") and DTYPES[d].itemsize <= 4:
        # a constant the dtype cannot hold, a quarter of the time: tinygrad keeps the tensor's dtype and commits the constant
        # at it, "the value stays mathematical, emission truncates" (uop/weak.py:11), so the spec wraps it (add and mul
        # only: there the wrapped constant is the modular arithmetic, whatever a compare or a division by it would mean)
        if draw(st.integers(0, 3)) == 0: cs = [int(hi) + 1, int(hi) + 6, int(lo) - 1]
      c = draw(st.sampled_from(cs))
      add(["const", fn, i, float(c) + 0.5 * (fn == "add") if isf else c], s, "bool" if fn == "lt" else d, dev)
    elif kind == "where":
      c = pick(lambda s2, d2, dev2: d2 == "bool" and s2 == s and dev2 == dev)
      j = pick(lambda s2, d2, dev2: s2 == s and d2 == d and dev2 == dev and d2 != "bool")
      if c is None or j is None or d == "bool": continue
      add(["where", c, i, j], s, d, dev)
    elif kind == "reduce":
      axes = sorted(draw(st.sets(st.integers(0, len(s) - 1), min_size=1)))
      keep = draw(st.booleans())
      ns = tuple(1 if a in axes else x for a, x in enumerate(s)) if keep else tuple(x for a, x in enumerate(s) if a not in axes)
      add(["reduce", reduce_fn(d), i, axes, keep], ns, d, reduced_device(dev, axes, keep))
    elif kind == "symreduce" and s[0] >= 2:
      add(["symreduce", reduce_fn(d), i, draw(st.integers(1, s[0]))], s[1:], d, dev)
    elif kind == "movement":
      m = draw(st.sampled_from(["permute", "reshape", "pad", "shrink", "flip", "expand"]))
      if m == "permute":
        p = draw(st.permutations(list(range(len(s)))))
        add(["permute", i, list(p)], tuple(s[k] for k in p), d, dev)
      elif m == "reshape":
        n = numel(s)
        opts = [(n,), (1, n)] + [(a, n // a) for a in range(2, 9) if n % a == 0]
        ns = draw(st.sampled_from(opts))
        add(["reshape", i, list(ns)], ns, d, dev)
      elif m in ("pad", "shrink", "flip") and m != "flip": axis_op(i, s, d, dev, draw(st.integers(0, len(s) - 1)))
      elif m == "flip": add(["flip", i, sorted(draw(st.sets(st.integers(0, len(s) - 1), min_size=1)))], s, d, dev)
      elif fits((2,) + s): add(["expand", i, 2], (2,) + s, d, dev)
    elif kind == "flip": add(["flip", i, [draw(st.integers(0, len(s) - 1))]], s, d, dev)   # one axis, often a small one
    elif kind == "merge" and len(s) >= 2:   # merge two adjacent axes, then act on the merged one
      a = draw(st.integers(0, len(s) - 2))
      ns = s[:a] + (s[a] * s[a + 1],) + s[a + 2:]
      m = add(["reshape", i, list(ns)], ns, d, dev)
      axis_op(m, ns, d, dev, a)
    elif kind == "split_reduce":   # split an axis, then reduce across the split (reduce-after-reshape)
      a = draw(st.integers(0, len(s) - 1))
      divs = [q for q in range(2, min(s[a], 64) + 1) if s[a] % q == 0]
      if not divs: continue
      q = draw(st.sampled_from(divs))
      ns = s[:a] + (q, s[a] // q) + s[a + 1:]
      m = add(["reshape", i, list(ns)], ns, d, dev)
      ax = draw(st.sampled_from([a, a + 1]))
      add(["reduce", reduce_fn(d), m, [ax], False], ns[:ax] + ns[ax + 1:], d, dev)
    elif kind == "cast":
      nd = draw(st.sampled_from([x for x in FLOAT_DTYPES + INT_DTYPES if x != d]))
      add(["cast", i, nd], s, nd, dev)
    elif kind == "narrow" and not isf and ITEMSIZE[d] > 1:   # a defined narrowing cast (int->int wraps), reused beside the wide value
      nd = draw(st.sampled_from([x for x in INT_DTYPES if ITEMSIZE[x] < ITEMSIZE[d]]))
      c = add(["cast", i, nd], s, nd, dev)
      add(["binary", draw(st.sampled_from(["add", "mul", "max", "xor"])), c, c], s, nd, dev)
      w = add(["cast", c, d], s, d, dev)
      fn = draw(st.sampled_from(["sub", "add", "ne"]))
      add(["binary", fn, w, i], s, "bool" if fn == "ne" else d, dev)
    elif kind == "bitcast" and i < len(inputs):  # only exact values: a tolerance can't cross a bitcast
      same = [x for x in INT_DTYPES if ITEMSIZE[x] == ITEMSIZE[d] and x != d]
      if d == "bfloat16" or not same: continue
      nd = draw(st.sampled_from(same))
      add(["bitcast", i, nd], s, nd, dev)
    elif kind == "matmul" and len(s) == 2 and isf:
      k = s[1]
      m_ = draw(st.sampled_from([x for x in pf.dims if x <= 64]))
      if not fits((k, m_)) or not fits((s[0], m_)): continue
      inputs.append(new_input((k, m_), d, "normal", dev))
      n_in = len(inputs) - 1   # new inputs go before the steps: shift every value id that refers to a step result
      for stp in steps: shift_ids(stp, n_in)
      vals.insert(n_in, ((k, m_), d, dev))
      assigned_shift = {a + 1 if a >= n_in else a for a in assigned}
      assigned.clear()
      assigned.update(assigned_shift)
      i = i + 1 if i >= n_in else i
      add(["matmul", i, n_in], (s[0], m_), d, dev)
    elif kind == "cumsum" and isf: add(["cumsum", i, draw(st.integers(0, len(s) - 1))], s, d, dev)
    elif kind == "contiguous": add(["contiguous", i], s, d, dev)
    elif kind == "gather":
      ax = draw(st.integers(0, len(s) - 1))
      k = draw(st.integers(1, max(1, min(s[ax], 64))))
      ns = tuple(k if a == ax else x for a, x in enumerate(s))
      add(["gather", i, ax, k], ns, d, dev)
    elif kind == "scatter":
      j = pick(lambda s2, d2, dev2: s2 == s and d2 == d and dev2 == dev)
      add(["scatter", i, j, draw(st.integers(0, len(s) - 1))], s, d, dev)
    elif kind == "setitem":
      j = pick(lambda s2, d2, dev2: s2 == s and d2 == d and dev2 == dev)
      ax = draw(st.integers(0, len(s) - 1))
      a = draw(st.integers(0, s[ax] - 1))
      b = draw(st.integers(a + 1, s[ax]))
      add(["setitem", i, j, ax, a, b], s, d, dev)
    elif kind == "assign":
      targets = [k for k in range(len(inputs)) if k not in assigned and vals[k][1] != "bool"]
      if not targets: continue
      t = draw(st.sampled_from(targets))
      j = pick(lambda s2, d2, dev2: (s2, d2, dev2) == vals[t])
      assigned.add(t)
      add(["assign", t, j], *vals[t])
    elif kind == "copy":
      nd_ = "CPU:1" if dev == "CPU" else "CPU"
      add(["copy", i, nd_], s, d, nd_)
    elif kind == "overflow" and d in NARROW_INTS:   # wraps in the dtype, then is read in the same kernel before any store
      hi = DTYPES[d].max
      fn = draw(st.sampled_from(["add", "mul"]))
      c = draw(st.sampled_from([hi // 2 + 1, hi, 100, 200] if fn == "add" else [2, 3, 16, 128]))
      if not DTYPES[d].min <= c <= hi: continue
      k = add(["const", fn, i, c], s, d, dev)
      use = draw(st.sampled_from(["lt", "widen", "sum"]))
      if use == "lt": add(["const", "lt", k, draw(st.sampled_from([100, c]))], s, "bool", dev)
      else:
        nd = draw(st.sampled_from(["int32", "float32", "int64"])) if use == "widen" else "int32"
        w = add(["cast", k, nd], s, nd, dev)
        if use == "sum": add(["reduce", "sum", w, list(range(len(s))), False], (), nd, reduced_device(dev, list(range(len(s))), False))
    elif kind == "shard":   # split an axis of even length over CPU and CPU:1, or copy the value to both
      ax = draw(st.sampled_from([-1] + [a for a in range(len(s)) if s[a] % 2 == 0]))
      add(["shard", i, ax], s, d, f"shard:{ax}")
  if not steps: add(["unary", "neg", 0], *vals[0])
  outs = [len(vals) - 1]
  if len(steps) > 2 and draw(st.booleans()): outs.append(len(inputs) + draw(st.integers(0, len(steps) - 2)))  # a shared intermediate
  desc = {"inputs": inputs, "steps": steps, "outputs": outs}
  if draw(st.sampled_from(_chances(pf.jit_chance))):
    desc["jit"] = 3
    # loop-carried state: an output that can stand in for an input (same shape, dtype and device) is fed back to it
    # (computed outputs only: a view or an assign hands back a view or the input itself, which TinyJit refuses as a
    # changed input -- JitError "args mismatch" -- by design)
    # Any computed value may be the carried one: it becomes an output if it is not one (outputs alone rarely fit an input)
    pairs = [(vid, k) for vid in range(len(inputs), len(vals)) for k in range(len(inputs)) if vals[vid] == vals[k]
             and sharded_axis(vals[k][2]) is None and steps[vid - len(inputs)][0] not in CARRY_REFUSED]
    if pairs and draw(st.sampled_from(_chances(pf.carry_chance))):
      vid, k = draw(st.sampled_from(pairs))
      shp, d, dev = vals[k]
      flippable = [a for a in range(len(shp)) if shp[a] > 1]
      if flippable and d != "bool" and draw(st.booleans()):
        # half of the time the carried value also reads its own input across lanes in the kernel that writes it
        # (x = f(x) + flip(x)): where the replay's input and output alias, only such a read can see the other lanes' writes
        fl = add(["flip", k, [draw(st.sampled_from(flippable))]], shp, d, dev)
        vid = add(["binary", draw(st.sampled_from(["add", "sub", "max"])), vid, fl], shp, d, dev)
      if vid not in outs: outs.append(vid)
      desc["carry"], desc["jit"] = [[outs.index(vid), k]], 4
  return desc
