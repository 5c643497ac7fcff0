"""Graph fuzzing: random valid tensor programs, checked ref vs fast (and vs a candidate scheduler), signed as findings.

A program is a JSON-able description (inputs with shapes, dtypes and seeds; a list of steps over value ids;
outputs), so every finding is a self-contained reproducer: ``build_program(desc)`` rebuilds the Tensors exactly.
The hypothesis strategy ``programs()`` draws shapes and dtypes together, so every step is valid by construction:
movement chains with shape-consistent arguments, broadcasting binary and ternary ops, reductions over axis sets,
casts (float->int clipped into range first: the spec leaves out-of-range casts undefined) and bitcasts,
matmul/cumsum compositions, and several outputs sharing a subgraph so the scheduler must decide what to realize.
Integer division always gets a divisor of the form |d|%7+1, so no lane divides by zero. The campaign that runs it is
``fuzz/graph_campaign.py``."""
from __future__ import annotations
import dataclasses, json, os, pathlib
from dataclasses import dataclass
import numpy as np
from hypothesis import strategies as st
from tinygrad import Tensor, dtypes
from uopcheck.spec.errors import SpecError
from uopcheck.fuzz.findings_io import atomic_write_json, load_dir, digest

DTYPES = {"float32": dtypes.float32, "float16": dtypes.float16, "int32": dtypes.int32, "int8": dtypes.int8, "bool": dtypes.bool}
NP = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "int8": np.int8, "bool": np.bool_}
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, 100.0, 1e-3, np.inf, -np.inf, np.nan]

# ** building a program from its description **

MAX_ELEMENTS = 1 << 22   # the most elements any value of a program may hold (checked before anything is allocated)

def _numel(shape) -> int: return int(np.prod([int(s) for s in shape], dtype=object)) if len(shape) else 1

def make_input(spec:dict) -> Tensor:
  rng = np.random.default_rng(spec["seed"])
  shape, dt = tuple(spec["shape"]), spec["dtype"]
  if dt not in DTYPES: raise SpecError(f"unknown input dtype {dt!r}; one of {sorted(DTYPES)}")
  if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in shape) or _numel(shape) > MAX_ELEMENTS:
    raise SpecError(f"input shape {list(shape)[:8]} is not a list of positive ints with at most {MAX_ELEMENTS} elements")
  if dt == "bool": arr = rng.integers(0, 2, shape).astype(np.bool_)
  elif dt.startswith("int"):
    info = np.iinfo(NP[dt])
    arr = rng.integers(-50, 50, shape) if spec.get("kind") != "edge" else rng.choice([0, 1, -1, info.min, info.max, 7, -7], shape)
    arr = arr.astype(NP[dt])
  else:
    arr = rng.standard_normal(shape) * 3
    if spec.get("kind") == "edge": arr = np.where(rng.random(shape) < 0.3, rng.choice(FLOAT_EDGES, shape), arr)
    arr = arr.astype(NP[dt])
  return Tensor(arr).realize()

def _apply(step:list, vals:list[Tensor]) -> Tensor:
  kind, args = step[0], step[1:]
  if kind == "unary":
    fn, x = args[0], vals[args[1]]
    return {"relu": lambda: x.relu(), "neg": lambda: -x, "exp2": lambda: x.exp2(), "sqrt": lambda: x.abs().sqrt(), "sin": lambda: x.sin(),
            "recip": lambda: (x * x + 1).reciprocal(), "abs": lambda: x.abs(), "trunc": lambda: x.trunc(), "square": lambda: x * x,
            "sigmoid": lambda: x.sigmoid(), "not": lambda: x.logical_not()}[fn]()
  if kind == "binary":
    fn, a, b = args[0], vals[args[1]], vals[args[2]]
    if fn == "idiv": return a // ((b.abs() % 7) + 1)
    if fn == "mod": return a % ((b.abs() % 7) + 1)
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "max": lambda: a.maximum(b), "min": lambda: a.minimum(b),
            "lt": lambda: a < b, "eq": lambda: a == b, "ne": lambda: a != b, "xor": lambda: a ^ b, "and": lambda: a & b}[fn]()
  if kind == "where": return vals[args[0]].where(vals[args[1]], vals[args[2]])
  if kind == "reduce":
    fn, x, axes, keep = args[0], vals[args[1]], tuple(args[2]), args[3]
    return getattr(x, fn)(axis=axes, keepdim=keep)
  if kind == "permute": return vals[args[0]].permute(*args[1])
  if kind == "reshape": return vals[args[0]].reshape(*args[1])
  if kind == "pad": return vals[args[0]].pad(tuple(tuple(p) for p in args[1]))
  if kind == "shrink": return vals[args[0]].shrink(tuple(tuple(p) for p in args[1]))
  if kind == "flip": return vals[args[0]].flip(tuple(args[1]))
  if kind == "expand": return vals[args[0]].reshape(1, *vals[args[0]].shape).expand(args[1], *vals[args[0]].shape)
  if kind == "cast":
    x, dt = vals[args[0]], DTYPES[args[1]]
    if dtypes.is_float(x.dtype) and dtypes.is_int(dt):  # out-of-range float->int is undefined: clip into range (NaN -> 0) first
      x = (x != x).where(0, x).clip(-100, 100)
    return x.cast(dt)
  if kind == "bitcast": return vals[args[0]].bitcast(DTYPES[args[1]])
  if kind == "matmul": return vals[args[0]] @ vals[args[1]]
  if kind == "cumsum": return vals[args[0]].cumsum(args[1])
  if kind == "contiguous": return vals[args[0]].contiguous()
  raise SpecError(f"unknown program step {kind!r}")

def validate_program(desc:dict) -> None:
  """Check a program description's structure without building anything: known step kinds, value ids that exist, inputs
  of known dtypes and bounded sizes. Raises SpecError (one line) naming what is wrong."""
  try:
    if not isinstance(desc, dict) or not {"inputs", "steps", "outputs"} <= set(desc): raise ValueError("needs inputs, steps and outputs")
    ins, steps, outs = desc["inputs"], desc["steps"], desc["outputs"]
    if not (isinstance(ins, list) and isinstance(steps, list) and isinstance(outs, list)) or not ins or not outs: raise ValueError("inputs/steps/outputs must be non-empty lists")
    if len(steps) > 500: raise ValueError(f"{len(steps)} steps, more than 500")
    for i in ins:
      if not isinstance(i, dict) or not isinstance(i.get("shape"), list) or not isinstance(i.get("seed"), int) or i.get("dtype") not in DTYPES:
        raise ValueError(f"bad input {str(i)[:80]}")
      if not all(type(x) is int and x >= 1 for x in i["shape"]) or len(i["shape"]) > 6 or _numel(i["shape"]) > MAX_ELEMENTS:
        raise ValueError(f"input shape {i['shape'][:8]} is not at most 6 positive ints with at most {MAX_ELEMENTS} elements")
    n = len(ins)
    for k, st_ in enumerate(steps):
      if not isinstance(st_, list) or not st_ or st_[0] not in _ID_FIELDS: raise ValueError(f"step {k}: unknown kind {str(st_)[:40]}")
      if st_[0] in _FNS and (len(st_) < 2 or st_[1] not in _FNS[st_[0]]): raise ValueError(f"step {k}: unknown {st_[0]} function {str(st_[1:2])[:30]}")
      if st_[0] in ("cast", "bitcast") and (len(st_) < 3 or st_[2] not in DTYPES): raise ValueError(f"step {k}: unknown dtype")
      for f in _ID_FIELDS[st_[0]]:
        if f >= len(st_) or type(st_[f]) is not int or not 0 <= st_[f] < n: raise ValueError(f"step {k} ({st_[0]}): value id out of range")
      n += 1
    if not all(type(o) is int and 0 <= o < n for o in outs): raise ValueError("an output id is out of range")
  except ValueError as e: raise SpecError(f"malformed program description: {e}") from None

def build_program(desc:dict) -> list[Tensor]:
  """The Tensors a program description makes (fresh every call); a malformed description is one SpecError."""
  validate_program(desc)
  try:
    vals = [make_input(i) for i in desc["inputs"]]
    for k, step in enumerate(desc["steps"]):
      vals.append(_apply(step, vals))
      if _numel(vals[-1].shape) > MAX_ELEMENTS: raise SpecError(f"step {k} ({step[0]}) makes {vals[-1].shape}: over {MAX_ELEMENTS} elements")
    return [vals[o] for o in desc["outputs"]]
  except SpecError as e: raise SpecError(f"malformed program description: {e}") from None
  except (KeyError, IndexError, TypeError, ValueError) as e:  # arguments validate_program does not model (axes, pads, shapes)
    raise SpecError(f"malformed program description: {type(e).__name__}: {e}") from None

# ** the strategy **

@st.composite
def programs(draw, max_steps:int=6, max_elems:int=4096):
  """A random valid program: values are tracked with their shape and dtype, so each step is drawn to fit."""
  ndim = draw(st.integers(1, 3))
  shape = tuple(draw(st.lists(st.integers(1, 8), min_size=ndim, max_size=ndim)))
  while int(np.prod(shape)) > max_elems: shape = shape[:-1] + (max(1, shape[-1] // 2),)
  dt = draw(st.sampled_from(["float32", "float32", "float16", "int32", "int8"]))
  inputs = [{"shape": list(shape), "dtype": dt, "seed": draw(st.integers(0, 2**16)), "kind": draw(st.sampled_from(["normal", "edge"]))}
            for _ in range(draw(st.integers(1, 2)))]
  vals = [(tuple(i["shape"]), i["dtype"]) for i in inputs]
  steps: list[list] = []
  def add(step, shp, d):
    steps.append(step); vals.append((shp, d)); return len(vals) - 1
  def pick(pred=lambda s, d: True):
    ok = [i for i, (s, d) in enumerate(vals) if pred(s, d)]
    return draw(st.sampled_from(ok)) if ok else None
  for _ in range(draw(st.integers(1, max_steps))):
    kind = draw(st.sampled_from(["unary", "binary", "binary", "where", "reduce", "movement", "movement", "cast", "bitcast", "matmul", "cumsum", "contiguous"]))
    i = pick(lambda s, d: d != "bool") if kind not in ("where",) else pick()
    if i is None: continue
    s, d = vals[i]
    isf = d.startswith("float")
    if len(s) == 0 and kind in ("reduce", "movement", "cumsum"): continue  # a 0-d value has no axis to act on
    if kind == "unary":
      fn = draw(st.sampled_from(["relu", "neg", "exp2", "sqrt", "sin", "recip", "abs", "trunc", "square", "sigmoid"] if isf else ["neg", "abs", "relu", "square"]))
      add(["unary", fn, i], s, d)
    elif kind == "binary":
      j = pick(lambda s2, d2: d2 == d and (s2 == s or s2 == tuple(1 for _ in s)))
      if j is None: j = i
      fns = ["add", "sub", "mul", "max", "min", "lt", "ne"] + ([] if isf else ["idiv", "mod", "xor", "and"])
      fn = draw(st.sampled_from(fns))
      add(["binary", fn, i, j], s, "bool" if fn in ("lt", "eq", "ne") else d)
    elif kind == "where":
      c = pick(lambda s2, d2: d2 == "bool" and s2 == s)
      j = pick(lambda s2, d2: s2 == s and d2 == d and d2 != "bool")
      if c is None or j is None or d == "bool": continue
      add(["where", c, i, j], s, d)
    elif kind == "reduce":
      axes = sorted(draw(st.sets(st.integers(0, len(s) - 1), min_size=1)))
      keep = draw(st.booleans())
      fn = draw(st.sampled_from(["sum", "max", "min"] if isf or d == "int32" else ["max", "min"]))
      ns = tuple(1 if a in axes else x for a, x in enumerate(s)) if keep else tuple(x for a, x in enumerate(s) if a not in axes)
      if not ns: ns = ()
      add(["reduce", fn, i, axes, keep], ns, d)
    elif kind == "movement" and len(s) > 0:
      m = draw(st.sampled_from(["permute", "reshape", "pad", "shrink", "flip", "expand"]))
      if m == "permute": p = draw(st.permutations(list(range(len(s))))); add(["permute", i, list(p)], tuple(s[k] for k in p), d)
      elif m == "reshape":
        n = int(np.prod(s)); opts = [(n,), (1, n)] + [(a, n // a) for a in range(2, 9) if n % a == 0]
        ns = draw(st.sampled_from(opts)); add(["reshape", i, list(ns)], ns, d)
      elif m == "pad":
        pads = [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in s]
        ns = tuple(x + a + b for x, (a, b) in zip(s, pads))
        if int(np.prod(ns)) <= max_elems: add(["pad", i, pads], ns, d)
      elif m == "shrink":
        rs = []
        for x in s:
          a = draw(st.integers(0, x - 1)); b = draw(st.integers(a + 1, x)); rs.append([a, b])
        add(["shrink", i, rs], tuple(b - a for a, b in rs), d)
      elif m == "flip": add(["flip", i, sorted(draw(st.sets(st.integers(0, len(s) - 1), min_size=1)))], s, d)
      elif int(np.prod(s)) * 2 <= max_elems: add(["expand", i, 2], (2,) + s, d)
    elif kind == "cast":
      nd = draw(st.sampled_from([x for x in ("float32", "float16", "int32", "int8") if x != d]))
      add(["cast", i, nd], s, nd)
    elif kind == "bitcast" and d in ("float32", "int32") and i < len(inputs):  # only exact values: a tolerance can't cross a bitcast
      nd = "int32" if d == "float32" else "float32"
      if nd == "float32": continue  # int bits as float may be NaN payloads: compare only float->int reinterpretation
      add(["bitcast", i, nd], s, nd)
    elif kind == "matmul" and len(s) == 2 and isf:
      k = s[1]; m_ = draw(st.integers(1, 8))
      inputs.append({"shape": [k, m_], "dtype": d, "seed": draw(st.integers(0, 2**16)), "kind": "normal"})
      # new inputs go before the steps: shift every value id that refers to a step result
      n_in = len(inputs) - 1
      for stp in steps: _shift_ids(stp, n_in)
      vals.insert(n_in, ((k, m_), d))
      i = i + 1 if i >= n_in else i
      add(["matmul", i, n_in], (s[0], m_), d)
    elif kind == "cumsum" and isf and len(s) > 0: add(["cumsum", i, draw(st.integers(0, len(s) - 1))], s, d)
    elif kind == "contiguous": add(["contiguous", i], s, d)
  if not steps: add(["unary", "neg", 0], vals[0][0], vals[0][1])
  outs = [len(vals) - 1]
  if len(steps) > 2 and draw(st.booleans()): outs.append(len(inputs) + draw(st.integers(0, len(steps) - 2)))  # a shared intermediate
  return {"inputs": inputs, "steps": steps, "outputs": outs}

_FNS = {"unary": {"relu", "neg", "exp2", "sqrt", "sin", "recip", "abs", "trunc", "square", "sigmoid", "not"},
        "binary": {"add", "sub", "mul", "max", "min", "lt", "eq", "ne", "xor", "and", "idiv", "mod"}, "reduce": {"sum", "max", "min"}}
_ID_FIELDS = {"unary": [2], "binary": [2, 3], "where": [1, 2, 3], "reduce": [2], "permute": [1], "reshape": [1], "pad": [1], "shrink": [1],
              "flip": [1], "expand": [1], "cast": [1], "bitcast": [1], "matmul": [1, 2], "cumsum": [1], "contiguous": [1]}
def _shift_ids(step:list, at:int) -> None:
  for f in _ID_FIELDS[step[0]]:
    if step[f] >= at: step[f] += 1

# ** checking a program, signatures, findings **

@dataclass
class GraphVerdict:
  ok: bool
  kind: str = ""           # mismatch | spec-error | crash | hang (tinygrad's) | uopcheck-internal (ours: never a tinygrad finding)
  summary: str = ""
  output: int|None = None  # the first output that disagrees
  wrong: str = ""          # with a candidate: which scheduler disagrees with the reference (stock | candidate | both)

def _check_with(desc:dict, scheduler) -> GraphVerdict:
  from uopcheck import harness
  r = harness.check(lambda: build_program(desc), "fuzz", scheduler=scheduler)
  if r.ok: return GraphVerdict(True)
  if r.failed_in in ("reference", "build"): return GraphVerdict(False, "uopcheck-internal", f"{r.failed_in}: {r.error}"[:300])
  kind = "spec-error" if r.error.startswith("Ops.") else "mismatch"
  bad = next((i for i, c in enumerate(r.comparisons) if not c.ok), None)
  return GraphVerdict(False, kind, r.error or r.line(), bad)

def check_program(desc:dict, scheduler=None, candidate=None) -> GraphVerdict:
  """ref vs fast on one program. A program the generator made is valid by construction, so a refusal or failure of
  uopcheck's own reference on it is ``uopcheck-internal``, kept apart from tinygrad's findings. With a ``candidate``
  scheduler the program runs through the reference, ``scheduler`` (stock rangeify when None) and the candidate, and the
  verdict names which of them is wrong."""
  stock = _check_with(desc, scheduler)
  if candidate is None: return stock
  if stock.kind == "uopcheck-internal": return stock
  cand = _check_with(desc, candidate)
  if stock.ok and cand.ok: return stock
  if cand.kind == "uopcheck-internal": return cand
  if stock.ok: return dataclasses.replace(cand, wrong="candidate", summary=f"candidate: {cand.summary}")
  if cand.ok: return dataclasses.replace(stock, wrong="stock", summary=f"stock rangeify: {stock.summary}")
  return dataclasses.replace(stock, wrong="both", summary=f"both schedulers: {stock.summary}")

def normalized(desc:dict) -> str:
  """A program with the run taken out: step kinds and functions, dtype classes (float/int/bool) -- no shapes, seeds, axes."""
  cls = lambda d: "float" if d.startswith("float") else "bool" if d == "bool" else "int"
  ins = ",".join(sorted({cls(i["dtype"]) for i in desc["inputs"]}))
  steps = [f"{st_[0]}:{st_[1]}" if st_[0] in _FNS else f"{st_[0]}:{cls(st_[2])}" if st_[0] in ("cast", "bitcast") else st_[0] for st_ in desc["steps"]]
  return f"{ins}|{';'.join(steps)}"

def first_op(desc:dict, v:GraphVerdict) -> str:
  """The step that makes the first disagreeing output (or the last step)."""
  n_in = len(desc["inputs"])
  out = desc["outputs"][v.output] if v.output is not None and v.output < len(desc["outputs"]) else n_in + len(desc["steps"]) - 1
  if out < n_in: return "input"
  st_ = desc["steps"][out - n_in]
  return f"{st_[0]}:{st_[1]}" if st_[0] in _FNS else st_[0]

def finalize(desc:dict, v:GraphVerdict, scheduler=None, seed=None, candidate=None, blame:str|None=None, kernels:list|None=None) -> dict:
  """A shrunk failure as a finding: blame from the per-kernel check *on the shrunk case* (with the scheduler that is wrong),
  and a signature of the bug (kind, which scheduler, blame, the disagreeing op, the normalized program), not of the run.
  ``blame`` given (e.g. past the time budget, or for a hang) skips the per-kernel check."""
  if blame is None:
    blame = v.kind
    if v.kind in ("mismatch", "spec-error"):
      from uopcheck.fast.kernel_check import check_per_kernel
      sched = candidate if v.wrong == "candidate" else scheduler
      try: blame = check_per_kernel(lambda: build_program(desc), "fuzz", scheduler=sched).blame or "flaky (passes on re-check)"
      except Exception as e: blame = f"per-kernel check failed: {type(e).__name__}"
  # a bug of the candidate alone is its own; one stock rangeify has too ("stock", "both", or no candidate) is stock's bug
  op, norm = first_op(desc, v), normalized(desc)
  sig = digest(f"graph|{v.kind}|{'candidate|' if v.wrong == 'candidate' else ''}{blame}|{op}|{norm}")
  d = {"kind": "graph" if v.kind != "uopcheck-internal" else "uopcheck-internal", "failure": v.kind, "signature": sig,
       "summary": v.summary, "blame": blame, "first_op": op, "normalized": norm, "seed": seed, "program": desc}
  if v.wrong: d["wrong_scheduler"] = v.wrong
  if kernels: d["kernels"] = [{"name": n, "source": src} for n, src in kernels]
  return d

def write_finding(d:dict, directory:str|os.PathLike) -> pathlib.Path|None:
  """Atomically write a finding (temp file + rename); one file per signature, the smaller program wins. uopcheck's own
  failures go to ``internal-*.json``, apart from tinygrad's ``graph-*.json``."""
  out = pathlib.Path(directory) / f"{'internal' if d['kind'] == 'uopcheck-internal' else 'graph'}-{d['signature']}.json"
  if out.exists():
    try:
      if len(json.loads(out.read_text())["program"]["steps"]) <= len(d["program"]["steps"]): return None
    except (OSError, ValueError, KeyError, TypeError): pass
  return atomic_write_json(out, d)

def _validate(d:dict) -> None:
  validate_program(d["program"])
  if not isinstance(d.get("signature"), str): raise ValueError("missing signature")

def load_graph_findings(directory:str|os.PathLike, pattern:str="graph-*.json") -> tuple[list[tuple[pathlib.Path, dict]], list[str]]:
  """(every good graph finding, one line per corrupt file skipped)."""
  return load_dir(directory, pattern, _validate)

