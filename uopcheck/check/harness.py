"""ref vs fast on one case: build the graph, evaluate it with the reference, realize it with tinygrad, compare.

A case is a function that builds fresh Tensors (the reference must read the graph before the fast
path realizes it and replaces the Tensors' UOps with buffers). A failing case carries a
reproducer: the graph, its input buffers, and the first differing element with both values."""
from __future__ import annotations
import time
from dataclasses import dataclass, field
from typing import Callable
import numpy as np
from tinygrad import Tensor, Device
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec.errors import SpecError
from uopcheck.spec.compare import compare, Comparison
from uopcheck.spec.floats import Tolerance
from uopcheck.check.tolerance import tolerance_for
from uopcheck.ref.tensor_interp import TensorInterpreter, load_inputs
from uopcheck.spec.alu import Lanes
from uopcheck.spec.optable import TRAPPING_OPS
from uopcheck import fast

@dataclass
class CaseResult:
  name: str
  ok: bool
  comparisons: list[Comparison] = field(default_factory=list)
  ref_s: float = 0.0
  fast_s: float = 0.0
  kernels: int = 0
  reproducer: str = ""
  error: str = ""
  ub_lanes: int = 0
  skipped_undefined: int = 0
  failed_in: str = ""      # "reference" when uopcheck's own reference refused or failed (never a tinygrad finding), "fast" otherwise
  spec_error: bool = False   # a SpecError stopped the case (in the fast path: tinygrad built something the spec refuses)
  tensor_core_kernels: int = 0   # kernels whose program calls the device's matrix instructions (MFMA / WMMA / mma)

  def line(self) -> str:
    status = "PASS" if self.ok else "FAIL"
    extra = f" UB-on-CPU lanes={self.ub_lanes}" if self.ub_lanes else ""
    extra += f" undefined-skipped={self.skipped_undefined}" if self.skipped_undefined else ""
    err = f" — {self.error}" if self.error else ""
    return f"{status} {self.name}: kernels={self.kernels} ref={self.ref_s*1e3:.1f}ms fast={self.fast_s*1e3:.1f}ms{extra}{err}"

def _tensors(x) -> list[Tensor]:
  if isinstance(x, Tensor): return [x]
  if isinstance(x, (list, tuple)): return [t for e in x for t in _tensors(e)]
  raise SpecError(f"a case must build a Tensor or a list of Tensors, got {type(x).__name__}")

def graph_inputs(root:UOp, interp:TensorInterpreter) -> dict[str, np.ndarray]:
  """The realized input buffers of a graph with the values the reference read."""
  out = {}
  for u in root.toposort(enter_calls=False):
    if u.op is Ops.BUFFER and not u.is_variable and isinstance(v := interp.vals.get(u), Lanes) and not v.undefined.all():
      out[f"buf{u.arg.slot}:{u.dtype}:{u.arg.device}"] = v.value
  return out

def reproducer(name:str, root:UOp, interp:TensorInterpreter, cmp:Comparison, out_index:int) -> str:
  ins = graph_inputs(root, interp)
  lines = [f"# uopcheck reproducer: {name}", f"# output {out_index}: {cmp.summary()}", "# graph:", str(root), "# inputs:"]
  with np.printoptions(threshold=64, edgeitems=4):
    lines += [f"{k} = {np.array2string(np.asarray(v))}" for k, v in ins.items()]
  if cmp.first_index is not None:
    lines.append(f"# first differing element {cmp.first_index}: ref={cmp.ref_value!r} fast={cmp.fast_value!r}")
  return "\n".join(lines)

def check(build:Callable[[], object], name:str="case", tol:Tolerance|None=None, hcq2:bool|None=None, scheduler=None,
          realize:Callable[[list[Tensor]], fast.FastResult]|None=None, device:str|None=None) -> CaseResult:
  """Run one case: reference then fast path, compare every output. ``realize`` replaces the fast path's ``fast.run`` (e.g. a
  TinyJit replay that computes the same outputs from its own copies of the inputs). ``device``: where the outputs are read
  (default: tinygrad's default device, where the graph was built -- ``fast.devices.default_device`` or ``UOPCHECK_DEVICE``).
  ``hcq2``: the runtime path (default: as ``HCQ2`` says -- on AMD the device's driver was chosen by it when it opened)."""
  res = CaseResult(name, False, failed_in="build")
  try:
    tensors = _tensors(build())
    root = UOp.sink(*[t.uop for t in tensors])
    res.failed_in = "reference"
    interp = TensorInterpreter(load_inputs(root))  # input bytes are read up front; evaluation touches no device
    st = time.perf_counter()
    ref_out = interp.run(root)
    res.ref_s = time.perf_counter() - st
    for u, v in interp.vals.items():   # a trapping op's undefined lanes trap in hardware (x86 idiv: SIGFPE): never run them
      if u.op in TRAPPING_OPS and isinstance(v, Lanes) and dtypes.is_int(u.dtype) and v.undefined.any():
        raise SpecError.at(u, "its inputs hold lanes the spec calls undefined (integer division by zero or MIN/-1)",
                           "the CPU backend would trap (SIGFPE); not running the fast path")
    res.failed_in = "fast"
    f = fast.run(tensors, device=device or Device.DEFAULT, hcq2=fast.hcq2_active() if hcq2 is None else hcq2, scheduler=scheduler) \
      if realize is None else realize(tensors)
    res.fast_s, res.kernels = f.wall_s, len(f.kernels)
    res.tensor_core_kernels = sum(fast.uses_tensor_cores(k.source) for k in f.kernels)
    ok = True
    for i, (t, r, fo) in enumerate(zip(tensors, ref_out, f.outputs)):
      t_tol = tol if tol is not None else tolerance_for(root, t.dtype)
      c = compare(r.value, fo, t.dtype, t_tol, r.undefined, r.ub_overflow)
      res.comparisons.append(c)
      res.ub_lanes += c.ub_lanes
      res.skipped_undefined += c.skipped_undefined
      if not c.ok and ok:
        ok = False
        res.reproducer = reproducer(name, root, interp, c, i)
    res.ok = ok
    res.failed_in = "" if ok else "fast"
    if not ok: res.error = next(c.summary() for c in res.comparisons if not c.ok)
  except SpecError as e:
    res.error, res.spec_error = str(e), True
  return res
