"""The reference's sum-of-products shortcut (REDUCE(ADD) of a broadcast MUL as one einsum) equals its general path."""
from __future__ import annotations
import numpy as np
import pytest
from uopcheck.check import catalog
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

def _broadcast_products():
  from tinygrad import Tensor
  a = Tensor(np.arange(1, 4, dtype=np.float32).reshape(3, 1)).realize()
  b = Tensor(np.arange(2, 5, dtype=np.float32).reshape(3, 1)).realize()
  x = a.expand(3, 4) * b.expand(3, 4)
  y = a.reshape(1, 3, 1).expand(2, 3, 4) * b.reshape(1, 3, 1).expand(2, 3, 4)
  return {"reduced axis broadcast in both": x.sum(1), "kept axis broadcast in both": x.sum(0), "everything": x.sum(),
          "3-d, leading broadcast": y.sum(2), "3-d, two axes": y.sum((0, 2))}

@pytest.mark.parametrize("case", list(_broadcast_products()))
def test_contraction_with_axes_both_factors_broadcast(case, monkeypatch):
  """An axis along which neither factor varies: reduced, the sum is n copies; kept, the result is broadcast (this path
  used to drop the factor n, and to crash in einsum on a kept one)."""
  t = _broadcast_products()[case]
  interp = tensor_interp.TensorInterpreter(load_inputs([t]))
  fused = interp.run(t.uop)
  assert interp.fused_reduces
  monkeypatch.setattr(tensor_interp, "_plan_contractions", lambda order: (set(), set()))
  plain = evaluate(t)
  np.testing.assert_allclose(fused.value, plain, rtol=1e-6)
  np.testing.assert_allclose(plain, t.numpy(), rtol=1e-6)
