"""Assignment (AFTER/STORE through views), DETACH, CONTIGUOUS and symbolic shape variables: ref vs fast."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor, Variable
from uopcheck.check import harness

def _base():
  return Tensor(np.arange(24, dtype=np.float32).reshape(4, 6)).contiguous().realize()

CASES = {
  "assign_whole": lambda: _base().assign(Tensor.ones(4, 6) * 3),
  "assign_slice": lambda: (lambda t: (t[1:3, 2:5].assign(Tensor.full((2, 3), 7.0)), t)[1])(_base()),
  "assign_then_read": lambda: (lambda t: (t.assign(t * 2 + 1), t.sum(axis=1))[1])(_base()),
  "assign_twice": lambda: (lambda t: (t.assign(t + 1), t.assign(t * 3), t)[2])(_base()),
  "assign_permuted_view": lambda: (lambda t: (t.permute(1, 0)[0:2].assign(Tensor.full((2, 4), -1.0)), t)[1])(_base()),
  "detach": lambda: (_base() * 2).detach() + 1,
  "contiguous_chain": lambda: (_base().permute(1, 0).contiguous() * 2).reshape(24)[::3],
}

@pytest.mark.parametrize("name", list(CASES))
def test_assignment_and_passthrough(name, conformance_log):
  res = harness.check(CASES[name], name)
  conformance_log(res)
  assert res.ok, res.reproducer or res.error

@pytest.mark.parametrize("n", [1, 3, 6])
def test_symbolic_shape_variable(n, conformance_log):
  """A shape with a bound Variable: the reference reads the bound value from the graph's AFTER(var, STORE)."""
  def build():
    v = Variable("n", 1, 6).bind(n)
    t = Tensor(np.arange(6, dtype=np.float32) * 1.5).contiguous().realize()
    return (t[:v] * 2 + 1).sum()
  res = harness.check(build, f"symbolic shape n={n}")
  conformance_log(res)
  assert res.ok, res.reproducer or res.error
