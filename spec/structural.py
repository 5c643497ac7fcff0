"""Structural checks: tinygrad's own ``type_verify`` with its spec matchers (tinygrad/uop/spec.py).

``verify(graph, stage)`` runs the matcher for that stage over every UOp and raises ``SpecError``
naming the first UOp that no rule accepts, its position, and the stage's spec."""
from __future__ import annotations
from tinygrad.uop.ops import UOp
from tinygrad.helpers import Context
from uopcheck.spec.errors import SpecError

def _matchers() -> dict:
  from tinygrad.uop import spec as tgspec
  return {"tensor": tgspec.spec_tensor, "kernel_graph": tgspec.spec_kernel_graph, "kernel": tgspec.spec_full,
          "program": tgspec.spec_program, "full": tgspec.spec_full}

STAGES = ("tensor", "kernel_graph", "kernel", "program", "full")

def verify(graph:UOp|list[UOp], stage:str, enter_calls:bool=True) -> int:
  """Check ``graph`` against tinygrad's spec for ``stage``; returns how many UOps were checked."""
  pm = _matchers().get(stage)
  if pm is None: raise SpecError(f"unknown stage {stage!r}; one of {STAGES}")
  lst = list(graph.toposort(enter_calls=enter_calls)) if isinstance(graph, UOp) else list(graph)
  with Context(CHECK_OOB=0):  # not TRACK_MATCH_STATS=0: entering that Context here made a later kernel run hang (see README)
    for i, u in enumerate(lst):
      try: ok = pm.rewrite(u)
      except Exception as e: raise SpecError.at(u, f"tinygrad spec_{stage} raised while checking UOp #{i}", f"{type(e).__name__}: {e}") from e
      if ok is not True:
        srcs = [(s.op.name, str(s.dtype)) for s in u.src]
        raise SpecError.at(u, f"breaks tinygrad's spec for the {stage} stage at UOp #{i}", f"arg={u.arg!r} src={srcs}")
  return len(lst)
