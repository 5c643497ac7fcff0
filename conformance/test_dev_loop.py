"""The edit loop: ``make quick`` and the pre-commit hooks run the same checks, and ruff enforces tinygrad's own rule
selection (one statement per line, no lambda assignment, ...) from pyproject, on the tree and on new code."""
from __future__ import annotations
import pathlib, re, subprocess, sys
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUFF = pathlib.Path(sys.executable).parent / "ruff"

def _recipe(target:str) -> list[str]:
  text = (ROOT / "Makefile").read_text()
  m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
  assert m, f"make {target} is missing"
  return [ln.strip().replace("$(VENV)", ".venv").replace("$(PY)", ".venv/bin/python") for ln in m.group(1).splitlines()]

def test_pre_commit_hooks_run_what_make_quick_runs():
  yaml = pytest.importorskip("yaml")
  hooks = {h["id"]: h for r in yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"] for h in r["hooks"]}
  assert set(hooks) == {"ruff", "mypy", "quick-tests"}
  quick = _recipe("quick") + _recipe("lint")
  for h in hooks.values():
    assert any(line.startswith(h["entry"]) for line in quick), (h["entry"], quick)
  assert '-m "not slow"' in hooks["quick-tests"]["entry"] and hooks["quick-tests"]["stages"] == ["pre-push"]

@pytest.mark.skipif(not RUFF.exists(), reason="ruff is installed by the dev extra (make install)")
@pytest.mark.parametrize("code,rule", [("a = 1; b = 2\n", "E702"), ("f = lambda: 0\n", "E731"), ("def g(list): return list\n", "A002"),
                                       ("x = 1 \n", "W291")])
def test_ruff_enforces_tinygrads_selection_on_new_code(code, rule):
  r = subprocess.run([str(RUFF), "check", "--stdin-filename", "fuzz/new_module.py", "--output-format", "concise", "-"], input=code,
                     capture_output=True, text=True, cwd=ROOT)
  assert r.returncode == 1 and rule in r.stdout, r.stdout + r.stderr

def _unannotated_public(path:pathlib.Path) -> list[str]:
  """public module- and class-level functions of ``path`` with a parameter or the return left unannotated"""
  import ast
  out: list[str] = []
  def visit(body:list, owner:str="") -> None:
    for node in body:
      if isinstance(node, ast.ClassDef) and not node.name.startswith("_"): visit(node.body, node.name + ".")
      elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
        a = node.args
        params = [p for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x] if p.arg not in ("self", "cls")]
        if node.returns is None or any(p.annotation is None for p in params): out.append(f"{path.name}:{node.lineno} {owner}{node.name}")
  visit(ast.parse(path.read_text()).body)
  return out

def test_every_public_function_in_fuzz_is_fully_annotated(tmp_path):
  """issue 30: fuzz/ at the anchors' level -- every public function's parameters and return are annotated (mypy then
  checks every call into the fuzzers); 61 were not"""
  missing = [m for f in sorted((ROOT / "fuzz").glob("*.py")) for m in _unannotated_public(f)]
  assert not missing, missing
  probe = tmp_path / "probe.py"   # the checker sees what it must: a public def or method missing one annotation, not a private one
  probe.write_text("def f(x): return x\ndef g(x:int) -> int: return x\ndef _h(x): return x\nclass C:\n  def m(self, *a:int): pass\n")
  assert _unannotated_public(probe) == ["probe.py:1 f", "probe.py:5 C.m"]
