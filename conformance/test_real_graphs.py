"""Real graphs (matmul, conv2d, softmax, layernorm, RMSNorm, attention, embedding, cumsum, argmax, a toy Llama block
forward and backward): ref vs fast through tinygrad's real scheduler, codegen and HCQ2 runtime."""
from __future__ import annotations
import pytest
from uopcheck.check import harness, catalog

@pytest.mark.parametrize("name", list(catalog.REAL_GRAPHS))
def test_real_graph(name, conformance_log):
  res = harness.check(catalog.REAL_GRAPHS[name], name)
  conformance_log(res)
  assert res.ok, res.reproducer or res.error
  assert res.kernels >= 1

@pytest.mark.parametrize("name", ["matmul", "softmax", "embedding", "llama_block"])
def test_real_graph_plain_path_agrees(name, conformance_log):
  """The plain (non-HCQ2) runtime path computes the same values as ref too."""
  res = harness.check(catalog.REAL_GRAPHS[name], f"{name} (HCQ2=0)", hcq2=False)
  conformance_log(res)
  assert res.ok, res.reproducer or res.error

@pytest.mark.parametrize("seed", [1, 2])
def test_real_graph_other_seeds(seed, conformance_log):
  for name in ("matmul", "layernorm", "attention"):
    res = harness.check(lambda: catalog.REAL_GRAPHS[name](seed=seed), f"{name} seed={seed}")
    conformance_log(res)
    assert res.ok, res.reproducer or res.error
