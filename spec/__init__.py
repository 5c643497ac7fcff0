"""uopcheck.spec: the single definition of UOp semantics (op table, int/float rules, weak dtypes, tolerances)."""
from uopcheck.spec.errors import SpecError
from uopcheck.spec.optable import OP_TABLE, OpSpec, Stage, op_spec, check_typing
from uopcheck.spec.floats import Tolerance, op_tolerance, graph_tolerance
from uopcheck.spec.compare import compare, Comparison
from uopcheck.spec.ints import OverflowReading

__all__ = ["SpecError", "OP_TABLE", "OpSpec", "Stage", "op_spec", "check_typing", "Tolerance", "op_tolerance", "graph_tolerance",
           "compare", "Comparison", "OverflowReading"]
