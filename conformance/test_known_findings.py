"""Known tinygrad 0.14.0 disagreements with the spec (conformance/known_findings.py), each as xfail(strict=True)."""
from __future__ import annotations
import pytest
from tinygrad import Tensor
from tinygrad.uop.ops import UOp
from uopcheck.check import harness
from uopcheck.spec import op_tolerance
from conformance.edge_values import make
from conformance.known_findings import FINDINGS
from conformance.conftest import require_dtype

CASES = [(f, dt) for f in FINDINGS for dt in f.dtypes]

@pytest.mark.parametrize("finding,dt", CASES, ids=[f"{f.op.name}-{dt.name.replace(' ', '_')}" for f, dt in CASES])
@pytest.mark.xfail(strict=True, reason="known tinygrad 0.14.0 finding; see conformance/known_findings.py")
def test_known_finding(finding, dt):
  require_dtype(dt)
  def build():
    if isinstance(finding.lanes[0], tuple):
      a, b = [l[0] for l in finding.lanes], [l[1] for l in finding.lanes]
      return Tensor(UOp(finding.op, dt, (make(a, dt).uop, make(b, dt).uop)))
    return Tensor(UOp(finding.op, dt, (make(list(finding.lanes), dt).uop,)))
  for lane in finding.lanes: assert finding.covers(*(lane if isinstance(lane, tuple) else (lane,))), f"{lane} is not a lane of this finding"
  res = harness.check(build, f"finding {finding.op.name} {dt}", tol=op_tolerance(finding.op, dt))
  assert res.error == "" or not res.error.startswith("Ops."), res.error  # a SpecError would mean the case itself is broken
  assert res.ok, finding.what

from conformance.known_findings import GRAPH_FINDINGS

@pytest.mark.parametrize("finding", GRAPH_FINDINGS, ids=[g.name for g in GRAPH_FINDINGS])
@pytest.mark.xfail(strict=True, reason="known tinygrad 0.14.0 CPU-backend finding; see conformance/known_findings.py")
def test_known_graph_finding(finding):
  res = harness.check(finding.build, finding.name)
  assert res.ok, finding.what
