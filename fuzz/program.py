"""A graph-fuzz program as data: its description format, its validation, and the Tensors it builds.

A program is a JSON-able dict -- inputs (shape, dtype, seed, value distribution ``kind``, device), a list of steps over
value ids, outputs, and optionally ``jit`` (how many times the program runs through TinyJit with fresh inputs and fresh
Variable values) and ``carry`` (loop-carried state under TinyJit: ``[[o, k], ...]``, output ``o`` of one call is input
``k`` of the next, the very Tensor the jit returned, as in ``x = f(x)``) -- so every finding is a self-contained
reproducer: ``build_program(desc)`` rebuilds the Tensors exactly,
and ``build_program(desc, call=k)`` the k-th call of a jitted program. Nothing in a description is executed: step kinds,
functions and dtypes are looked up in the tables below, and ``validate_program`` refuses anything else in one line."""
from __future__ import annotations
from typing import Any, Iterator
import contextlib
import numpy as np
from tinygrad import Tensor, Variable, dtypes
from uopcheck.spec.errors import SpecError

DTYPES = {"float32": dtypes.float32, "float16": dtypes.float16, "bfloat16": dtypes.bfloat16, "float64": dtypes.float64,
          "int8": dtypes.int8, "int16": dtypes.int16, "int32": dtypes.int32, "int64": dtypes.int64,
          "uint8": dtypes.uint8, "uint16": dtypes.uint16, "uint32": dtypes.uint32, "uint64": dtypes.uint64, "bool": dtypes.bool}
# bfloat16 inputs are drawn in float32 and cast on the device (numpy has no bfloat16)
NP = {k: (np.float32 if k == "bfloat16" else np.bool_ if k == "bool" else getattr(np, k)) for k in DTYPES}
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, 100.0, 1e-3, np.inf, -np.inf, np.nan]
# how an input's values are drawn: the edge distributions are where reduce identities, NaN rules and wrap-around break
INPUT_KINDS = ("normal", "edge", "negative", "neginf", "nan", "extreme", "denormal")
DEVICES = ("CPU", "CPU:1")
SHARD_DEVICES = ("CPU", "CPU:1")   # a shard step splits a value over both (axis) or copies it to both (axis -1)
# a program names CPU and CPU:1; a campaign on another device (fuzz graph --device) builds them on its device and device:1
_TARGET = {"base": "CPU"}

def target_device(name:str) -> str:
  """where a program's device ``name`` (CPU, CPU:1) is built: itself, or the campaign's device (``targeting``)"""
  return name if _TARGET["base"] == "CPU" else _TARGET["base"] + name[len("CPU"):]

@contextlib.contextmanager
def targeting(base:str) -> Iterator[None]:
  """programs built inside the block put their CPU values on ``base`` (e.g. AMD) and CPU:1 on ``base``:1"""
  old, _TARGET["base"] = _TARGET["base"], base.split(":")[0]
  try: yield
  finally: _TARGET["base"] = old
from uopcheck.settings import MAX_PROGRAM_ELEMENTS as MAX_ELEMENTS, MAX_JIT_CALLS

def is_float(d:str) -> bool: return d.startswith("float") or d == "bfloat16"
def is_unsigned(d:str) -> bool: return d.startswith("uint")
def numel(shape:Any) -> int: return int(np.prod([int(s) for s in shape], dtype=object)) if len(shape) else 1

def _int_values(rng, kind:str, shape, dt:str) -> np.ndarray:
  info = np.iinfo(NP[dt])
  lo, hi = int(info.min), int(info.max)
  if kind == "negative": v = rng.integers(max(lo, -100), 0, shape) if lo < 0 else hi - rng.integers(0, 50, shape).astype(object)
  elif kind in ("neginf", "extreme"):
    pool = [lo] if kind == "neginf" else [lo, hi, lo + 1, hi - 1, 0]
    v = np.array([pool[i] for i in rng.integers(0, len(pool), numel(shape))], dtype=object).reshape(shape)
  elif kind == "edge": v = np.array([[0, 1, -1 if lo < 0 else 2, lo, hi, 7, -7 if lo < 0 else 9][i] for i in rng.integers(0, 7, numel(shape))],
                                    dtype=object).reshape(shape)
  else: v = rng.integers(max(lo, -50), min(hi, 50), shape)
  return np.array(v, dtype=NP[dt])

def _float_values(rng, kind:str, shape, dt:str) -> np.ndarray:
  fin = np.finfo(np.float16 if dt == "float16" else np.float64 if dt == "float64" else np.float32)
  base = rng.standard_normal(shape) * 3
  if kind == "negative": v = -np.abs(base) - 0.5
  elif kind == "neginf": v = np.full(shape, -np.inf)
  elif kind == "nan": v = np.where(rng.random(shape) < 0.5, np.nan, base)
  elif kind == "extreme": v = rng.choice([float(fin.max), -float(fin.max), float(fin.tiny), np.inf, -np.inf, 0.0], shape)
  elif kind == "denormal": v = float(fin.smallest_subnormal) * rng.integers(-100, 100, shape)
  elif kind == "edge": v = np.where(rng.random(shape) < 0.3, rng.choice(FLOAT_EDGES, shape), base)
  else: v = base
  with np.errstate(over="ignore"): return np.asarray(v).astype(NP[dt])

def make_input(spec:dict, call:int=0) -> Tensor:
  """One input, realized. ``call`` k > 0 draws the k-th call's fresh values (same shape, dtype, kind)."""
  shape, dt, kind = tuple(spec["shape"]), spec["dtype"], spec.get("kind", "normal")
  if dt not in DTYPES: raise SpecError(f"unknown input dtype {dt!r}; one of {sorted(DTYPES)}")
  if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in shape) or numel(shape) > MAX_ELEMENTS:
    raise SpecError(f"input shape {list(shape)[:8]} is not a list of positive ints with at most {MAX_ELEMENTS} elements")
  rng = np.random.default_rng(spec["seed"] + call * 1_000_003)
  if dt == "bool": arr = rng.integers(0, 2, shape).astype(np.bool_)
  elif is_float(dt): arr = _float_values(rng, kind, shape, dt)
  else: arr = _int_values(rng, kind, shape, dt)
  t = Tensor(arr, device=target_device(spec.get("device", "CPU")))
  return (t.cast(dtypes.bfloat16) if dt == "bfloat16" else t).realize()

def _index(rng, shape, axis:int, k:int) -> Tensor:
  """gather indices: ``shape`` with ``k`` along ``axis``, every index in range."""
  ishape = tuple(k if a == axis else s for a, s in enumerate(shape))
  return Tensor(rng.integers(0, shape[axis], ishape).astype(np.int32))

def _permutation(rng, shape, axis:int) -> Tensor:
  """scatter indices: a permutation along ``axis`` (no two writes to one place, so the result is defined)."""
  return Tensor(np.argsort(rng.random(shape), axis=axis).astype(np.int32))

def _unary(fn:str, x:Tensor) -> Tensor:
  return {"relu": lambda: x.relu(), "neg": lambda: -x, "exp2": lambda: x.exp2(), "sqrt": lambda: x.abs().sqrt(), "sin": lambda: x.sin(),
          "recip": lambda: (x * x + 1).reciprocal(), "abs": lambda: x.abs(), "trunc": lambda: x.trunc(), "square": lambda: x * x,
          "sigmoid": lambda: x.sigmoid(), "not": lambda: x.logical_not()}[fn]()

def _binary(fn:str, a:Tensor, b:Tensor) -> Tensor:
  if fn == "idiv": return a // ((b.abs() % 7) + 1)   # divisors in 1..7: no lane divides by zero
  if fn == "mod": return a % ((b.abs() % 7) + 1)
  return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "max": lambda: a.maximum(b), "min": lambda: a.minimum(b),
          "lt": lambda: a < b, "eq": lambda: a == b, "ne": lambda: a != b, "xor": lambda: a ^ b, "and": lambda: a & b}[fn]()

def _with_const(fn:str, x:Tensor, c) -> Tensor:
  """``x`` op a constant: the rules and decompositions that match constants (powers of two become shifts and masks,
  division by a constant, comparison folding) only fire on these. An int constant outside ``x``'s dtype is a program only
  for add and mul at 8 to 32 bits: tinygrad keeps ``x``'s dtype and commits the constant at it ("the value stays
  mathematical, emission truncates", uop/weak.py:11), which the spec reads wrapped -- modular arithmetic, whatever the
  reading of a compare or a division by it would be. Anywhere else it is refused."""
  if dtypes.is_int(x.dtype) and not (x.dtype.min <= c <= x.dtype.max) and not (fn in ("add", "mul") and x.dtype.itemsize <= 4):
    raise SpecError(f"constant {c} does not fit {x.dtype}")
  if fn == "tdiv": return x.div(c, rounding_mode="trunc")
  return {"add": lambda: x + c, "mul": lambda: x * c, "idiv": lambda: x // c, "mod": lambda: x % c, "max": lambda: x.maximum(c),
          "lt": lambda: x < c}[fn]()

def _cast(x:Tensor, dst:str) -> Tensor:
  dt = DTYPES[dst]
  if dtypes.is_float(x.dtype) and dtypes.is_int(dt):  # out-of-range float->int is undefined: clip into range (NaN -> 0) first
    x = (x != x).where(0, x).clip(0 if is_unsigned(dst) else -100, 100)
  return x.cast(dt)

def bound_size(n:int, s0:int, call:int) -> int:
  """The value a symreduce step's Variable is bound to at call ``call`` (a jitted program sees another one each call)."""
  return (n - 1 + call) % s0 + 1

def _symreduce(fn:str, x:Tensor, n:int, k:int, call:int, binds:dict|None, var_sizes:dict|None) -> Tensor:
  """Reduce the first ``n`` rows of axis 0, ``n`` a Variable bound per call (or given bound, by a TinyJit caller)."""
  s0 = x.shape[0]
  if var_sizes is not None: var_sizes[k] = s0
  v = binds[k] if binds and k in binds else Variable(f"n{k}", 1, s0).bind(bound_size(n, s0, call))  # type: ignore[arg-type]
  return getattr(x.shrink(((0, v),) + (None,) * (x.ndim - 1)), fn)(axis=0)

def _setitem(x:Tensor, y:Tensor, axis:int, a:int, b:int) -> Tensor:
  t = x.clone()   # a fresh buffer: setitem needs a target nothing else reads
  sl = tuple(slice(a, b) if i == axis else slice(None) for i in range(x.ndim))
  t[sl] = y[sl]
  return t

def apply_step(step:list, vals:list[Tensor], k:int, seed:int, call:int=0, binds:dict|None=None, var_sizes:dict|None=None) -> Tensor:
  """The Tensor one step makes; ``k`` is the step's index, ``seed`` seeds the index tensors gather/scatter draw."""
  kind, a = step[0], step[1:]
  rng = np.random.default_rng(seed * 7919 + k)
  if kind == "unary": return _unary(a[0], vals[a[1]])
  if kind == "binary": return _binary(a[0], vals[a[1]], vals[a[2]])
  if kind == "const": return _with_const(a[0], vals[a[1]], a[2])
  if kind == "where": return vals[a[0]].where(vals[a[1]], vals[a[2]])
  if kind == "reduce": return getattr(vals[a[1]], a[0])(axis=tuple(a[2]), keepdim=a[3])
  if kind == "symreduce": return _symreduce(a[0], vals[a[1]], a[2], k, call, binds, var_sizes)
  if kind == "permute": return vals[a[0]].permute(*a[1])
  if kind == "reshape": return vals[a[0]].reshape(*a[1])
  if kind == "pad": return vals[a[0]].pad(tuple(tuple(p) for p in a[1]))
  if kind == "shrink": return vals[a[0]].shrink(tuple(tuple(p) for p in a[1]))
  if kind == "flip": return vals[a[0]].flip(tuple(a[1]))
  if kind == "expand": return vals[a[0]].reshape(1, *vals[a[0]].shape).expand(a[1], *vals[a[0]].shape)
  if kind == "cast": return _cast(vals[a[0]], a[1])
  if kind == "bitcast": return vals[a[0]].bitcast(DTYPES[a[1]])
  if kind == "matmul": return vals[a[0]] @ vals[a[1]]
  if kind == "cumsum": return vals[a[0]].cumsum(a[1])
  if kind == "contiguous": return vals[a[0]].contiguous()
  if kind == "gather":
    x = vals[a[0]]
    return x.gather(a[1], _index(rng, x.shape, a[1], a[2]).to(x.device))
  if kind == "scatter":
    x = vals[a[0]]
    return x.scatter(a[2], _permutation(rng, x.shape, a[2]).to(x.device), vals[a[1]])
  if kind == "setitem": return _setitem(vals[a[0]], vals[a[1]], a[2], a[3], a[4])
  if kind == "assign": return vals[a[0]].assign(vals[a[1]])   # the input's Tensor now holds the assigned value
  if kind == "copy": return vals[a[0]].to(target_device(a[1]))
  if kind == "shard": return vals[a[0]].shard(tuple(map(target_device, SHARD_DEVICES)), axis=None if a[1] < 0 else a[1])
  raise SpecError(f"unknown program step {kind!r}")

FNS = {"unary": {"relu", "neg", "exp2", "sqrt", "sin", "recip", "abs", "trunc", "square", "sigmoid", "not"},
       "binary": {"add", "sub", "mul", "max", "min", "lt", "eq", "ne", "xor", "and", "idiv", "mod"},
       "reduce": {"sum", "max", "min"}, "symreduce": {"sum", "max", "min"}, "const": {"add", "mul", "idiv", "mod", "tdiv", "max", "lt"}}
ID_FIELDS = {"unary": [2], "binary": [2, 3], "const": [2], "where": [1, 2, 3], "reduce": [2], "symreduce": [2], "permute": [1], "reshape": [1],
             "pad": [1],
             "shrink": [1], "flip": [1], "expand": [1], "cast": [1], "bitcast": [1], "matmul": [1, 2], "cumsum": [1], "contiguous": [1],
             "gather": [1], "scatter": [1, 2], "setitem": [1, 2], "assign": [1, 2], "copy": [1], "shard": [1]}

def shift_ids(step:list, at:int) -> None:
  """A new input was inserted at ``at``: renumber the step's value ids."""
  for f in ID_FIELDS[step[0]]:
    if step[f] >= at: step[f] += 1

def validate_program(desc:dict) -> None:
  """Check a program description's structure without building anything: known step kinds, functions, dtypes and devices,
  value ids that exist, assign targets that are inputs, bounded sizes. Raises SpecError (one line) naming what is wrong."""
  try:
    if not isinstance(desc, dict) or not {"inputs", "steps", "outputs"} <= set(desc): raise ValueError("needs inputs, steps and outputs")
    ins, steps, outs = desc["inputs"], desc["steps"], desc["outputs"]
    if not (isinstance(ins, list) and isinstance(steps, list) and isinstance(outs, list)) or not ins or not outs:
      raise ValueError("inputs/steps/outputs must be non-empty lists")
    if len(steps) > 500: raise ValueError(f"{len(steps)} steps, more than 500")
    if type(desc.get("jit", 0)) is not int or not 0 <= desc.get("jit",
                                                                0) <= MAX_JIT_CALLS: raise ValueError(f"jit must be an int in 0..{MAX_JIT_CALLS}")
    for i in ins:
      if not isinstance(i, dict) or not isinstance(i.get("shape"), list) or type(i.get("seed")) is not int or i.get("dtype") not in DTYPES:
        raise ValueError(f"bad input {str(i)[:80]}")
      if i.get("kind", "normal") not in INPUT_KINDS or i.get("device",
                                                             "CPU") not in DEVICES: raise ValueError(f"bad input kind or device {str(i)[:80]}")
      if not all(type(x) is int and x >= 1 for x in i["shape"]) or len(i["shape"]) > 6 or numel(i["shape"]) > MAX_ELEMENTS:
        raise ValueError(f"input shape {i['shape'][:8]} is not at most 6 positive ints with at most {MAX_ELEMENTS} elements")
    n = len(ins)
    for k, st_ in enumerate(steps):
      if not isinstance(st_, list) or not st_ or st_[0] not in ID_FIELDS: raise ValueError(f"step {k}: unknown kind {str(st_)[:40]}")
      if st_[0] in FNS and (len(st_) < 2 or st_[1] not in FNS[st_[0]]): raise ValueError(f"step {k}: unknown {st_[0]} function {str(st_[1:2])[:30]}")
      if st_[0] in ("cast", "bitcast") and (len(st_) < 3 or st_[2] not in DTYPES): raise ValueError(f"step {k}: unknown dtype")
      if st_[0] == "copy" and (len(st_) < 3 or st_[2] not in DEVICES): raise ValueError(f"step {k}: unknown device")
      for f in ID_FIELDS[st_[0]]:
        if f >= len(st_) or type(st_[f]) is not int or not 0 <= st_[f] < n: raise ValueError(f"step {k} ({st_[0]}): value id out of range")
      if st_[0] == "const" and (len(st_) < 4 or type(st_[3]) not in (int, float) or (st_[1] in ("idiv", "mod", "tdiv") and st_[3] in (0, -1))):
        raise ValueError(f"step {k} (const): the constant must be a number, and no divisor 0 or -1")
      if st_[0] == "const" and type(st_[3]) is int and not -2**63 <= st_[3] < 2**64: raise ValueError(f"step {k} (const): constant out of range")
      if st_[0] == "const" and type(st_[3]) is float and not np.isfinite(st_[3]):   # inputs carry NaN/inf; the generator never draws them here
        raise ValueError(f"step {k} (const): the constant must be finite")
      if st_[0] == "shard" and (len(st_) < 3 or type(st_[2]) is not int or not -1 <= st_[2] < 6):
        raise ValueError(f"step {k} (shard): axis must be -1..5")
      if st_[0] == "assign" and st_[1] >= len(ins): raise ValueError(f"step {k}: assign target {st_[1]} is not an input")
      if st_[0] in ("gather", "scatter", "setitem", "symreduce") and not all(type(x) is int for x in st_[2 if st_[0] != "symreduce" else 3:]):
        raise ValueError(f"step {k} ({st_[0]}): non-integer argument")
      n += 1
    if not all(type(o) is int and 0 <= o < n for o in outs): raise ValueError("an output id is out of range")
    carry = desc.get("carry", [])
    if carry and not desc.get("jit"): raise ValueError("carry needs jit")
    if not isinstance(carry, list) or len(carry) > len(ins) or not all(
        isinstance(c, list) and len(c) == 2 and all(type(x) is int for x in c) and 0 <= c[0] < len(outs) and 0 <= c[1] < len(ins) for c in carry) \
        or len({c[1] for c in carry}) != len(carry):
      raise ValueError("carry must be a list of [output index, input index] pairs, each input at most once")
  except ValueError as e: raise SpecError(f"malformed program description: {e}") from None

def build_from(desc:dict, inputs:list[Tensor], call:int=0, binds:dict|None=None, var_sizes:dict|None=None) -> list[Tensor]:
  """The outputs of a (validated) program over given input Tensors -- what a TinyJit-captured function runs, with the
  symreduce Variables it is passed bound (``binds``: step index -> bound Variable). ``var_sizes`` collects each symreduce
  step's axis size (its Variable's upper bound)."""
  vals = build_values(desc, inputs, call, binds, var_sizes)
  return [vals[o] for o in desc["outputs"]]

def build_values(desc:dict, inputs:list[Tensor], call:int=0, binds:dict|None=None, var_sizes:dict|None=None) -> list[Tensor]:
  """Every value of a (validated) program, inputs first, then one Tensor per step (lazy: nothing is realized)."""
  try:
    vals = list(inputs)
    for k, step in enumerate(desc["steps"]):
      vals.append(apply_step(step, vals, k, desc["inputs"][0]["seed"], call, binds, var_sizes))
      if numel(vals[-1].shape) > MAX_ELEMENTS: raise SpecError(f"step {k} ({step[0]}) makes {vals[-1].shape}: over {MAX_ELEMENTS} elements")
    return vals
  except SpecError as e: raise SpecError(f"malformed program description: {e}") from None
  except (KeyError, IndexError, TypeError, ValueError, AssertionError) as e:  # arguments validate_program does not model (axes, pads, shapes)
    raise SpecError(f"malformed program description: {type(e).__name__}: {str(e)[:200]}") from None

def without_jit(desc:dict) -> dict:
  """The same program run plainly, once (no TinyJit, so no loop-carried state)."""
  return {k: v for k, v in desc.items() if k not in ("jit", "carry")}

def build_program(desc:dict, call:int=0) -> list[Tensor]:
  """The Tensors a program description makes (fresh every call); a malformed description is one SpecError."""
  validate_program(desc)
  return build_from(desc, [make_input(i, call) for i in desc["inputs"]], call)
