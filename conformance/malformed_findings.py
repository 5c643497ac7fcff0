"""Malformed findings, made by mutating the shipped ones class by class (a hostile or corrupted file a user may receive):
the generator ``conformance/test_malformed_findings.py`` feeds to every reader. Each mutant is data only; ``write_all``
writes them under their kind's file name pattern and returns (path, class) pairs. Deterministic for a seed."""
from __future__ import annotations
import copy, json, pathlib, random
from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS

def _shipped(prefix:str) -> list[dict]:
  return [json.loads(p.read_text()) for p in sorted(SHIPPED_FINDINGS.glob(f"{prefix}-*.json"))]

# ** graph findings **

def _step(d:dict, rng:random.Random) -> list:
  return d["program"]["steps"][rng.randrange(len(d["program"]["steps"]))] if d["program"]["steps"] else d["program"]["inputs"]

def _g_unknown_op(d, rng): _step(d, rng)[0] = rng.choice(["nosuchop", "exec", "__import__", "", 7])
def _g_unknown_fn(d, rng):
  st = next((s for s in d["program"]["steps"] if s[0] in ("unary", "binary", "const", "reduce")), None)
  if st is None: d["program"]["steps"].append(["unary", "os.system", 0])
  else: st[1] = rng.choice(["os.system", "nosuchfn", 3, None])
def _g_wrong_arity(d, rng):
  st = _step(d, rng)
  if isinstance(st, list): del st[1:]   # the kind alone: every operand missing
def _g_bad_shape(d, rng): d["program"]["inputs"][0]["shape"] = rng.choice([[-1], [0], ["a"], [2**40], [1] * 7, [1.5], [True], "4", None])
def _g_huge(d, rng): d["program"]["inputs"][0]["shape"] = rng.choice([[4096, 4096, 4096], [1 << 23, 2], [65536, 65536]])
def _g_bad_id(d, rng):
  st = _step(d, rng)
  if isinstance(st, list) and len(st) > 1: st[1] = rng.choice([10**6, -1, len(d["program"]["inputs"]) + len(d["program"]["steps"]) + 5])
def _g_bad_output(d, rng): d["program"]["outputs"] = rng.choice([[], [10**9], [-1], ["x"], None])
def _g_nan_const(d, rng): d["program"]["steps"].append(["const", "add", 0, rng.choice([float("nan"), float("inf"), -float("inf")])])
def _g_huge_const(d, rng): d["program"]["steps"].append(["const", "add", 0, rng.choice([2**70, -2**70, 10**30])])
def _g_bad_dtype(d, rng): d["program"]["inputs"][0]["dtype"] = rng.choice(["float128", "object", "", None, 3])
def _g_bad_axis(d, rng): d["program"]["steps"].append(["reduce", "sum", 0, [rng.choice([7, -9, 99])]])
def _g_bad_signature(d, rng): d["signature"] = rng.choice(["", "zz", "../../etc/passwd", 12, None, "ABCDEF012345"])
def _g_bad_kind(d, rng):
  if rng.random() < 0.5: d["kind"] = rng.choice(["graf", "", None, "symbolic"])
  else: d["failure"] = rng.choice(["ok", "", None, "pass"])
def _g_bad_carry(d, rng): d["program"]["carry"] = rng.choice([[[0, 99]], [[5, 0]], "x", [[0, 0], [0, 0]]])
def _g_bad_jit(d, rng): d["program"]["jit"] = rng.choice([-1, 10**6, "2", 2.5])
def _g_missing(d, rng): del d[rng.choice(["program", "signature"])]

GRAPH_CLASSES = {"unknown op": _g_unknown_op, "unknown function": _g_unknown_fn, "wrong arity": _g_wrong_arity, "bad shape": _g_bad_shape,
                 "huge element count": _g_huge, "value id out of range": _g_bad_id, "bad outputs": _g_bad_output, "NaN/inf constant": _g_nan_const,
                 "huge constant": _g_huge_const, "unknown dtype": _g_bad_dtype, "axis out of range": _g_bad_axis,
                 "malformed signature": _g_bad_signature, "unknown kind or failure": _g_bad_kind, "bad carry": _g_bad_carry,
                 "bad jit count": _g_bad_jit, "missing field": _g_missing}

# ** symbolic findings **

def _nodes(d:dict, key:str="expr") -> list: return d[key]["nodes"]

def _s_node(d, rng, key="expr") -> dict: return rng.choice(_nodes(d, key))
def _s_unknown_op(d, rng): _s_node(d, rng)["op"] = rng.choice(["NOSUCH", "exec", "", 1])
def _s_wrong_arity(d, rng):
  n = next((n for n in _nodes(d) if n.get("src")), None)
  if n is not None: n["src"] = n["src"][:1] if len(n["src"]) > 1 else n["src"] * 3
  else: _nodes(d)[-1]["src"] = [0, 0, 0]
def _s_bad_dtype(d, rng): _s_node(d, rng)["dtype"] = rng.choice(["int128", "", None, "float"])
def _s_huge_const(d, rng):
  c = next((n for n in _nodes(d) if n["op"] == "CONST"), None)
  if c is not None: c["arg"] = rng.choice([2**200, -2**100, 10**40])
def _s_shift(d, rng):
  nodes, root = _nodes(d), d["expr"]["roots"][0]
  nodes.append({"op": "CONST", "dtype": "weakint", "arg": 2**64, "src": []})
  nodes.append({"op": rng.choice(["SHL", "SHR"]), "dtype": nodes[root]["dtype"], "arg": None, "src": [root, len(nodes) - 1]})
  d["expr"]["roots"] = [len(nodes) - 1]
def _s_nan_const(d, rng):
  c = next((n for n in _nodes(d) if n["op"] == "CONST"), None)
  if c is not None: c["arg"] = {"float": rng.choice(["nan", "inf", "1.5"]), "const": True}
def _s_var(d):
  return next((n for n in _nodes(d) if n["op"] in ("BUFFER", "PARAM") and isinstance(n.get("arg"), dict)), None)
def _s_inverted(d, rng):
  v = _s_var(d)
  if v is not None:
    f = v["arg"]["fields"]
    f["vmin_vmax"] = {"tuple": [10, 0]}
def _s_duplicate(d, rng):
  v = _s_var(d)
  if v is not None:
    twin = copy.deepcopy(v)
    twin["dtype"] = "uchar" if v["dtype"] != "uchar" else "short"
    twin["arg"]["fields"]["dtype"] = {"dtype": twin["dtype"]}
    nodes, root = _nodes(d), d["expr"]["roots"][0]
    nodes.append(twin)
    nodes.append({"op": "ADD", "dtype": nodes[root]["dtype"], "arg": None, "src": [root, len(nodes) - 1]})
    d["expr"]["roots"] = [len(nodes) - 1]
def _s_assignment(d, rng): d["assignment"] = rng.choice([{"a0": 10**60}, {"a0": "1"}, {"a0": 1.5}, [1, 2], "x"])
def _s_bad_reading(d, rng): d["reading"] = rng.choice(["", "maybe", None, 3])
def _s_bad_how(d, rng): d["how"] = rng.choice(["guess", None, ""])
def _s_signature(d, rng):
  if rng.random() < 0.5: d["reason"] = "introduces UB" if d["reason"].startswith("values differ") else "values differ"
  else: d["rule"] = rng.choice(["uop/symbolic.py:1", "pipeline stage: nowhere", None])
def _s_missing(d, rng): del d[rng.choice(["expr", "simplified", "reason", "reading", "signature", "how"])]
def _s_forged(d, rng):
  """the audit forgery: a bare variable that simplify() leaves alone, an unrelated simplified graph, a far assignment"""
  d["expr"] = {"format": d["expr"].get("format"), "nodes": [
    {"op": "STACK", "dtype": "void", "arg": None, "src": []},
    {"op": "BUFFER", "dtype": "weakint", "src": [0], "arg": {"dataclass": "ParamArg", "fields": {
      "slot": -1, "dtype": {"dtype": "weakint"}, "vmin_vmax": {"tuple": [0, 10]}, "multiple_of": 1, "name": "a0",
      "addrspace": {"enum": "AddrSpace", "name": "ALU"}, "axis": None, "device": None, "volatile": False}}}], "roots": [1]}
  d["assignment"] = {"a0": rng.choice([10**60, 11, 5])}

SYMBOLIC_CLASSES = {"unknown op": _s_unknown_op, "wrong arity": _s_wrong_arity, "unknown dtype": _s_bad_dtype, "huge constant": _s_huge_const,
                    "shift by 2**64": _s_shift, "NaN/float constant": _s_nan_const, "inverted range": _s_inverted,
                    "one name, two dtypes": _s_duplicate, "bad assignment": _s_assignment, "bad reading": _s_bad_reading,
                    "bad how": _s_bad_how, "fields edited under the signature": _s_signature, "missing field": _s_missing,
                    "forged audit case": _s_forged}

# ** files **

def _deep(n:int) -> str: return "[" * n + "]" * n

def write_all(out:pathlib.Path, n_graph:int=1400, n_symbolic:int=700, seed:int=0) -> list[tuple[pathlib.Path, str, str]]:
  """(path, kind, class) of every mutant written: each class in turn over the shipped findings, plus deeply nested,
  truncated and non-object files of both kinds"""
  rng = random.Random(seed)
  out.mkdir(parents=True, exist_ok=True)
  made: list[tuple[pathlib.Path, str, str]] = []
  kinds = (("graph", _shipped("graph"), GRAPH_CLASSES, n_graph), ("symbolic", _shipped("symbolic"), SYMBOLIC_CLASSES, n_symbolic))
  for kind, base, classes, n in kinds:
    names = list(classes)
    for i in range(n):
      cls = names[i % len(names)]
      d = copy.deepcopy(base[i % len(base)])
      if i % 40 == 39: text, cls = rng.choice([_deep(100_000), "{", "[]", "null", '{"program": ' + _deep(5000) + "}"]), "not a finding object"
      else:
        classes[cls](d, rng)
        text = json.dumps(d)
      # one directory a mutant, named as a real finding is (by its signature, where it still has one), so a reader that
      # checks the name against the signature is not what refuses it
      sig = d.get("signature") if isinstance(d, dict) and isinstance(d.get("signature"), str) and len(d["signature"]) == 12 else f"{i:012x}"
      (out / str(i)).mkdir(exist_ok=True)
      p = out / str(i) / f"{kind}-{sig}.json"
      p.write_text(text)
      made.append((p, kind, cls))
  return made
