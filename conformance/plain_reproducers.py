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
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate()
    return Outcome(False, True, f"no result within {r.timeout_s:g} s")
  last = (out.strip().splitlines() or [""])[-1]
  return Outcome(p.returncode == 0 and last == "RIGHT", False, f"exit {p.returncode}: {last[:200]} {err.strip()[-300:]}")

_UINT8_COMPARE = """
import numpy as np
from tinygrad import Tensor
a = np.array([200, 1], np.uint8)
got = ((Tensor(a) + 100) < 100).numpy(); want = (a + np.uint8(100)) < 100
print(f"{got} (numpy {want})")
print("RIGHT" if np.array_equal(got, want) else "WRONG")
"""

_UINT8_CONST_FOLD = """
import numpy as np
from tinygrad import Tensor, dtypes
x = Tensor(np.array([1, 2], np.uint8))
got = ((x * 0 + 200) * 2).float().numpy(); want = np.full(2, (200 * 2) % 256, np.float32)
print(f"{got} (numpy {want})")
print("RIGHT" if np.array_equal(got, want) else "WRONG")
"""

_UINT8_WIDENED = """
import numpy as np
from tinygrad import Tensor, dtypes
b = np.array([100, 1], np.uint8)
got = (Tensor(b) + 200).cast(dtypes.int32).numpy(); want = (b + np.uint8(200)).astype(np.int32)
print(f"{got} (numpy {want})")
print("RIGHT" if np.array_equal(got, want) else "WRONG")
"""

_INT32_CONST_RENDERED_WIDE = """
import numpy as np
from tinygrad import Tensor, dtypes
x = np.array([1, 7], np.int32)
t = Tensor(x) + 2147483648                         # stays int32: the weak constant commits at int32 (uop/weak.py:11)
got = [t.cast(dtypes.int64).numpy().tolist(), (t // 2).numpy().tolist()]
w = (x.astype(np.int64) + 2147483648).astype(np.int32)   # the int32 value, wrapped: [-2147483647, -2147483641]
want = [w.astype(np.int64).tolist(), (w // 2).tolist()]
print(f"{got} (numpy {want}; the stored tensor {t.numpy().tolist()})")
print("RIGHT" if got == want else "WRONG")
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

_RELU_RELU_NAN = """
import numpy as np
from tinygrad import Tensor
x = Tensor(np.array([np.nan, -1.0, 2.0], np.float32)).realize()
once, twice = x.relu().numpy(), x.relu().relu().numpy()
print(f"relu {once} relu(relu) {twice}")
print("RIGHT" if np.array_equal(once, twice, equal_nan=True) else "WRONG")
"""

REPRODUCERS = [
  PlainReproducer(
    "uint8-overflow-compare-folded", _UINT8_COMPARE, ({"HCQ2": "1"}, {"HCQ2": "0"}), None,
    "(a + 100) < 100 on uint8 a = 200 is False; numpy (and the spec) wrap a + 100 to 44, so it is True. The kernel is a "
    "constant store of 0.",
    "uop/symbolic.py:257 folds a CMPLT whose vmin == vmax to a constant, and uop/ops.py's vmin/vmax of ADD ignore "
    "wrap-around (uint8 x + 100 has bounds [100, 355], so (x+100) < 100 is 'always False'). Same cause as the shipped "
    "symbolic finding at symbolic.py:257 ((a+127)//5 on int8).", tags=("symbolic", "vmin/vmax")),
  PlainReproducer(
    "uint8-constant-fold-no-wrap", _UINT8_CONST_FOLD, ({"HCQ2": "1"}, {"HCQ2": "0"}), None,
    "((x*0 + 200) * 2).float() on uint8 is 400.0; numpy (and the spec) wrap 200 * 2 to 144.",
    "uop/symbolic.py:38 fold_const_alu folds constant ALU with exec_alu(..., truncate_output=False): CONST(uint8, 200) * 2 "
    "becomes CONST(uint8, 400), a uint8 constant the dtype cannot hold, and its cast to float gives 400.0.",
    tags=("symbolic", "constant folding")),
  PlainReproducer(
    "uint8-overflow-widened-in-kernel", _UINT8_WIDENED, ({"HCQ2": "1"}, {"HCQ2": "0"}), None,
    "(b + 200).cast(int32) on a realized uint8 b = 100 is 300; numpy (and the spec) wrap to 44. The same for int8/uint16/"
    "int16, and for a reduction of the widened value.",
    "renderer/cstyle.py:141 (CStyleLanguage.code_for_op ADD/MUL render plain C `(a+b)`): the kernel is "
    "`(int)((val0+((unsigned char)(200u))))`, and C promotes the unsigned char operands to int, so the sum is never "
    "wrapped to 8 bits before the cast (only a store to a narrow buffer wraps). Same cause as the signed int8/int16 graph "
    "findings in known_findings.py.", tags=("codegen", "C renderer")),
  PlainReproducer(
    "int32-constant-rendered-wide", _INT32_CONST_RENDERED_WIDE, ({"DEV": "CPU", "HCQ2": "1"}, {"DEV": "CPU", "HCQ2": "0"}),
    {"DEV": "CPU:LLVM", "HCQ2": "0"},
    "x + 2147483648 on an int32 tensor stays int32 and is stored wrapped (-2147483647 at x = 1, as numpy), yet read in the "
    "same kernel it is the unwrapped 2147483649: its cast to int64 is 2147483649 and its floor division by 2 is 1073741824 "
    "(numpy -2147483647 and -1073741824). No lane overflows (both readings define it). Right on the LLVM renderer "
    "(DEV=CPU:LLVM, the control) and on DEV=PYTHON: three of tinygrad's backends, two answers.",
    "uop/weak.py:11 commit_weak commits the weak constant as CONST(int32, 2147483648) -- 'the value stays mathematical, "
    "emission truncates' -- but renderer/cstyle.py:35 (the default const render, str(c.val)) emits an int32 constant "
    "untruncated, unlike uint32/uint64 (cstyle.py:27-28 truncate) and the narrow ints (cast): the kernel reads "
    "`(long)((val0+2147483648))`, a C long sum. The LLVM renderer, the x86 renderer (imm), HCQ2's constant packing and "
    "exec_alu's folding all truncate, which is the reading the spec takes (spec/numpy_dtypes.const_array).",
    tags=("renderer", "C renderer", "constants")),
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
  PlainReproducer(
    "relu-of-relu-nan", _RELU_RELU_NAN, ({"HCQ2": "1"}, {"HCQ2": "0"}), None,
    "relu is idempotent, yet x.relu().relu() is NaN where x.relu() is 0 (x = NaN; tinygrad's relu is (x>0).where(x, 0), "
    "which is 0 at NaN). Found unaided by the seed-3 stock campaign (graph-700652cc1663).",
    "uop/symbolic.py:261 rewrites (c<x).where(x, c) into MAX(c, x), and MAX is NaN-order-dependent: the C renderer's "
    "MAX is a compare-and-select, (a<b)?b:a, so MAX(0, NaN) is 0 and MAX(NaN, 0) is NaN. One relu's kernel AST holds "
    "MAX(0.0, x); relu(relu(x)) rewrites (already in the scheduler's kernel AST) to MAX(x, 0.0) (MAX is in "
    "GroupOp.Commutative, so rules match and rebuild it in either order).", tags=("symbolic", "NaN")),
]
BY_NAME = {r.name: r for r in REPRODUCERS}
