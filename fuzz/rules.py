"""Per-rule verification of tinygrad's symbolic matchers, and attributing a bad simplification to its rule.

``verify_rules`` builds instances of each rule's pattern straight from its UPat structure (fresh variables with
random bounds and dtypes, weakint and sized, constants near the limits), applies exactly that rule, and proves
each rewrite it makes with ``spec.z3model.check_rewrite``. ``blame_rule`` replays a simplification one rule
application at a time and returns the first step that is not a refinement."""
from __future__ import annotations
import itertools, random
from dataclasses import dataclass
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp, UPat, PatternMatcher, upat_interpret
from tinygrad.dtype import DType, dtypes
from uopcheck.spec.z3model import check_rewrite, Proved, Refuted
from uopcheck.spec.ints import OverflowReading
from uopcheck.results import Column, Table, Section, Result

INT_DTS = [dtypes.weakint, dtypes.weakint, dtypes.int32, dtypes.uint32, dtypes.int8, dtypes.int64, dtypes.uint8]

from uopcheck.rule_id import rule_key as rule_id   # noqa: E402  (one rule name everywhere: uopcheck/rule_id.py)

def matchers() -> dict[str, PatternMatcher]:
  from tinygrad.uop.symbolic import symbolic
  from tinygrad.uop.divandmod import div_and_mod_symbolic
  return {"symbolic": symbolic, "divandmod": div_and_mod_symbolic}

# ** instances from UPat structure **

class NoInstance(Exception): pass

def _const(rng:random.Random, dt:DType) -> int|bool:
  if dt == dtypes.bool: return rng.random() < 0.5
  lo, hi = (-2**40, 2**40) if dt == dtypes.weakint else (dt.min, dt.max)
  c = rng.choice([0, 1, -1, 2, -2, 3, 7, -7, 8, 16, 255, 256, lo, hi, hi - 1, lo + 1, rng.randint(-20, 20)])
  return max(lo, min(hi, c))

def _variable(rng:random.Random, dt:DType, env:dict) -> UOp:
  if dt == dtypes.bool:
    return _variable(rng, dtypes.weakint, env) < UOp.const(rng.randint(-4, 4), dtypes.weakint)
  lo_l, hi_l = (-1000, 1000) if dt == dtypes.weakint else (dt.min, dt.max)
  pick = lambda: rng.choice([rng.randint(max(lo_l, -10), min(hi_l, 10)), lo_l, hi_l, 0, rng.randint(lo_l, hi_l)])
  a, b = pick(), pick()
  env["#vars"] = env.get("#vars", 0) + 1
  return UOp.variable(f"v{env['#vars']}", min(a, b), max(a, b), dtype=dt)

def _arity(op:Ops) -> int:
  if op in GroupOp.Ternary: return 3
  if op in GroupOp.Binary: return 2
  return 1

def instantiate(p:UPat, rng:random.Random, dt:DType, env:dict, depth:int=0) -> UOp:
  if p.name is not None and p.name in env: return env[p.name]
  if depth > 6: raise NoInstance("too deep")
  if p.is_any: return instantiate(rng.choice(p.src[0]), rng, dt, env, depth + 1)
  if p.match_dtype is not None:
    ok = [d for d in p.match_dtype if d in INT_DTS or d == dtypes.bool]
    if not ok: raise NoInstance(f"dtypes {p.match_dtype}")
    dt = rng.choice(ok)
  if p.op is None:
    u = UOp.const(_const(rng, dt), dt) if rng.random() < 0.2 else _variable(rng, dt, env)
  else:
    op = rng.choice(p.op)
    if op is Ops.CONST:
      u = UOp.const(p.arg if p.arg is not None and not isinstance(p.arg, tuple) else _const(rng, dt), dt)
    elif op in GroupOp.ALU or op is Ops.CAST:
      if p.src is None: kids = [UPat()] * _arity(op)
      else:
        choice = rng.choice(p.src)
        kids = list(itertools.islice(choice, _arity(op))) if isinstance(choice, itertools.repeat) else list(choice)
      if op in GroupOp.Comparison:
        sdt = rng.choice([d for d in INT_DTS])
        srcs = [instantiate(k, rng, sdt, env, depth + 1) for k in kids]
        if srcs[0].dtype != srcs[1].dtype and dtypes.weakint not in (srcs[0].dtype, srcs[1].dtype): raise NoInstance("mixed dtypes")
        u = UOp(op, dtypes.bool, tuple(srcs))
      elif op is Ops.WHERE:
        srcs = [instantiate(kids[0], rng, dtypes.bool, env, depth + 1)] + [instantiate(k, rng, dt, env, depth + 1) for k in kids[1:]]
        u = UOp(op, dt, tuple(srcs))
      elif op is Ops.CAST:
        inner = instantiate(kids[0], rng, rng.choice(INT_DTS + [dtypes.bool]), env, depth + 1)
        if inner.dtype not in INT_DTS + [dtypes.bool]: raise NoInstance("cast of a non-int")
        u = inner.cast(dt)
      else:
        if dt == dtypes.bool and op not in (Ops.AND, Ops.OR, Ops.XOR): raise NoInstance("arith on bool")
        srcs = [instantiate(k, rng, dt, env, depth + 1) for k in kids]
        if any(s.dtype != dt and s.dtype != dtypes.weakint for s in srcs): raise NoInstance("operand dtype")
        if op in (Ops.SHL, Ops.SHR): srcs[1] = UOp.const(rng.randint(0, 4), dt)
        u = UOp(op, dt, tuple(srcs))
    else: raise NoInstance(f"{op} outside integer expressions")
  if p.name is not None: env[p.name] = u
  return u

@dataclass
class RuleTally:
  rule: str
  matcher: str
  tried: int = 0
  applied: int = 0
  proved: int = 0
  refuted: int = 0
  unknown: int = 0
  counterexample: tuple|None = None
  cex_size: int = 1 << 30

def verify_rules(names:list[str]|None=None, instances:int=30, seed:int=0, reading=OverflowReading.UNDEFINED,
                 timeout_ms:int=1000, progress=None) -> list[RuleTally]:
  rng = random.Random(seed)
  out: list[RuleTally] = []
  for mname, pm in matchers().items():
    if names and mname not in names: continue
    for p, fxn in pm.patterns:
      t = RuleTally(rule_id(p), mname)
      fn = upat_interpret(p, fxn)
      for _ in range(instances * 3):
        if t.tried >= instances: break
        try:
          env: dict = {}
          u = instantiate(p, rng, rng.choice(INT_DTS), env)
        except (NoInstance, AssertionError, RuntimeError, TypeError, ValueError, KeyError, IndexError): continue
        if not p.match(u, {}): continue
        t.tried += 1
        try: r = fn(u, None)
        except Exception: continue
        if r is None or r is u or not isinstance(r, UOp): continue
        t.applied += 1
        v = check_rewrite(u, r, reading, timeout_ms)
        if isinstance(v, Proved): t.proved += 1
        elif isinstance(v, Refuted):
          t.refuted += 1
          size = len(u.toposort())
          if size < t.cex_size: t.counterexample, t.cex_size = (u, r, v), size
        else: t.unknown += 1
      out.append(t)
      if progress: progress(t)
  return out

INSTANCE_COLUMNS = [Column("matcher", width=10), Column("rule (file:line)", width=34), Column("tried", width=6, align=">"),
                    Column("applied", width=8, align=">"), Column("proved", width=7, align=">"), Column("refuted", width=8, align=">"),
                    Column("unknown", width=8, align=">")]

def result(tallies:list[RuleTally]) -> Result:
  """``rules verify --method instances``: per rule how many instances applied, proved, refuted; one section per refutation"""
  keys = ("tried", "applied", "proved", "refuted", "unknown")
  rows = [{"matcher": t.matcher, "rule (file:line)": t.rule, **{k: getattr(t, k) for k in keys}} for t in tallies]
  total = {"matcher": "total", "rule (file:line)": str(len(tallies)), **{k: sum(getattr(t, k) for t in tallies) for k in keys}}
  cex = [(t, *t.counterexample) for t in tallies if t.counterexample is not None]
  return Result("rules_instances", "uopcheck rules verify --method instances", {"rules": rows, "total": total},
                tables=[Table(INSTANCE_COLUMNS, rows, footer=[total])],
                sections=[Section(f"REFUTED {t.rule}: {v}", [f"before: {u.render(simplify=False)}", f"after:  {r.render(simplify=False)}"])
                          for t, u, r, v in cex])

# ** which rule made a bad simplification **

@dataclass(frozen=True)
class BlamedStep:
  """the first rule application that is not a refinement"""
  rule: str          # file:line
  before: UOp
  after: UOp
  verdict: Refuted

def blame_rule(e:UOp, reading=OverflowReading.UNDEFINED, timeout_ms:int=2000) -> BlamedStep|None:
  """Replay ``symbolic`` on ``e`` one rule application at a time (bottom-up, to a fixpoint) and return the first
  application that is not a refinement."""
  from tinygrad.uop.symbolic import symbolic
  memo: dict[UOp, UOp] = {}
  def step(n:UOp, budget=[400]) -> UOp:
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
          if isinstance(v, Refuted): raise _Found(BlamedStep(rule_id(p), cur, r, v))
          cur = step(r)
          break
      else: break
    memo[n] = cur
    return cur
  try: step(e)
  except _Found as f: return f.args[0]
  return None

class _Found(Exception): pass
