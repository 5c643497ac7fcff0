"""The fast path: every captured stage passes tinygrad's structural spec, HCQ2 and plain paths agree,
the scheduler is pluggable, and a wrong scheduler is caught by the ref comparison."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, PatternMatcher, UPat, graph_rewrite
from uopcheck import fast
from uopcheck.check import harness, catalog
from uopcheck.spec import SpecError
from uopcheck.spec.structural import verify

def test_captures_every_stage():
  res = fast.run(catalog.softmax())
  assert res.hcq2 and len(res.kernel_graphs) == 1 and len(res.kernels) >= 2
  for k in res.kernels:
    assert k.ast.op is Ops.SINK and "void" in k.source and k.name in k.source
  assert set(res.spec_checked) == {"tensor", "kernel_graph", "kernel", "program"}
  assert all(n > 0 for n in res.spec_checked.values())

def test_hcq2_and_plain_paths_agree():
  a = fast.run(catalog.layernorm(), hcq2=True).outputs[0]
  b = fast.run(catalog.layernorm(), hcq2=False).outputs[0]
  np.testing.assert_array_equal(a, b)

def test_structural_spec_names_the_failing_uop():
  x = Tensor(np.ones(4, np.float32)).realize().uop
  bad = UOp(Ops.CAST, x.dtype, (x,), arg="not-a-dtype")
  with pytest.raises(SpecError, match=r"Ops.CAST .*breaks tinygrad's spec for the tensor stage at UOp #\d+"):
    verify(bad, "tensor")

def test_unknown_device_is_one_line_error():
  with pytest.raises(SpecError, match="device 'NOPE' is not a tinygrad device"): fast.run(Tensor([1.0]), device="NOPE")

def test_bad_scheduler_spec_is_one_line_error():
  with pytest.raises(SpecError, match="must be written 'package.module:function'"): fast.load_scheduler("nocolon")
  with pytest.raises(SpecError, match="cannot load scheduler"): fast.load_scheduler("uopcheck.nope:get_kernel_graph")

def test_scheduler_by_name_is_used():
  res = fast.run(catalog.matmul(), scheduler="tinygrad.schedule.rangeify:get_kernel_graph")
  assert len(res.kernel_graphs) == 1

# a deliberately wrong scheduler: rangeify, then every MAX inside a kernel becomes ADD
_max_to_add = PatternMatcher([(UPat(Ops.MAX, name="m"), lambda m: m.replace(op=Ops.ADD))])
def broken_scheduler(function:UOp) -> UOp:
  from tinygrad.schedule.rangeify import get_kernel_graph
  return graph_rewrite(get_kernel_graph(function), _max_to_add, name="inject bug", enter_calls=True)

def test_wrong_scheduler_is_caught_with_a_reproducer():
  res = harness.check(lambda: (Tensor(np.linspace(-2, 2, 12, dtype=np.float32)).realize().relu() * 2), "relu under a broken scheduler",
                      scheduler=broken_scheduler)
  assert not res.ok
  assert "first differing element" in res.reproducer and "ref=" in res.reproducer and "fast=" in res.reproducer
  assert "UOp(Ops.SINK" in res.reproducer and "# inputs:" in res.reproducer  # the graph and its inputs are in the reproducer
  good = harness.check(lambda: (Tensor(np.linspace(-2, 2, 12, dtype=np.float32)).realize().relu() * 2), "relu")
  assert good.ok
