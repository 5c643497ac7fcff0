"""Real disagreements between tinygrad 0.14.0 and the spec, found by this suite.

Each finding names the lanes it covers. The op-by-op matrix leaves those lanes out (so the rest
of the op keeps being checked), and ``test_known_findings.py`` runs exactly those lanes as
``xfail(strict=True)``: the day tinygrad fixes one, the suite says so."""
from __future__ import annotations
import math
from dataclasses import dataclass
from typing import Callable
from tinygrad import dtypes
from tinygrad.uop import Ops

@dataclass(frozen=True)
class Finding:
  op: Ops
  dtypes: tuple
  covers: Callable[..., bool]   # True for an input lane (unary: a; binary: a, b) the finding is about
  lanes: tuple                  # the inputs that show it (tuples for binary ops)
  what: str

def _huge(x) -> bool: return math.isfinite(x) and abs(x) >= 1e15

def _pow_special(a, b) -> bool:
  fmax = (65504.0, 3.3895313892515355e38, 3.4028234663852886e38, 1.7976931348623157e308)
  return (not math.isfinite(a)) or (not math.isfinite(b)) or abs(a) in fmax or abs(b) in fmax or (a == 0 and b < 0)

FINDINGS = [
  Finding(Ops.SIN, (dtypes.float64,), _huge, (1e15, -1e20, 1e100, 1.7976931348623157e308),
          "SIN float64 for |x| >= ~1e15: tinygrad's decomposition (codegen/decomp/transcendental.py xsin, 'a 1.0 ULP "
          "approximation') returns wrong values, and exactly 0.0 past ~1e70: payne_hanek_reduction keeps only 190 bits of 2/pi, "
          "too few for float64's exponent range. sin(1e20) = -0.6453 (numpy, libm), tinygrad gives 0.2383."),
  Finding(Ops.POW, (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64), _pow_special,
          ((1.0, float("nan")), (1.0, float("inf")), (-1.0, float("-inf")), (-2.5, float("inf")), (-0.0, -1.0),
           (3.4028234663852886e38, 1.0)),
          "POW special values differ from C99 Annex F / IEEE 754 pow (and from tinygrad's own python_alu, Python pow): "
          "pow(1, NaN) and pow(+-1, +-inf) give NaN instead of 1; pow(negative, huge even integer) gives NaN; "
          "pow(-0, -1) gives +inf instead of -inf; pow(FLT_MAX, 1) overflows to inf (computed as exp2(y*log2(x)))."),
]

def finding_for(op:Ops, dt) -> Finding|None:
  return next((f for f in FINDINGS if f.op is op and dt in f.dtypes), None)

@dataclass(frozen=True)
class GraphFinding:
  name: str
  build: Callable
  what: str

def _narrow(values, np_dtype, fn):
  import numpy as np
  from tinygrad import Tensor
  return lambda: fn(Tensor(np.array(values, dtype=np_dtype)).realize())

GRAPH_FINDINGS = [
  GraphFinding("int8 (x+100)//2", _narrow([100, -100, 50], "int8", lambda t: (t + 100) // 2),
               "int8/int16 arithmetic on the CPU backend does not wrap between fused ops: the C renderer inlines "
               "(val0+(signed char)100)>>1, C promotes to int, so 100+100 = 200 survives the shift (CPU gives 100; the spec, "
               "numpy and tinygrad's own DEV=PYTHON wrap to -56 first and give -28)."),
  GraphFinding("int16 (x*16384)//16", _narrow([-6, -5, 3, 100], "int16", lambda t: (t * 16384) // 16),
               "the same on int16: rendered as (val0<<14)>>4 in C int, -6*16384 never wraps to -32768 (CPU -6144, DEV=PYTHON -2048)."),
  GraphFinding("uint8 (x+100)<100", _narrow([200, 1, 155, 156], "uint8", lambda t: (t + 100) < 100),
               "uint8 (x+100) < 100 is folded to False: symbolic.py:257 folds a compare whose vmin == vmax, and vmin/vmax of ADD "
               "ignore wrap-around (conformance/plain_reproducers.py). The spec and numpy: 200+100 wraps to 44 < 100, True."),
  GraphFinding("uint8 (x+100) widened", _narrow([200, 1, 155, 156], "uint8", lambda t: (t + 100).cast(dtypes.int32)),
               "unsigned narrow arithmetic consumed by a widening cast in the same kernel does not wrap: the C renderer's "
               "(int)((val0+(unsigned char)100u)) promotes to int (renderer/cstyle.py:141): 300, the spec and numpy say 44."),
  GraphFinding("uint16 sum(x+10000)", _narrow([60000, 1, 55536], "uint16", lambda t: (t + 10000).cast(dtypes.int32).sum()),
               "the same in a reduction: sum of (uint16 x + 10000) widened to int32 adds the unwrapped 70000."),
  GraphFinding("uint32 (x+1)<255", _narrow([4294967295, 3, 254, 253], "uint32", lambda t: (t + 1) < 255),
               "symbolic.py:273 rewrites (c0+x)<c1 to x<c1-c0 for every int dtype, which is unsound when x+c0 wraps: for uint32 "
               "x=4294967295, x+1 = 0 < 255 is True (spec, numpy) but tinygrad computes x < 254 = False, on CPU and DEV=PYTHON alike. "
               "Found by `uopcheck rules verify`, confirmed end to end."),
]
