"""The one float tolerance of a graph or kernel output: the spec's per-dtype tolerance widened by the op chain's depth and
the longest reduction -- used by the case harness (tensor graphs), the per-kernel check and the training gate."""
from __future__ import annotations
import functools
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from uopcheck.spec.floats import Tolerance, graph_tolerance
# the ops that round (each adds error to the chain) are the op table's (OpSpec.rounds); the harness and the kernel check
# once counted different sets (12 vs 8), and this module's own copy once left out ops the table classed as rounded
from uopcheck.spec.optable import ROUNDING_OPS

def op_depth(root:UOp) -> int:
  return sum(1 for u in root.toposort(enter_calls=False) if u.op in ROUNDING_OPS)

def reduce_size(root:UOp) -> int:
  """the longest reduction: a kernel REDUCE's ranges (product of their constant ends), or a tensor REDUCE's reduced axes"""
  n = 1
  for u in root.toposort(enter_calls=False):
    if u.op is not Ops.REDUCE: continue
    if len(u.src) > 1:   # kernel AST: REDUCE(value, *RANGE)
      k = 1
      for r in u.src[1:]: k *= int(r.src[0].arg) if r.op is Ops.RANGE and r.src and r.src[0].op is Ops.CONST else 1
    elif isinstance(u.src[0]._shape, tuple):   # tensor graph: the reduced axes of the source's shape
      k = 1
      for s in u.src[0].shape[:u.arg[1]]: k *= s if isinstance(s, int) else 1
    else: k = 1
    n = max(n, k)
  return n

@functools.lru_cache(maxsize=4096)
def tolerance_for(root:UOp, dt) -> Tolerance:
  return graph_tolerance(dt, depth=max(1, op_depth(root)), reduce_size=reduce_size(root))
