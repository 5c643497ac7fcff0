"""Malformed tensor graphs fed to the reference: every one gets exactly one SpecError with a one-line message, none is
evaluated to a value, none escapes as a raw exception.

Graphs are made by mutating small valid graphs one node at a time (another op, another dtype, a source added or dropped,
a garbage arg, a CONST given a source). A mutant counts as malformed when tinygrad's own spec_tensor rejects it or the
reference refuses it; a mutant both accept is a valid graph and is not counted."""
from __future__ import annotations
import random, time
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from uopcheck.ref import evaluate
from uopcheck.spec import SpecError
from uopcheck.spec.structural import verify

def _bases() -> list[UOp]:
  f = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)).realize()
  g = Tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)).realize()
  i = Tensor(np.arange(-3, 3, dtype=np.int32).reshape(2, 3)).realize()
  return [t.uop for t in [f + g, (f * g).sum(0), f.reshape(3, 2).permute(1, 0), f.cast(dtypes.int32) + i, (f < g).where(f, g),
                          i // (i.abs() + 1), (i << 1) ^ i, f.pad(((1, 0), (0, 1))).max(1), f.exp2().sqrt(), f.shrink(((0, 1), (1, 3)))]]

DTS = [dtypes.float32, dtypes.int32, dtypes.bool, dtypes.int8, dtypes.uint64, dtypes.float16, dtypes.void, dtypes.weakint]
ARGS = [None, 0, 7, -1, (0, 0), (1, 2, 3), "x", (Ops.ADD, 0), Ops.MAX, 1.5, (Ops.ADD, (0,)), ((0, 1),)]
OPS = list(Ops)

def _mutate(root:UOp, rng:random.Random) -> UOp:
  nodes = [u for u in root.toposort() if u.op is not Ops.BUFFER]
  u = rng.choice(nodes)
  kind = rng.randrange(6)
  if kind == 0: new = UOp(rng.choice(OPS), u.dtype, u.src, u.arg)
  elif kind == 1: new = UOp(u.op, rng.choice([d for d in DTS if d != u.dtype]), u.src, u.arg)
  elif kind == 2: new = UOp(u.op, u.dtype, u.src + (rng.choice(nodes),), u.arg)
  elif kind == 3 and u.src: new = UOp(u.op, u.dtype, u.src[:-1], u.arg)
  elif kind == 4: new = UOp(u.op, u.dtype, u.src, rng.choice([a for a in ARGS if a != u.arg]))
  else: new = UOp(Ops.CONST, u.dtype if u.dtype != dtypes.void else dtypes.float32, (rng.choice(nodes),), 1)
  memo: dict[UOp, UOp] = {u: new}
  for x in root.toposort():  # rebuild the consumers by hand: tinygrad's substitute rewrites, and may choke on a malformed node
    if x not in memo: memo[x] = x if all(memo[s] is s for s in x.src) else UOp(x.op, x.dtype, tuple(memo[s] for s in x.src), x.arg)
  return memo[root]

def test_malformed_graphs_are_refused_with_one_line_each():
  rng = random.Random(1234)
  bases = _bases()
  malformed = accepted = 0
  raw: list[str] = []
  valid = 0
  tries = 0
  while malformed < 2000 and tries < 6000:
    tries += 1
    g = _mutate(rng.choice(bases), rng)
    try:
      verify(g, "tensor")
      spec_ok = True
    except SpecError: spec_ok = False
    try:
      evaluate(g)
      if spec_ok: valid += 1
      else: accepted += 1
    except SpecError as e:
      malformed += 1
      msg = str(e)
      assert "\n" not in msg and len(msg) <= 400 and msg.strip(), msg
    except Exception as e:  # noqa: BLE001 - this is what the test counts
      raw.append(f"{type(e).__name__}: {e}"[:200])
    if not spec_ok and not raw: pass
  assert malformed >= 2000, f"only {malformed} malformed graphs in {tries} mutants"
  assert accepted == 0, f"{accepted} graphs tinygrad's spec rejects were evaluated to a value"
  assert not raw, f"{len(raw)} raw exceptions, e.g. {raw[:3]}"

def test_oversized_graph_is_refused_before_allocating():
  t = Tensor.zeros(2**31, dtype=dtypes.int8).contiguous()
  st = time.perf_counter()
  try: evaluate(t)
  except SpecError as e: assert "size limit" in str(e) and "\n" not in str(e)
  else: raise AssertionError("a 2**31-element graph was evaluated")
  assert time.perf_counter() - st < 5

def test_a_graph_whose_values_together_pass_the_memory_limit_is_refused_in_one_line(monkeypatch):
  """each value small enough, 300 of them together ~7 GiB: refused before the first is computed (the reference keeps
  every node's value), with the limit named; a higher limit from the environment is obeyed, a bad one refused"""
  import resource
  x = Tensor.ones(1 << 22).contiguous()
  for i in range(300): x = x + float(i)
  before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  st = time.perf_counter()
  try: evaluate(x)
  except SpecError as e: msg = str(e)
  else: raise AssertionError("a graph of ~7 GiB of values was evaluated")
  assert "4096 MiB in the reference" in msg and "MAX_REF_BYTES" in msg and "\n" not in msg and len(msg) <= 400
  assert time.perf_counter() - st < 10 and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000   # KiB: nothing allocated
  small = Tensor.ones(4).contiguous() + 1
  monkeypatch.setenv("UOPCHECK_MAX_REF_BYTES", "40")   # 4 values of 4 lanes x 6 bytes > 40
  try: evaluate(small)
  except SpecError as e: assert "more than 40 bytes" in str(e)
  else: raise AssertionError("UOPCHECK_MAX_REF_BYTES was not obeyed")
  monkeypatch.setenv("UOPCHECK_MAX_REF_BYTES", "lots")
  try: evaluate(small)
  except SpecError as e: assert "UOPCHECK_MAX_REF_BYTES='lots'" in str(e)
  else: raise AssertionError("a bad UOPCHECK_MAX_REF_BYTES was ignored")
  monkeypatch.delenv("UOPCHECK_MAX_REF_BYTES")
  assert (evaluate(small) == 2).all()
