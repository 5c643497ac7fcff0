"""The codegen integer pipeline, stage by stage, as tinygrad's ``full_rewrite_to_sink`` runs it on index math.

An index expression is weakint until "lower all index dtypes" narrows it to int32 (or int64 where its range needs it);
the stages around that narrowing are where a sound ``simplify()`` can still end in a wrong kernel. ``run_pipeline``
applies, in order (the rewrites and matchers of ``tinygrad/codegen/__init__.py``, CPU renderer's ops):

1. ``extra symbolic``: ``sym`` + ``indexing_simplify``
2. ``lower all index dtypes``: ``symbolic_simple`` + ``pm_lower_index_dtype`` + ``indexing_simplify``
3. ``final symbolic``: ``symbolic``
4. ``early decompositions``: ``symbolic_simple`` + the renderer's simplifying rewrites
5. ``decomp dtypes``: ``pm_dtype_decomps`` + ``pm_commit_weak``
6. ``late decompositions``: + late rewrites (division by a constant as multiply-shift, mul by 2^k as a shift)

``check_pipeline`` proves the last stage a refinement of the input (z3, numpy-confirmed like every refutation) and, when
it is not, names the first stage whose own step breaks refinement."""
from __future__ import annotations
import functools
from typing import Any, Callable
from tinygrad.uop.ops import UOp, PatternMatcher, graph_rewrite
from tinygrad.dtype import dtypes
from uopcheck.spec.ints import OverflowReading

@functools.cache
def stages() -> list[tuple[str, PatternMatcher, Callable[[], object]]]:
  """(name, matcher, ctx factory) of each stage, as ``codegen/__init__.py`` builds them for the CPU device's renderer."""
  from tinygrad import Device
  from tinygrad.helpers import DISABLE_FAST_IDIV, TRANSCENDENTAL
  from tinygrad.uop.symbolic import sym, symbolic, symbolic_simple
  from tinygrad.uop.weak import pm_lower_index_dtype, pm_commit_weak
  from tinygrad.codegen.late.coalesce import indexing_simplify
  from tinygrad.codegen.decomp.op import get_simplifying_rewrite_patterns, get_late_rewrite_patterns
  from tinygrad.codegen.decomp.dtype import pm_dtype_decomps
  from tinygrad.codegen.decomp.transcendental import get_transcendental_patterns
  ren = Device["CPU"].renderer
  ops = tuple(ren.code_for_op.keys())
  early = symbolic_simple + get_simplifying_rewrite_patterns(ops)
  late = early + get_late_rewrite_patterns(ops, bool(DISABLE_FAST_IDIV)) + get_transcendental_patterns(ops, TRANSCENDENTAL >= 2)
  return [("extra symbolic", sym + indexing_simplify, lambda: None),
          ("lower all index dtypes", symbolic_simple + pm_lower_index_dtype + indexing_simplify, dict),
          ("final symbolic", symbolic, lambda: None),
          ("early decompositions", early, lambda: None),
          ("decomp dtypes", pm_dtype_decomps + pm_commit_weak, lambda: (set(), ren)),
          ("late decompositions", late, lambda: ren)]

def pipeline_root(e:UOp) -> UOp:
  """What the pipeline is run on: a weakint expression as a kernel would use it, committed to int32 (wrapping)."""
  return e.cast(dtypes.int32) if e.dtype == dtypes.weakint else e

def run_pipeline(root:UOp) -> list[tuple[str, UOp]]:
  out, u = [], root
  for name, pm, mkctx in stages():
    u = graph_rewrite(u, pm, ctx=mkctx(), name=f"uopcheck: {name}")
    out.append((name, u))
  return out

def check_pipeline(e:UOp, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=3000) -> tuple[Any, UOp, str|None]:
  """(Verdict, final UOp, blamed stage or None) for the pipeline on ``pipeline_root(e)``."""
  from uopcheck.fuzz.symbolic import Verdict, compare_exprs
  root = pipeline_root(e)
  steps = run_pipeline(root)
  final = steps[-1][1]
  if final is root: return Verdict("unchanged"), final, None
  v = compare_exprs(root, final, reading, timeout_ms, fast_weak=True)
  if v.kind != "refuted": return v, final, None
  # a lowered constant its dtype cannot hold is read wrapped, as tinygrad states its emission (uop/weak.py:11) and every
  # renderer but the C one's int32 constants does (README, "the spec's decision"): a verdict like any other
  prev = root
  for name, u in steps:   # the first stage whose own step is not a refinement
    if u is not prev and compare_exprs(prev, u, reading, timeout_ms).kind == "refuted": return v, final, name
    prev = u
  return v, final, "the stages together (each step alone refines)"
