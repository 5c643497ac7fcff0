"""The layers as the README's Architecture section draws them: no module imports upward (function-level imports included),
and siblings of one floor do not import each other."""
import ast, pathlib, re
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

def readme_layers(text:str) -> tuple[dict, dict]:
  """The layer map, read from the README's Architecture table (written once, there): each line that starts with a floor
  names the folders (``fuzz/``) and modules (``uopcheck/runs.py``) on it, then says what they are. Floors >= 0 are layers
  (folder -> (name, floor); ``uopcheck/`` itself is the top, the rest of uopcheck/); floors below 0 are utilities any
  layer may use (module -> (name, floor)), which import no layer and only lower utilities."""
  block = text.split("## Architecture", 1)[1].split("```", 2)[1]
  layers: dict[str, tuple] = {}
  utility: dict[str, tuple] = {}
  for line in block.splitlines():
    if not (m := re.match(r"\s*(-?\d+(?:\.\d+)?)\s+(.*)", line)): continue   # a line of description goes on
    f = float(m.group(1))
    floor = int(f) if f.is_integer() else f
    for tok in m.group(2).split():
      if not re.fullmatch(r"[\w/]+(/|\.py)", tok): break
      path = tok.rstrip("/")
      if floor >= 0: layers[path] = ("top" if path == "uopcheck" else path.split("/")[-1], floor)
      else:
        module = "uopcheck." + path.removeprefix("uopcheck/").removesuffix(".py").replace("/", ".")
        utility[module] = (module.split(".")[-1], floor)
  return layers, utility

LAYERS, UTILITY = readme_layers((ROOT / "README.md").read_text())
PACKAGE = {"check": "uopcheck/check", "spec": "spec", "ref": "ref", "fast": "fast", "fuzz": "fuzz", "training": "training", "amd": "amd"}

def layer_of_file(p:pathlib.Path):
  rel = p.relative_to(ROOT).as_posix()
  mod = "uopcheck." + rel.removeprefix("uopcheck/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")
  if (u := next((u for u in UTILITY if mod == u or mod.startswith(u + ".")), None)) is not None: return UTILITY[u]
  return next(LAYERS[k] for k in sorted(LAYERS, key=len, reverse=True) if rel.startswith(k + "/"))

def layer_of_module(mod:str):
  for u, layer in UTILITY.items():
    if mod == u or mod.startswith(u + "."): return layer
  parts = mod.split(".")
  if parts[0] != "uopcheck": return None
  if len(parts) > 1 and parts[1] in PACKAGE: return LAYERS[PACKAGE[parts[1]]]
  return LAYERS["uopcheck"]

def imports(p:pathlib.Path):
  for n in ast.walk(ast.parse(p.read_text())):
    if isinstance(n, ast.Import): yield from ((a.name, n.lineno) for a in n.names)
    elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
      if n.module != "uopcheck": yield n.module, n.lineno   # (the package itself only runs its __init__)
      for a in n.names: yield f"{n.module}.{a.name}", n.lineno   # ``from uopcheck import fast`` names a layer too

FILES = sorted(p for d in ("spec", "ref", "fast", "fuzz", "training", "amd", "uopcheck") for p in (ROOT / d).rglob("*.py"))

def test_the_readme_table_is_the_layer_map():
  """the table places every folder and every utility the code has (a new module the table does not place fails
  ``layer_of_file``); a change to a floor in the README is a change to what the import test enforces"""
  assert LAYERS == {"uopcheck": ("top", 5), "training": ("training", 4), "amd": ("amd", 4), "fuzz": ("fuzz", 3),
                    "uopcheck/check": ("check", 2), "ref": ("ref", 1), "fast": ("fast", 1), "spec": ("spec", 0)}
  assert UTILITY["uopcheck.live"] == ("live", -1.5) and UTILITY["uopcheck.rulecov"] == ("rulecov", -1)
  where = {u: ROOT / "uopcheck" / u.removeprefix("uopcheck.").replace(".", "/") for u in UTILITY}
  assert len(UTILITY) >= 10 and all(p.with_suffix(".py").exists() or p.is_dir() for p in where.values()), where
  assert all((ROOT / folder).is_dir() for folder in LAYERS)
  moved, _ = readme_layers((ROOT / "README.md").read_text().replace("\n 3    fuzz/", "\n 6    fuzz/"))
  assert moved["fuzz"] == ("fuzz", 6)   # the test reads what the README says

def test_every_layer_has_modules():
  seen = {layer_of_file(p)[0] for p in FILES}
  assert {"spec", "ref", "fast", "check", "fuzz", "training", "amd", "top", "rulecov", "atomic", "settings", "progress", "runs", "results"} <= seen

def violations(path:pathlib.Path, name:str, floor:int) -> list[str]:
  bad = []
  for mod, line in imports(path):
    tgt = layer_of_module(mod)
    if tgt is None or tgt[0] == name: continue
    if (floor < 0 and tgt[1] >= 0) or tgt[1] > floor or (tgt[1] == floor and tgt[0] != name):
      bad.append(f"line {line}: {name} imports {mod} ({tgt[0]})")
  return bad

@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_imports_upward_or_sideways(path):
  assert not (bad := violations(path, *layer_of_file(path))), bad

def test_the_checker_catches_upward_and_sideways_imports(tmp_path):
  """the test above must be able to fail: a function-level import of the verdict layer from fast, and ref from fast"""
  f = tmp_path / "m.py"
  f.write_text("import numpy\nfrom uopcheck.spec import SpecError\ndef f():\n"
               "  from uopcheck.check import harness\n  import uopcheck.ref.kernel_interp\n")
  assert violations(f, *LAYERS["fast"]) == ["line 4: fast imports uopcheck.check (check)", "line 4: fast imports uopcheck.check.harness (check)",
                                            "line 5: fast imports uopcheck.ref.kernel_interp (ref)"]
  assert violations(f, *LAYERS["fuzz"]) == []

# Op properties live in the op table (spec/optable.py: traps, overflow_ub, rounds; SIZED_INTS): a module-level set of ops
# outside spec/ restates one and drifts (the tolerance module's copy once left out ops the table classed as rounded). The
# ones left name what they are for -- not an op property:
OP_SET_ALLOWED = {
  "fuzz/index_seeds.py:INDEX_OPS": "which kernel index expressions the seed harvest keeps (a filter, not a property)",
  "ref/tensor_interp.py:PASSTHROUGH": "the reference interpreter's dispatch", "ref/tensor_interp.py:STORAGE": "the reference's dispatch",
  "ref/tensor_interp.py:VIEW_OPS": "the reference's dispatch"}

def module_op_sets(path:pathlib.Path) -> list[str]:
  """module-level names bound to a literal set, list or tuple (or frozenset/set/tuple/list of one) of two or more ``Ops.X``"""
  out = []
  for st in ast.parse(path.read_text()).body:
    if not isinstance(st, (ast.Assign, ast.AnnAssign)) or st.value is None: continue
    v = st.value
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("frozenset", "set", "tuple", "list") and v.args: v = v.args[0]
    if not isinstance(v, (ast.Set, ast.List, ast.Tuple)): continue
    n_ops = sum(1 for x in ast.walk(v) if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == "Ops")
    if n_ops >= 2:
      for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
        if isinstance(t, ast.Name): out.append(f"{path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name}:{t.id}")
  return out

def test_op_properties_are_stated_only_in_the_op_table():
  found = [s for p in FILES if not p.relative_to(ROOT).as_posix().startswith("spec/") for s in module_op_sets(p)]
  assert sorted(set(found) - set(OP_SET_ALLOWED)) == [], "state the property in spec/optable.py and derive the set there"
  assert set(OP_SET_ALLOWED) <= set(found), "an allowed op set is gone: drop it from OP_SET_ALLOWED"

def test_the_op_set_check_catches_a_new_one(tmp_path):
  f = tmp_path / "probe.py"
  f.write_text("from tinygrad.uop import Ops\nDIVS = frozenset({Ops.CDIV, Ops.CMOD})\nONE = [Ops.ADD]\ndef f(): return (Ops.ADD, Ops.MUL)\n")
  assert module_op_sets(f) == ["probe.py:DIVS"]
