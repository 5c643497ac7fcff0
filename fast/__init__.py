"""uopcheck.fast: tinygrad's real path (rangeify scheduler, codegen, HCQ2 runtime), with every stage captured."""
from uopcheck.fast.runner import run, run_fn, FastResult, CapturedKernel, hcq2_mode, hcq2_active, load_scheduler, to_numpy, uses_tensor_cores

__all__ = ["run", "run_fn", "FastResult", "CapturedKernel", "hcq2_mode", "hcq2_active", "load_scheduler", "to_numpy", "uses_tensor_cores"]
