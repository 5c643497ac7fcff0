"""Benchmark: uopcheck's bit-exact symbolic checker vs tinygrad's own z3 model (tinygrad.uop.validate.uops_to_z3).

Expressions are generated the way tinygrad's test/external/fuzz_symbolic.py does: three weakint variables in [0, u]
(u from 1-9, 16, 32, 64, 128, 256), depth 6, unary +c (c in -4..4), *c, //c (c in +-1..9), %c (1..9), max/min with a
constant, binary + * max min, WHERE on comparisons. Each e is checked against e.simplify() by both, in the same run,
on the same expressions; the rates and their ratio are printed (target: >= 1.0x the peer's rate)."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import random, sys, time
import z3
import uopcheck  # noqa: F401
from tinygrad.uop.ops import UOp
from tinygrad.uop.validate import uops_to_z3
from uopcheck.fuzz.symbolic import check_expr
from uopcheck.spec.ints import OverflowReading

def gen(rng:random.Random, depth:int=6) -> UOp:
  u = rng.choice(list(range(1, 10)) + [16, 32, 64, 128, 256])
  vs = [UOp.variable(n, 0, u) for n in "abc"]
  def rec(d):
    if d == 0: return rng.choice(vs)
    k = rng.random()
    if k < 0.45:
      x = rec(d - 1)
      op = rng.choice(["+", "*", "//", "%", "max", "min"])
      if op == "+": return x + rng.randint(-4, 4)
      if op == "*": return x * rng.randint(-4, 4)
      if op == "//": return x // rng.choice([c for c in range(-9, 10) if c != 0])
      if op == "%": return x % rng.randint(1, 9)
      return x.maximum(rng.randint(-4, 4)) if op == "max" else x.minimum(rng.randint(-4, 4))
    if k < 0.85:
      a, b = rec(d - 1), rec(d - 1)
      return rng.choice([lambda: a + b, lambda: a * b, lambda: a.maximum(b), lambda: a.minimum(b)])()
    a, b = rec(d - 1), rec(d - 1)
    return rng.choice([a < b, a.ne(b)]).where(rec(d - 1), rec(d - 1))
  return rec(depth)

def peer_check(e:UOp, s:UOp) -> str:
  solver = z3.Solver(ctx=z3.Context())
  solver.set("timeout", 3000)
  ze, zs = uops_to_z3(solver, e, s)
  r = solver.check(ze != zs)
  return "proved" if r == z3.unsat else "refuted" if r == z3.sat else "unknown"

def main(n:int=300, seed:int=0):
  rng = random.Random(seed)
  pairs: list = []
  while len(pairs) < n:
    e = gen(rng)
    s = e.simplify()
    if s is not e: pairs.append((e, s))
  st = time.perf_counter()
  ours = [check_expr(e, OverflowReading.WRAP)[0].kind for e, _ in pairs]
  t_ours = time.perf_counter() - st
  st = time.perf_counter()
  theirs = [peer_check(e, s) for e, s in pairs]
  t_peer = time.perf_counter() - st
  r_ours, r_peer = n / t_ours, n / t_peer
  def count(xs, k):
    return sum(x == k for x in xs)
  print(f"{n} expressions (e != e.simplify()), seed {seed}")
  print(f"uopcheck (bit-exact; exhaustive or z3): {r_ours:8.1f} expr/s  proved {count(ours, 'proved')} "
        f"refuted {count(ours, 'refuted')} unknown {count(ours, 'unknown')}")
  print(f"peer (tinygrad uops_to_z3, all Int):    {r_peer:8.1f} expr/s  proved {count(theirs, 'proved')} "
        f"refuted {count(theirs, 'refuted')} unknown {count(theirs, 'unknown')}")
  print(f"ratio uopcheck/peer: {r_ours / r_peer:.2f}x -> {'MET' if r_ours >= r_peer else 'MISSED'} (target >= 1.0x)")

if __name__ == "__main__":
  main(*(int(a) for a in sys.argv[1:3]))
