"""uopcheck.ref: the reference interpreter (the oracle). Imports tinygrad's UOp, Ops and dtypes only."""
from uopcheck.ref.tensor_interp import evaluate, evaluate_lanes, TensorInterpreter, load_inputs

__all__ = ["evaluate", "evaluate_lanes", "TensorInterpreter", "load_inputs"]
