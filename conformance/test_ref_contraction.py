"""The reference's sum-of-products shortcut (REDUCE(ADD) of a broadcast MUL as one einsum) equals its general path."""
from __future__ import annotations
import numpy as np
import pytest
from uopcheck import catalog
from uopcheck.ref import tensor_interp, evaluate, load_inputs

@pytest.mark.parametrize("name", ["matmul", "conv2d", "attention", "gelu_mlp", "llama_block"])
def test_contraction_matches_general_path(name, monkeypatch):
  out = catalog.REAL_GRAPHS[name]()
  roots = out if isinstance(out, list) else [out]
  inputs = load_inputs(roots)
  interp = tensor_interp.TensorInterpreter(inputs)
  fused = interp.run(tensor_interp._root(roots))
  assert interp.fused_reduces, f"{name} should contain at least one contraction"
  monkeypatch.setattr(tensor_interp, "_plan_contractions", lambda order: (set(), set()))
  plain = evaluate(roots, inputs)
  for f, p in zip(fused, plain):
    np.testing.assert_allclose(f.value, p, rtol=1e-6, atol=1e-6)
