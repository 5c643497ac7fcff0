"""Every ALU op x every dtype the spec allows at the tensor stage, on edge values: ref vs fast.

Each case builds the op as a UOp directly over realized input buffers, so the op under test is
exactly the one named (the Tensor API would rewrite e.g. a-b into a+(-b))."""
from __future__ import annotations
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from uopcheck.check import harness
from uopcheck.spec import op_tolerance, OP_TABLE, Stage
from uopcheck.spec.optable import TRAPPING_OPS
from uopcheck.spec.floats import pow_tolerance
from conformance.edge_values import INTS, FLOATS, edges, make, pairs
from conformance.conftest import require_dtype
from conformance.known_findings import finding_for


# the dtypes of each op-table domain (spec/optable.py): every tensor-stage ALU op of the table at every dtype of its domain
DOMAIN_DTYPES = {"float": FLOATS, "int": INTS, "int|bool": INTS + [dtypes.bool], "numeric": INTS + FLOATS,
                 "compare": INTS + FLOATS + [dtypes.bool], "select": INTS + FLOATS + [dtypes.bool], "uint64": [dtypes.uint64]}

def _cases():
  for op, e in OP_TABLE.items():
    if e.evaluate is None or Stage.TENSOR not in e.stages: continue
    for dt in DOMAIN_DTYPES[e.domain]: yield op, dt

CASES = list(_cases())

def _no_trap(op, dt):
  # integer division by zero and MIN/-1 trap on x86 (SIGFPE): the spec calls them undefined, the fast path must not run them
  if op in TRAPPING_OPS: return lambda a, b: b != 0 and not (a == dt.min and b == -1 and dt.min < 0)
  if op in (Ops.SHL, Ops.SHR): return lambda a, b: True
  return lambda a, b: True

def build(op:Ops, dt, skip=lambda *lanes: False):
  """Build ``op`` at ``dt`` over edge values, leaving out the input lanes ``skip`` names (a known finding's)."""
  def _build():
    if OP_TABLE[op].arity == 1:
      return Tensor(UOp(op, dt, (make([v for v in edges(dt) if not skip(v)], dt).uop,)))
    if op is Ops.WHERE:
      a, b = pairs(dt)
      cond = make([i % 3 == 0 for i in range(len(a))], dtypes.bool)
      return Tensor(UOp(Ops.WHERE, dt, (cond.uop, make(a, dt).uop, make(b, dt).uop)))
    if op in (Ops.SHL, Ops.SHR):
      a = edges(dt) * dt.bitsize
      b = [i // len(edges(dt)) for i in range(len(a))]  # every count in [0, bits)
      return Tensor(UOp(op, dt, (make(a, dt).uop, make(b, dt).uop)))
    no_trap = _no_trap(op, dt)
    a, b = pairs(dt, lambda x, y: no_trap(x, y) and not skip(x, y))
    if op is Ops.THREEFRY: a, b = [x * 2654435761 % 2**64 for x in range(64)], [2**63 + 12345 * x for x in range(64)]
    return Tensor(UOp(op, dtypes.bool if op in GroupOp.Comparison else dt, (make(a, dt).uop, make(b, dt).uop)))
  return _build

@pytest.mark.parametrize("op,dt", CASES, ids=[f"{op.name}-{dt.name.replace(' ', '_')}" for op, dt in CASES])
def test_alu(op, dt, conformance_log):
  require_dtype(dt)
  assert Stage.TENSOR in OP_TABLE[op].stages
  known = finding_for(op, dt)
  skip = known.covers if known else lambda *lanes: False
  tol = op_tolerance(op, dt)
  if op is Ops.POW: tol = pow_tolerance(dt, *pairs(dt, lambda x, y: not skip(x, y)))
  res = harness.check(build(op, dt, skip), f"alu {op.name} {dt}", tol=tol)
  conformance_log(res)
  assert res.ok, res.reproducer or res.error
  assert sum(c.checked for c in res.comparisons) > 0, "no lane was compared"

# ** integer division and modulo by a constant: the decompositions (shifts, masks, the signed bias for truncation,
# magic-number division) match constant divisors only, so a constant operand reaches code two buffers never do **
DIVISORS = [2, 4, 8, 64, 3, 7, 10, -2, -4, -3]

@pytest.mark.parametrize("how", ["floor", "trunc", "mod"])
@pytest.mark.parametrize("dt", INTS, ids=str)
def test_int_division_by_constants(dt, how):
  cs = [c for c in DIVISORS if c > 0 or dt.min < 0]
  vals = [v for v in edges(dt) if v != dt.min] if dt.min < 0 else edges(dt)   # MIN / -c is defined, but keep the lanes simple
  def _build():
    x = make(vals, dt)
    return [x // c if how == "floor" else x % c if how == "mod" else x.div(c, rounding_mode="trunc") for c in cs]
  r = harness.check(_build, f"{how} div {dt} by constants")
  assert r.ok, r.error
