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

def _overflowing_matmul():
  """one lane's products are -2.6e38, -1.3e39 (over float32's max, finite in float64) and +inf: tinygrad's float32
  product is -inf there, and the lane is NaN (seed-3 stock campaign, filed as graph-b745e504253a: a false finding)"""
  from tinygrad import Tensor
  big = np.float32(3.0e38)
  a = Tensor(np.array([[-big, -big, np.inf], [1, 2, 3]], np.float32)).realize()
  b = Tensor(np.array([[0.86, 1], [4.35, 1], [2.0, 1]], np.float32)).realize()
  return a @ b

@pytest.mark.parametrize("fused_path", [True, False])
def test_a_sum_that_can_overflow_in_some_order_is_undefined(fused_path, monkeypatch):
  """where the finite terms of a float sum add up past the dtype's max, the accumulation order decides inf or not: the
  lane has no single value and the reference marks it undefined (never a mismatch); lanes below stay checked"""
  from uopcheck.ref import TensorInterpreter
  from uopcheck.check.harness import check
  if not fused_path: monkeypatch.setattr(tensor_interp, "_plan_contractions", lambda order: (set(), set()))
  t = _overflowing_matmul()
  interp = TensorInterpreter(load_inputs([t]))
  lanes = interp.run(t.uop)
  assert bool(interp.fused_reduces) == fused_path
  u, v = lanes.undefined, lanes.value
  assert u[0, 1] and not u[1].any(), u           # -3e38 + -3e38 + inf: -inf + inf (NaN) or inf, by order
  # a product past float32's max: the general path rounds it to -inf (the lane is NaN in any order); the einsum shortcut
  # does not round products, so it may only leave the lane undefined -- never claim the float64 sum
  assert u[0, 0] if fused_path else np.isnan(v[0, 0]), (u, v)
  np.testing.assert_allclose(v[1], [1 * 0.86 + 2 * 4.35 + 3 * 2.0, 6], rtol=1e-6)
  assert check(_overflowing_matmul, "overflowing matmul").ok

def test_kernel_contraction_marks_the_same_lanes():
  """the kernel interpreter's own contraction agrees with the tensor-level one on which lanes are undefined"""
  from uopcheck.check.kernel import check_per_kernel
  res = check_per_kernel(_overflowing_matmul, "overflowing matmul")
  assert res.ok and res.kernels, res.message
