"""tinygrad 0.14.0 bugs shipped as plain-tinygrad reproducers: a few lines that import only tinygrad and numpy, run in a
fresh interpreter under a stated environment and time limit, and end by printing ``RIGHT`` when tinygrad computes what
numpy does. ``test_plain_reproducers.py`` runs each one as ``xfail(strict=True)`` beside its *control* (the same lines
under the environment where tinygrad is right), so the day tinygrad fixes one the suite says so, and a reproducer that
stopped reproducing for another reason is told apart from a fix.

These are uopcheck's own test code (never read from a file a user may receive). Each names its root cause in tinygrad's
source where it was found (tinygrad 0.14.0, the PyPI wheel)."""
from __future__ import annotations
import os, signal, subprocess, sys
from dataclasses import dataclass, field

@dataclass(frozen=True)
class PlainReproducer:
  name: str
  code: str                       # plain tinygrad; prints RIGHT as its last line when the result matches numpy
  fails_under: tuple             # the environments it fails under (each a dict)
  control_env: dict|None          # an environment it passes under (None: no control)
  what: str
  cause: str
  timeout_s: float = 60.0
  hangs: bool = False             # the failure is a hang: the time limit is the verdict
  tags: tuple = field(default_factory=tuple)

@dataclass(frozen=True)
class Outcome:
  right: bool
  timed_out: bool
  detail: str

def run_plain(r:PlainReproducer, env:dict) -> Outcome:
  """``r.code`` in a new interpreter (its own process group, killed whole past ``r.timeout_s``) under ``env``"""
  full = {**os.environ, **env, "PYTHONDONTWRITEBYTECODE": "1"}
  p = subprocess.Popen([sys.executable, "-c", r.code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full, start_new_session=True)
  try: out, err = p.communicate(timeout=r.timeout_s)
  except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL); p.communicate()
    return Outcome(False, True, f"no result within {r.timeout_s:g} s")
  last = (out.strip().splitlines() or [""])[-1]
  return Outcome(p.returncode == 0 and last == "RIGHT", False, f"exit {p.returncode}: {last[:200]} {err.strip()[-300:]}")

_UINT8_WRAP = """
import numpy as np
from tinygrad import Tensor, dtypes
a = np.array([200, 1], np.uint8)
got_cmp = ((Tensor(a) + 100) < 100).numpy(); want_cmp = (a + np.uint8(100)) < 100
got_cast = ((Tensor(a) * 0 + 200) * 2).float().numpy(); want_cast = ((a * np.uint8(0) + np.uint8(200)) * np.uint8(2)).astype(np.float32)
print(f"cmp {got_cmp} (numpy {want_cmp}); widened {got_cast} (numpy {want_cast})")
print("RIGHT" if np.array_equal(got_cmp, want_cmp) and np.array_equal(got_cast, want_cast) else "WRONG")
"""

_JIT_LOOP_CARRIED = """
import numpy as np
from tinygrad import Tensor, TinyJit
@TinyJit
def f(x): return (x.T * 2 + 1).contiguous().realize()
x = Tensor(np.arange(16, dtype=np.float32).reshape(4, 4)).realize(); want = x.numpy()
ok = True
for i in range(4):
  x = f(x); want = want.T * 2 + 1
  ok = ok and np.array_equal(x.numpy(), want)
print("RIGHT" if ok else "WRONG")
"""

_HCQ2_STALE_COUNTER = """
import numpy as np
from tinygrad import Tensor, dtypes
Tensor([3000000000, 1], dtype=dtypes.uint32).realize()     # 8 bytes, freed at once: its buffer goes back to the LRU cache
got = Tensor.full((2,), 200, dtypes.uint8).bitcast(dtypes.int8).numpy()
print("RIGHT" if np.array_equal(got, np.full((2,), 200, np.uint8).view(np.int8)) else "WRONG")
"""

REPRODUCERS = [
  PlainReproducer(
    "uint8-overflow-consumed-in-kernel", _UINT8_WRAP, ({"HCQ2": "1"}, {"HCQ2": "0"}), None,
    "uint8 arithmetic that overflows and is consumed in the same kernel does not wrap (HCQ2=1 and HCQ2=0 alike): "
    "(a + 100) < 100 at a=200 is False (numpy: 44 < 100, True); ((x*0 + 200) * 2).float() is 400.0 (numpy 144.0). "
    "The same holds for int8/uint16/int16 and for a reduction or widening cast of the overflowed value.",
    "renderer/cstyle.py:141 (CStyleLanguage.code_for_op: Ops.ADD/MUL render as plain C `(a+b)`, `(a*b)`): C promotes "
    "unsigned char/short operands to int, and the renderer inlines the expression into its consumer without a cast back "
    "to the narrow type, so the wrap happens only where a value is stored to a narrow buffer. The AMD LLVM renderer "
    "(`add i8`) wraps. Same root cause as the shipped signed int8/int16 graph findings, here unsigned and consumed by a "
    "comparison or a widening cast.", tags=("codegen", "C renderer")),
  PlainReproducer(
    "tinyjit-loop-carried-state-hcq2", _JIT_LOOP_CARRIED, ({"HCQ2": "1"},), {"HCQ2": "0"},
    "TinyJit fed its own output (x = f(x), f(x) = (x.T*2+1).contiguous().realize()) is wrong from the first replay on "
    "under HCQ2=1: the replay reads the buffer it writes; right under HCQ2=0.",
    "engine/realize.py:22 get_call_outs_ins returns ((), ()) for HCQ2's batched call (Ops.CUSTOM_FUNCTION 'hcq'), so "
    "engine/jit.py:175 CapturedJit._written_uops is empty and CapturedJit.__call__ never copies an input the jit also "
    "writes (on the plain path the PROGRAM call names its outs/ins and the copy is made).", tags=("runtime", "TinyJit", "HCQ2")),
  PlainReproducer(
    "hcq2-stale-queue-counter-hang", _HCQ2_STALE_COUNTER, ({"HCQ2": "1"},), {"HCQ2": "0"},
    "Under HCQ2=1, realizing an 8-byte tensor with non-zero data and dropping it, then running the first kernel, never "
    "returns (Tensor([3000000000, 1], dtype=uint32) then a uint8->int8 bitcast; any 8-byte non-zero tensor does it, an "
    "all-zero one does not, a 12-byte one does not). Fine under HCQ2=0.",
    "runtime/ops_cpu.py:231: the CPU device's queue worker allocates its ring counters (put, sys, done: one uint64 each) "
    "with Buffer(..., preallocate=True) through the device's LRU allocator, which hands back the freed 8-byte buffer "
    "without zeroing it; the submit loop (ops_cpu.py:98, put - done > RING_SLOTS - cnt) then waits forever. This is the "
    "hang the UX issue (#32) traces to the same counters.", timeout_s=30.0, hangs=True, tags=("runtime", "HCQ2", "hang")),
]
BY_NAME = {r.name: r for r in REPRODUCERS}
