"""uopcheck.fast: tinygrad's real path (rangeify scheduler, codegen, HCQ2 runtime), with every stage captured."""
from uopcheck.fast.runner import run, FastResult, CapturedKernel, hcq2_mode, hcq2_active, load_scheduler, to_numpy

__all__ = ["run", "FastResult", "CapturedKernel", "hcq2_mode", "hcq2_active", "load_scheduler", "to_numpy"]
