"""Which rule made a bad simplification: ``blame_rule`` replays tinygrad's ``symbolic`` matcher on an expression one rule
application at a time (bottom-up, to a fixpoint) and returns the first application that is not a refinement -- the
symbolic fuzzer names a finding's rule with it (``uopcheck rules verify --only RULE`` then decides that rule for all inputs)."""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad.uop.ops import UOp, upat_interpret
from uopcheck.spec.z3model import check_rewrite, Refuted
from uopcheck.spec.ints import OverflowReading
from uopcheck.rule_id import rule_key

@dataclass(frozen=True)
class BlamedStep:
  """the first rule application that is not a refinement"""
  rule: str          # the rule's key (uopcheck/rule_id.py)
  before: UOp
  after: UOp
  verdict: Refuted

class _Found(Exception): pass

def blame_rule(e:UOp, reading:OverflowReading=OverflowReading.UNDEFINED, timeout_ms:int=2000) -> BlamedStep|None:
  """Replay ``symbolic`` on ``e`` one rule application at a time (bottom-up, to a fixpoint) and return the first
  application that is not a refinement."""
  from tinygrad.uop.symbolic import symbolic
  memo: dict[UOp, UOp] = {}
  budget = [400]
  def step(n:UOp) -> UOp:
    if n in memo: return memo[n]
    new_src = tuple(step(s) for s in n.src)
    cur = n if new_src == n.src else n.replace(src=new_src)
    while budget[0] > 0:
      budget[0] -= 1
      for p, fxn in symbolic.patterns:
        if p.op is not None and cur.op not in p.op: continue
        try: r = upat_interpret(p, fxn)(cur, None)
        except Exception: r = None
        if r is not None and r is not cur and isinstance(r, UOp):
          v = check_rewrite(cur, r, reading, timeout_ms)
          if isinstance(v, Refuted): raise _Found(BlamedStep(rule_key(p), cur, r, v))
          cur = step(r)
          break
      else: break
    memo[n] = cur
    return cur
  try: step(e)
  except _Found as f: return f.args[0]
  return None
