"""The reference interpreter is independent of what it checks: it never imports tinygrad's schedule, codegen,
engine or runtime modules, and never calls simplify / graph_rewrite / a PatternMatcher while evaluating."""
from __future__ import annotations
import ast, pathlib
import numpy as np
import pytest
import tinygrad.uop.ops as tg_ops
from uopcheck.check import catalog
from uopcheck.ref import evaluate, load_inputs

REF_DIRS = [pathlib.Path(__file__).resolve().parent.parent / d for d in ("ref", "spec")]
FORBIDDEN = ("tinygrad.schedule", "tinygrad.codegen", "tinygrad.engine", "tinygrad.runtime", "tinygrad.renderer", "tinygrad.uop.symbolic",
             "tinygrad.uop.divandmod", "tinygrad.tensor", "tinygrad.device")
# spec/structural.py is the one place that *runs tinygrad's own structural spec* by design; it is not used by ref/
ALLOWED_FILES = {"structural.py"}

def _imports(path:pathlib.Path) -> list[str]:
  mods = []
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import): mods += [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module: mods.append(node.module)
  return mods

def test_ref_and_spec_import_no_rewrite_pass_codegen_or_runtime():
  checked = 0
  for d in REF_DIRS:
    for f in d.glob("*.py"):
      if f.name in ALLOWED_FILES: continue
      for m in _imports(f):
        assert not m.startswith(FORBIDDEN), f"{f.relative_to(d.parent)} imports {m}"
      checked += 1
  assert checked >= 8

def test_ref_validates_with_tinygrads_spec_but_evaluates_without_it():
  """The interpreters check their input with tinygrad's structural spec (spec.structural) and nothing else of tinygrad's
  matchers: evaluation proper is checked with every rewrite entry point disabled below."""
  users = {f.name for f in REF_DIRS[0].glob("*.py") if "uopcheck.spec.structural" in _imports(f)}
  assert users == {"tensor_interp.py", "kernel_interp.py"}, users

@pytest.mark.parametrize("name", ["softmax", "attention", "llama_block", "cumsum", "embedding"])
def test_ref_runs_with_rewriting_disabled(name, monkeypatch):
  """Build the graph and read its input bytes first, then make every rewrite entry point raise while the reference evaluates."""
  out = catalog.REAL_GRAPHS[name]()
  roots = out if isinstance(out, list) else [out]
  inputs = load_inputs(roots)
  assert inputs, "the graph has realized inputs"
  from uopcheck.spec.structural import verify
  for r in roots: verify(r.uop, "tensor")   # input validation runs tinygrad's spec matcher: done before rewriting is disabled
  def boom(*a, **k): raise AssertionError("the reference called a tinygrad rewrite")
  monkeypatch.setattr(tg_ops, "graph_rewrite", boom)
  monkeypatch.setattr(tg_ops.UOp, "simplify", boom)
  monkeypatch.setattr(tg_ops.UOp, "ssimplify", boom)
  monkeypatch.setattr(tg_ops.PatternMatcher, "rewrite", boom)
  res = evaluate(roots, inputs, check_spec=False)
  assert all(np.isfinite(np.asarray(r, dtype=np.float64)).all() for r in res)
