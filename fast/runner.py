"""tinygrad's real path, captured: schedule (rangeify, pluggable), codegen, and the runtime (HCQ2 by default).

``run(x)`` realizes a Tensor (or several) through tinygrad itself and returns the outputs plus
every stage it saw: the kernel graph ``get_kernel_graph`` returned, each kernel's AST, and each
compiled program's source. Each captured stage is checked against tinygrad's structural spec."""
from __future__ import annotations
import contextlib, importlib, importlib.util, os, pathlib, re, sys, time
from dataclasses import dataclass, field
from typing import Callable
import numpy as np
from tinygrad import Tensor, Device
from tinygrad.uop.ops import UOp, Ops, PatternMatcher, UPat, KernelInfo
from tinygrad.dtype import dtypes
from tinygrad.helpers import getenv
import tinygrad.schedule as tg_schedule
import tinygrad.engine.realize as tg_realize
from tinygrad.schedule import create_schedule
from uopcheck.spec.errors import SpecError
from uopcheck.spec.structural import verify
from uopcheck.spec.numpy_dtypes import fp8_from_bits
from uopcheck.settings import give_hcq2_functions

@dataclass
class CapturedKernel:
  name: str
  ast: UOp                 # the kernel SINK rangeify made
  program: UOp|None = None # the compiled PROGRAM (SINK, LINEAR, SOURCE, BINARY)
  source: str = ""

@dataclass
class FastResult:
  outputs: list[np.ndarray]
  kernel_graphs: list[UOp] = field(default_factory=list)
  kernels: list[CapturedKernel] = field(default_factory=list)
  device: str = "CPU"
  hcq2: bool = True
  wall_s: float = 0.0
  compile_s: float = 0.0   # time in tinygrad's lower_and_compile (codegen + compiler) during this run
  spec_checked: dict[str, int] = field(default_factory=dict)

def load_scheduler(spec:str|Callable|None) -> Callable:
  """Resolve a scheduler: None -> tinygrad's rangeify ``get_kernel_graph``; 'package.module:function' -> that function;
  'path/to/file.py:function' -> that function of that file (loaded where it lies, e.g. a candidate under ../shared)."""
  if spec is None: return _TINYGRAD_GET_KERNEL_GRAPH
  if callable(spec): return spec
  if ":" not in spec: raise SpecError(f"scheduler {spec!r} must be written 'package.module:function' or 'file.py:function'")
  mod, fn = spec.rsplit(":", 1)
  try:
    if mod.endswith(".py"):
      path = pathlib.Path(mod).resolve()
      if not path.is_file(): raise ImportError(f"no file {path}")
      name = f"uopcheck_scheduler_{path.stem}"
      if name not in sys.modules:
        spec_ = importlib.util.spec_from_file_location(name, path)
        if spec_ is None or spec_.loader is None: raise ImportError(f"cannot load {path} as a module")
        module = importlib.util.module_from_spec(spec_)
        sys.modules[name] = module
        spec_.loader.exec_module(module)
      f = getattr(sys.modules[name], fn)
    else: f = getattr(importlib.import_module(mod), fn)
  except (ImportError, AttributeError, SyntaxError) as e: raise SpecError(f"cannot load scheduler {spec!r}: {e}") from None
  if not callable(f): raise SpecError(f"scheduler {spec!r} is not callable")
  return f

_TINYGRAD_GET_KERNEL_GRAPH = tg_schedule.get_kernel_graph

def hcq2_active() -> bool: return bool(getenv("HCQ2"))

def open_cpu_queues(devices:tuple[str, ...]=("CPU", "CPU:1")) -> None:
  """The one place uopcheck works around tinygrad 0.14.0's stale HCQ2 queue counter (shipped as the plain reproducer
  ``hcq2-stale-queue-counter-hang``, conformance/plain_reproducers.py): the CPU device creates each HCQ2 queue worker
  (COMPUTE:0, SUBMIT:0) on first use and takes its put/sys/done counters from the LRU allocator unzeroed, so a freed
  8-byte buffer with data in it makes that queue's first submit wait forever -- in a long process (the suite, a campaign
  worker) whenever a queue is first used after such a free. Creating the queues first, through tinygrad's own
  ``CPUDevice.worker``, after emptying the allocator's cache of freed buffers, gives them fresh zeroed memory (a new
  anonymous mapping) whatever the process did before; tinygrad's code is not changed. Idempotent. Called whenever
  ``hcq2_mode(True)`` is entered (so every check, from the CLI or the Python API) and once per process by
  conformance/conftest.py, graph-campaign workers (one machine and cluster), lost-case re-runs and ``check``'s worker."""
  from tinygrad import Device
  for d in devices:
    dev = Device[d]
    if not hasattr(dev, "worker") or len(getattr(dev, "workers", ())) >= 2: continue
    dev.allocator.free_cache()   # type: ignore[attr-defined]  # no cached, dirty buffer can become a counter
    for q in ("COMPUTE:0", "SUBMIT:0"): dev.worker(q)

@contextlib.contextmanager
def hcq2_mode(enabled:bool):
  """Run with tinygrad's HCQ2 path on or off. tinygrad reads HCQ2 through a cached getenv at import; this
  switches the same flag and installs the hcq2 compile/link hooks realize.py imports when HCQ2=1."""
  old_env = os.environ.get("HCQ2")
  os.environ["HCQ2"] = "1" if enabled else "0"
  getenv.cache_clear()  # type: ignore[attr-defined]
  # the stale counter hangs HCQ2's queues only (fine under HCQ2=0), and opening CPU devices inside the mock GPU's
  # hcq2_mode(False) would import tinygrad's hcq before the mock is on the path: queues are opened for HCQ2 only
  if enabled:
    give_hcq2_functions(tg_realize)
    open_cpu_queues()
  try: yield
  finally:
    if old_env is None: os.environ.pop("HCQ2", None)
    else: os.environ["HCQ2"] = old_env
    getenv.cache_clear()  # type: ignore[attr-defined]

# The hooks are installed by an explicit call (``install_hooks``; every capture makes it) and switched through this shared
# mutable state. tinygrad looks up both names it replaces as module globals at call time (``schedule.pm_schedule`` in
# create_schedule, ``realize.lower_and_compile`` in run_linear), so installing them late is enough.
_STATE: dict = {"result": None, "scheduler": None, "compile_log": None, "on_compiled": None}
_orig_lower_sink_to_linear = tg_schedule.lower_sink_to_linear
_orig_lower_and_compile = tg_realize.lower_and_compile
_orig_pm_schedule = tg_schedule.pm_schedule

def _hooked_lower_sink_to_linear(function:UOp) -> UOp|None:
  if _STATE["result"] is None: return _orig_lower_sink_to_linear(function)
  if isinstance(function.arg, KernelInfo): return None
  kg = _STATE["scheduler"](function)
  _STATE["result"].kernel_graphs.append(kg)
  return create_schedule(kg)

TENSOR_CORE_CALL = re.compile(r"llvm\.amdgcn\.(mfma|wmma)|__builtin_amdgcn_(mfma|wmma)|\bmma\.sync\b|__WMMA_|\bv_(mfma|wmma)_")

def uses_tensor_cores(source:str) -> bool:
  """whether a program's source calls the device's matrix instructions (AMD MFMA on CDNA, WMMA on RDNA, NVIDIA mma)"""
  return TENSOR_CORE_CALL.search(source) is not None

def _program_name_source(prg:UOp) -> tuple[str, str]:
  src = next((s.arg for s in prg.src if s.op is Ops.SOURCE), "")
  return (prg.arg.function_name if hasattr(prg.arg, "function_name") else str(prg.src[0].arg.name)), src

def _hooked_lower_and_compile(linear:UOp) -> UOp:
  st = time.perf_counter()
  out = _orig_lower_and_compile(linear)
  if (res := _STATE["result"]) is not None: res.compile_s += time.perf_counter() - st
  if (log := _STATE["compile_log"]) is not None: log.append((linear, out))  # fast.jit_capture: what TinyJit compiled
  programs = [(call_in, call.src[0]) for call_in, call in zip(linear.src, out.src) if call.op is Ops.CALL and call.src[0].op is Ops.PROGRAM]
  if (result := _STATE["result"]) is not None:
    for call_in, prg in programs:
      name, src = _program_name_source(prg)
      # the kernel AST as rangeify made it (before codegen's optimizations), when the input call still holds it
      ast = call_in.src[0] if call_in.op is Ops.CALL and call_in.src[0].op is Ops.SINK else prg.src[0]
      result.kernels.append(CapturedKernel(name, ast, prg, src))
  # e.g. a fuzz worker noting the sources before they run, so that a hang or a crash can name them
  if (hook := _STATE["on_compiled"]) is not None: hook([_program_name_source(prg) for _, prg in programs])
  return out

_PM_SCHEDULE_HOOKED = PatternMatcher([(UPat(Ops.SINK, name="function"), _hooked_lower_sink_to_linear)])

def install_hooks() -> None:
  """Route tinygrad's scheduling and compiling through uopcheck's capture (idempotent). With no capture active the hooks
  call tinygrad's own functions, so an installed hook changes nothing until a capture starts; ``uninstall_hooks`` puts
  tinygrad's own back."""
  tg_schedule.pm_schedule = _PM_SCHEDULE_HOOKED
  tg_realize.lower_and_compile = _hooked_lower_and_compile

def uninstall_hooks() -> None:
  if any(v is not None for v in _STATE.values()): raise SpecError("cannot uninstall uopcheck's tinygrad hooks while a capture is active")
  tg_schedule.pm_schedule, tg_realize.lower_and_compile = _orig_pm_schedule, _orig_lower_and_compile

def hooks_installed() -> bool: return tg_realize.lower_and_compile is _hooked_lower_and_compile

@contextlib.contextmanager
def on_compiled(hook:Callable[[list[tuple[str, str]]], None]):
  """Call ``hook`` with (name, source) of every program tinygrad compiles inside the block (before it runs)."""
  install_hooks()
  _STATE["on_compiled"] = hook
  try: yield
  finally: _STATE["on_compiled"] = None

@contextlib.contextmanager
def capture(result:FastResult, scheduler:Callable):
  """Record each stage into ``result`` while realizing, with ``scheduler`` in place of rangeify's get_kernel_graph."""
  if _STATE["result"] is not None: raise SpecError("fast.run is not re-entrant: a capture is already active")
  install_hooks()
  _STATE["result"], _STATE["scheduler"] = result, scheduler
  try: yield
  finally: _STATE["result"], _STATE["scheduler"] = None, None

def to_numpy(t:Tensor) -> np.ndarray:
  """A realized Tensor's values in the reference's storage convention (bfloat16/fp8 held in float32). bfloat16 is read as
  tinygrad's own ``numpy()`` reads it, through ``float()`` (exact: every bfloat16 is a float32): a ``bitcast(uint16)``
  here once made a kernel of uopcheck's own that plain tinygrad never runs, and with clang-19 and Debian 12's libgcc_s it
  failed to link (``__truncsfbf2``) -- a crash that was uopcheck's, not tinygrad's."""
  if t.dtype == dtypes.bfloat16: return t.float().numpy()
  if t.dtype in dtypes.fp8s: return fp8_from_bits(t.bitcast(dtypes.uint8).numpy(), t.dtype)
  return t.numpy()

def _as_tensors(x) -> list[Tensor]:
  if isinstance(x, Tensor): return [x]
  if isinstance(x, UOp): return [Tensor(s) for s in x.src] if x.op is Ops.SINK else [Tensor(x)]
  if isinstance(x, (list, tuple)): return [t for e in x for t in _as_tensors(e)]
  raise SpecError(f"fast.run takes a Tensor, a UOp or a list of them, got {type(x).__name__}")

def on_device(tensors:list[Tensor], device:str) -> list[Tensor]:
  """the outputs as uopcheck reads them: each on ``device``, copied there when it is elsewhere (a sharded value included)"""
  return [t if t.device == device else t.to(device) for t in tensors]

def run(x, device:str="CPU", hcq2:bool=True, scheduler:str|Callable|None=None, check_spec:bool=True) -> FastResult:
  """Realize ``x`` through tinygrad's scheduler, codegen and runtime, capturing every stage."""
  if device.split(":")[0] not in Device._devices:
    raise SpecError(f"device {device!r} is not a tinygrad device here (known: {', '.join(sorted(Device._devices))})")
  tensors = on_device(_as_tensors(x), device)
  res = FastResult([], device=device, hcq2=hcq2)
  sched = load_scheduler(scheduler)
  if check_spec: res.spec_checked["tensor"] = sum(verify(t.uop, "tensor") for t in tensors)
  return _realize_captured(lambda: tensors, res, sched, check_spec)

def run_fn(fn:Callable[[], list[Tensor]], device:str="CPU", hcq2:bool=True, scheduler:str|Callable|None=None, check_spec:bool=True) -> FastResult:
  """Like ``run``, for Tensors that ``fn`` makes under the capture (e.g. a TinyJit call: its compiles are captured, its
  replays run the captured kernels)."""
  res = FastResult([], device=device, hcq2=hcq2)
  return _realize_captured(lambda: on_device(_as_tensors(fn()), device), res, load_scheduler(scheduler), check_spec)

def _realize_captured(make:Callable[[], list[Tensor]], res:FastResult, sched:Callable, check_spec:bool) -> FastResult:
  st = time.perf_counter()
  with hcq2_mode(res.hcq2), capture(res, sched):
    tensors = make()
    Tensor.realize(*tensors)
    res.outputs = [to_numpy(t) for t in tensors]
  res.wall_s = time.perf_counter() - st
  if check_spec: check_stages(res)
  return res

def check_stages(res:FastResult) -> None:
  """tinygrad's own structural spec at every captured stage; SpecError names the stage and the UOp."""
  for kg in res.kernel_graphs:
    res.spec_checked["kernel_graph"] = res.spec_checked.get("kernel_graph", 0) + verify(kg, "kernel_graph", enter_calls=False)
  for k in res.kernels:
    res.spec_checked["kernel"] = res.spec_checked.get("kernel", 0) + verify(k.ast, "kernel")
    if k.program is not None and (lin := next((s for s in k.program.src if s.op is Ops.LINEAR), None)) is not None:
      res.spec_checked["program"] = res.spec_checked.get("program", 0) + verify(list(lin.src), "program")
