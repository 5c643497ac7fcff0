"""UOp graphs as data: a JSON list of nodes (op, dtype, arg, src indices) that is parsed, never executed.

Findings and reproducers travel between people, so reading one must not run code (no ``exec``/``eval``/``pickle``,
and so not tinygrad's ``eval_pyrender``). ``encode(u)`` writes the DAG in topological order; ``decode(d)`` rebuilds
it with ``UOp(op, dtype, src, arg)`` after checking every field against a whitelist: ops by name from ``Ops``, dtypes
by name from tinygrad's dtype table, and args built only from JSON scalars, tuples, ``Ops``/``AxisType``/``AddrSpace``
members, ``Invalid``, and the dataclasses listed in ``_DATACLASSES`` (fields checked by name). Anything else is a
one-line ``SpecError`` naming the node and what is wrong."""
from __future__ import annotations
import dataclasses, math, sys
from typing import Any
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, ParamArg, KernelInfo, AxisType
from tinygrad.dtype import DType, dtypes, DTYPES_DICT, AddrSpace, Invalid, ConstFloat
from uopcheck.spec.errors import SpecError

FORMAT = "uopcheck-uop-graph/1"
from uopcheck.settings import MAX_GRAPH_NODES as MAX_NODES
_DTYPES: dict[str, DType] = {**DTYPES_DICT, "void": dtypes.void, "weakint": dtypes.weakint, "weakfloat": dtypes.weakfloat}
_DTYPE_NAMES: dict[DType, str] = {v: k for k, v in _DTYPES.items()}
_ENUMS: dict[str, Any] = {"Ops": Ops, "AxisType": AxisType, "AddrSpace": AddrSpace}

_DATACLASSES: dict[str, type] = {"ParamArg": ParamArg, "KernelInfo": KernelInfo}

def _load_kernel_arg_types() -> None:
  """Kernel ASTs after optimization carry Opt/OptOps and Estimates. They are registered from the modules already loaded (a
  process that runs kernels has them), never imported here: the reference interpreter stays clear of codegen/renderer."""
  if "Opt" in _DATACLASSES: return
  opt, rend = sys.modules.get("tinygrad.codegen.opt"), sys.modules.get("tinygrad.renderer")
  if opt is not None and rend is not None:
    _DATACLASSES.update(Opt=opt.Opt, Estimates=rend.Estimates)
    _ENUMS["OptOps"] = opt.OptOps

def dtype_name(dt:DType) -> str:
  if dt not in _DTYPE_NAMES: raise SpecError(f"dtype {dt!r} has no name in the uop-graph format")
  return _DTYPE_NAMES[dt]

def parse_dtype(name:Any, where:str="") -> DType:
  if not isinstance(name, str) or name not in _DTYPES: raise SpecError(f"{where}unknown dtype {name!r}")
  return _DTYPES[name]

# ** args **

def encode_arg(a:Any) -> Any:
  if a is None or isinstance(a, (bool, str)): return a
  if a is Invalid: return {"invalid": True}
  if isinstance(a, Ops): return {"enum": "Ops", "name": a.name}
  if type(a).__name__ in ("Opt", "Estimates", "OptOps"): _load_kernel_arg_types()
  if isinstance(a, (AxisType, AddrSpace)) or type(a).__name__ == "OptOps": return {"enum": type(a).__name__, "name": a.name}
  if isinstance(a, int): return a
  if isinstance(a, float):  # ConstFloat too; repr keeps -0.0, nan and inf
    return {"float": float.__repr__(float(a)), "const": isinstance(a, ConstFloat)}
  if isinstance(a, DType): return {"dtype": dtype_name(a)}
  if isinstance(a, (tuple, list)): return {"tuple": [encode_arg(x) for x in a]}
  if dataclasses.is_dataclass(a) and type(a).__name__ in _DATACLASSES and _DATACLASSES[type(a).__name__] is type(a):
    return {"dataclass": type(a).__name__, "fields": {f.name: encode_arg(getattr(a, f.name)) for f in dataclasses.fields(a)}}
  raise SpecError(f"arg of type {type(a).__name__} is outside the uop-graph format", detail=repr(a)[:80])

_FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

def decode_arg(a:Any, where:str="") -> Any:
  if a is None or isinstance(a, (bool, str)): return a
  if isinstance(a, int): return a
  if isinstance(a, dict):
    keys = set(a)
    if a.get("enum") == "OptOps" or a.get("dataclass") in ("Opt", "Estimates"): _load_kernel_arg_types()
    if keys == {"invalid"} and a["invalid"] is True: return Invalid
    if keys == {"enum", "name"}:
      enum = _ENUMS.get(a["enum"])
      if enum is None or not isinstance(a["name"], str) or a["name"] not in enum.__members__: raise SpecError(f"{where}bad enum arg {a!r}")
      return enum[a["name"]]
    if keys == {"float", "const"} and isinstance(a["float"], str):
      try: v = _FLOAT_WORDS[a["float"]] if a["float"] in _FLOAT_WORDS else float(a["float"])
      except ValueError: raise SpecError(f"{where}bad float arg {a['float']!r}") from None
      return ConstFloat(v) if a["const"] is True else v
    if keys == {"dtype"}: return parse_dtype(a["dtype"], where)
    if keys == {"tuple"} and isinstance(a["tuple"], list): return tuple(decode_arg(x, where) for x in a["tuple"])
    if keys == {"dataclass", "fields"} and isinstance(a["fields"], dict):
      cls = _DATACLASSES.get(a["dataclass"]) if isinstance(a["dataclass"], str) else None
      if cls is None: raise SpecError(f"{where}dataclass {a['dataclass']!r} is not allowed in an arg")
      names = {f.name for f in dataclasses.fields(cls)}
      if not set(a["fields"]) <= names: raise SpecError(f"{where}{cls.__name__} has no field(s) {sorted(set(a['fields']) - names)}")
      try: return cls(**{k: decode_arg(v, where) for k, v in a["fields"].items()})
      except TypeError as e: raise SpecError(f"{where}bad {cls.__name__} arg: {e}") from None
  raise SpecError(f"{where}arg {str(a)[:60]!r} is outside the uop-graph format")

# ** graphs **

def encode(*roots:UOp) -> dict:
  """The DAG under ``roots`` as {"format", "nodes": [{op, dtype, arg, src}], "roots": [indices]} (sources come first)."""
  order = list(UOp.sink(*roots).toposort()) if len(roots) != 1 else list(roots[0].toposort())
  idx: dict[UOp, int] = {}
  nodes: list[dict] = []
  for u in order:
    if len(roots) != 1 and u.op is Ops.SINK and u is order[-1]: continue
    idx[u] = len(nodes)
    nodes.append({"op": u.op.name, "dtype": dtype_name(u.dtype), "arg": encode_arg(u.arg), "src": [idx[s] for s in u.src]})
  return {"format": FORMAT, "nodes": nodes, "roots": [idx[r] for r in roots]}

def decode(d:Any, name:str="graph") -> list[UOp]:
  """The root UOps of an encoded graph. Every field is checked; a violation is one SpecError naming ``name`` and the node."""
  if not isinstance(d, dict) or d.get("format") != FORMAT: raise SpecError(f"{name}: not a uop graph (format must be {FORMAT!r})")
  nodes, roots = d.get("nodes"), d.get("roots")
  if not isinstance(nodes, list) or not isinstance(roots, list): raise SpecError(f"{name}: nodes and roots must be lists")
  if len(nodes) > MAX_NODES: raise SpecError(f"{name}: {len(nodes)} nodes, more than the limit of {MAX_NODES}")
  built: list[UOp] = []
  for i, n in enumerate(nodes):
    where = f"{name}: node #{i}: "
    if not isinstance(n, dict) or set(n) != {"op", "dtype", "arg", "src"}: raise SpecError(f"{where}a node is {{op, dtype, arg, src}}")
    if not isinstance(n["op"], str) or n["op"] not in Ops.__members__: raise SpecError(f"{where}unknown op {n['op']!r}")
    src = n["src"]
    if not isinstance(src, list) or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < i for s in src):
      raise SpecError(f"{where}src must list earlier node indices, got {str(src)[:60]}")
    try: built.append(UOp(Ops[n["op"]], parse_dtype(n["dtype"], where), tuple(built[s] for s in src), decode_arg(n["arg"], where)))
    except SpecError: raise
    except Exception as e: raise SpecError(f"{where}{n['op']} could not be built: {type(e).__name__}: {str(e)[:80]}") from None
  if not roots or not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < len(built) for r in roots):
    raise SpecError(f"{name}: roots must be node indices")
  return [built[r] for r in roots]

def decode_one(d:Any, name:str="graph") -> UOp:
  rs = decode(d, name)
  if len(rs) != 1: raise SpecError(f"{name}: expected one root, found {len(rs)}")
  return rs[0]
