"""Index expressions harvested from the kernels rangeify really makes: seeds for the codegen-pipeline check.

``harvest()`` realizes the real-graph catalog (and optionally graph-fuzz programs) through tinygrad's scheduler with
uopcheck's capture, and keeps the index expression of every INDEX in every kernel AST (weakint math over RANGEs,
Variables and the Invalid gate) that the z3 model can express. ``uopcheck fuzz symbolic --harvest`` writes them to
``fuzz/index_seeds.json`` (data, parsed by ``spec.uop_json``, never executed); every campaign checks each seed through the
whole pipeline before it draws random expressions."""
from __future__ import annotations
import json, pathlib
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec import uop_json
from uopcheck.spec.errors import SpecError

SEEDS = pathlib.Path(__file__).resolve().parent / "index_seeds.json"
INDEX_OPS = {Ops.CONST, Ops.RANGE, Ops.PARAM, Ops.BUFFER, Ops.STACK, Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV,
             Ops.CMOD, Ops.MAX, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.CAST}

def index_exprs(ast:UOp) -> list[UOp]:
  """The index expressions of a kernel AST that are pure integer math (no loads: data-dependent gathers are left out)."""
  out = []
  for u in ast.toposort():
    if u.op is not Ops.INDEX or len(u.src) < 2: continue
    idx = u.src[1]
    if idx.dtype == dtypes.weakint and all(x.op in INDEX_OPS and (x.op not in (Ops.PARAM, Ops.BUFFER) or x.arg.vmin_vmax is not None)
                                           for x in idx.toposort()) and any(x.op is Ops.RANGE for x in idx.toposort()):
      out.append(idx)
  return out

def harvest(graphs:list[str]|None=None) -> list[UOp]:
  """Unique index expressions from the kernels of the real graphs (all of the catalog when ``graphs`` is None)."""
  from uopcheck.check.catalog import REAL_GRAPHS
  from uopcheck import fast
  seen: dict[str, UOp] = {}
  for name in graphs or sorted(REAL_GRAPHS):
    res = fast.run(REAL_GRAPHS[name]())
    for k in res.kernels:
      for e in index_exprs(k.ast):
        try: key = json.dumps(uop_json.encode(e), sort_keys=True)
        except SpecError: continue
        seen.setdefault(key, e)
  return list(seen.values())

def write_seeds(exprs:list[UOp], path:str|pathlib.Path=SEEDS) -> pathlib.Path:
  from uopcheck.fuzz.findings_io import atomic_write_json
  return atomic_write_json(pathlib.Path(path), {"kind": "index-seeds", "exprs": [uop_json.encode(e) for e in exprs]})

def load_seeds(path:str|pathlib.Path=SEEDS) -> list[UOp]:
  """The shipped seeds (none when the file is absent); a corrupt file is one SpecError naming it."""
  p = pathlib.Path(path)
  if not p.exists(): return []
  try: d = json.loads(p.read_text())
  except (OSError, ValueError) as e: raise SpecError(f"{p}: corrupt index-seed file: {e}") from None
  if not isinstance(d, dict) or not isinstance(d.get("exprs"), list): raise SpecError(f"{p}: corrupt index-seed file: no expression list")
  return [uop_json.decode_one(x, f"{p.name} seed {i}") for i, x in enumerate(d["exprs"])]

SCALES = (1, 1 << 12, 1 << 20)   # each seed also with every loop 4096x and 1Mx longer: index values past int32

def scaled(e:UOp, k:int) -> UOp:
  """``e`` with every RANGE's end multiplied by ``k`` (the same kernel over a bigger tensor)."""
  if k == 1: return e
  subs = {r: UOp(Ops.RANGE, r.dtype, (UOp.const(r.src[0].arg * k, r.src[0].dtype),) + r.src[1:], r.arg)
          for r in e.toposort() if r.op is Ops.RANGE and r.src and r.src[0].op is Ops.CONST}
  return e.substitute(subs) if subs else e
