"""The op table: one entry per tinygrad ``Ops`` member.

Each entry says where the op may appear (tensor graph, kernel AST, program), its typing rule (as
text and as an executable check), and its value semantics, or why it is outside uopcheck's
scope. ``conformance/test_spec_table.py`` fails when tinygrad has an op this table doesn't name.

An ALU entry is executable: its numpy ``evaluate`` (``spec.alu.eval_alu`` reads it), ``arity``, the ``domain`` of dtypes
it is defined on, its float ``tolerance`` class (``spec.floats.op_tolerance`` reads it), the fuzzers that draw it
(``fuzz``) and, for an op with integer values, its one ``z3`` definition (``spec.intsem``, which every encoding of
``spec.z3model`` shares), for an op with exact float values its one IEEE ``fp`` definition (``spec.fpsem``); a test
requires every in-scope ALU op to have every entry and checks the fuzzers against the hints.
(Comparisons, WHERE and casts are sort-generic: the z3 model translates them itself.)"""
from __future__ import annotations
import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Callable
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec import alu
from uopcheck.spec.intsem import INT_SEMANTICS
from uopcheck.spec.fpsem import FLOAT_SEMANTICS

class Stage(Enum):
  TENSOR = "tensor"    # the graph Tensor builds, before scheduling
  KERNEL = "kernel"    # a kernel AST (SINK) made by rangeify
  PROGRAM = "program"  # after codegen: linearized, lowered program uops

T, K, P = Stage.TENSOR, Stage.KERNEL, Stage.PROGRAM

@dataclass(frozen=True)
class OpSpec:
  op: Ops
  stages: frozenset[Stage]
  typing: str
  semantics: str
  check: Callable[[UOp], str|None]|None = None   # returns the broken rule, or None
  out_of_scope: str|None = None                   # reason, when the reference does not evaluate it
  # executable ALU semantics
  evaluate: Callable|None = None   # (op, result dtype, operands) -> spec.alu.Lanes
  arity: int = 0
  domain: str = ""                 # float | int | int|bool | numeric (int, float, bool) | compare | select | uint64
  tolerance: str = ""              # exact | rounded | transcendental: how far a float result may be from the exact one
  fuzz: frozenset[str] = frozenset()   # fuzzers that draw the op directly: symbolic (integer expressions), graph (tensor programs)
  z3: Callable|None = None         # its one integer definition for the z3 model (spec.intsem): (domain, uop, operands) -> (value, conds)
  fp: Callable|None = None         # its one IEEE float definition for z3 (spec.fpsem): (model, uop, operands) -> (value, conds)
  traps: bool = False              # undefined at a zero divisor (an integer division: a kernel may trap, the harness says so)
  overflow_ub: bool = False        # at a sized signed int, overflow is UB in C (the CPU renderer) and wraps elsewhere: the two
                                   # overflow readings differ only on these (spec.ints.OverflowReading)
  on_bool: bool = False            # has a value on bool operands, at bool (spec.alu's bool branch: AND/ADD/MUL/MAX as logical
                                   # and/or, NEG the identity; WHERE selects): what an instance builder may put at a bool node
  orders_only: bool = False        # passes its sources through and only orders or groups effects: no value of its own, so a
                                   # rewrite rooted at it has nothing to check by value (fuzz/bounded_verify.py says n/a, and why)

  @property
  def rounds(self) -> bool:
    """a float result is the exact one rounded (each such op adds error to a chain: ``check.tolerance.op_depth``)"""
    return self.tolerance in ("rounded", "transcendental")

def _weak_ok(s:UOp, dt) -> bool: return s.dtype == dt or s.dtype in dtypes.weaks or s.base.is_invalid

def _check_same(u:UOp) -> str|None:
  if all(_weak_ok(s, u.dtype) for s in u.src): return None
  return f"operands must have the result dtype {u.dtype} (or be weak), got {[s.dtype for s in u.src]}"

def _check_float_unary(u:UOp) -> str|None:
  if not dtypes.is_float(u.dtype): return f"{u.op} is defined on floats only, got {u.dtype}"
  return _check_same(u)

def _check_int_only(u:UOp) -> str|None:
  if not (dtypes.is_int(u.dtype) or u.dtype == dtypes.bool and u.op in (Ops.AND, Ops.OR, Ops.XOR)):
    return f"{u.op} is defined on ints only, got {u.dtype}"
  return _check_same(u) if u.op not in (Ops.SHL, Ops.SHR) else None

def _check_cmp(u:UOp) -> str|None:
  if u.dtype != dtypes.bool: return f"a comparison's result is bool, got {u.dtype}"
  a, b = u.src
  if a.dtype == b.dtype or a.dtype in dtypes.weaks or b.dtype in dtypes.weaks: return None
  return f"comparison operands must share a dtype (or one be weak), got {a.dtype} and {b.dtype}"

def _check_where(u:UOp) -> str|None:
  if u.src[0].dtype != dtypes.bool: return f"WHERE's condition must be bool, got {u.src[0].dtype}"
  if all(_weak_ok(s, u.dtype) for s in u.src[1:]): return None
  return f"WHERE's branches must have the result dtype {u.dtype}, got {[s.dtype for s in u.src[1:]]}"

def _check_threefry(u:UOp) -> str|None:
  return None if u.dtype == dtypes.uint64 else f"THREEFRY works on uint64, got {u.dtype}"

def _check_reduce(u:UOp) -> str|None:
  if not (isinstance(u.arg, tuple) and len(u.arg) == 2 and u.arg[0] in GroupOp.Reduce):
    return f"REDUCE's arg is (op in {{ADD, MUL, MAX}}, num_axes), got {u.arg}"
  return None

_ALU_SEM = "spec.alu.eval_alu: numpy at the result dtype; ints wrap (spec.ints), floats IEEE (spec.floats)"
_OOS_RENDER = "a renderer/linearizer artifact with no value of its own; checked structurally only"

def _e(op, stages, typing, semantics, check=None, oos=None, **props) -> OpSpec:
  return OpSpec(op, frozenset(stages), typing, semantics, check, oos, **props)

# per ALU op: (evaluator, domain, tolerance class, fuzzers that draw it); arity comes from tinygrad's GroupOp
_S, _G = "symbolic", "graph"
_ALU: dict[Ops, tuple[Callable, str, str, tuple[str, ...]]] = {
  **{op: (alu.eval_numeric, "float", "transcendental", (_G,)) for op in (Ops.EXP2, Ops.LOG2, Ops.SIN)},
  Ops.POW: (alu.eval_numeric, "float", "transcendental", (_G,)),
  **{op: (alu.eval_numeric, "float", "rounded", (_G,)) for op in (Ops.SQRT, Ops.RECIPROCAL, Ops.FDIV)},
  Ops.TRUNC: (alu.eval_numeric, "float", "exact", (_G,)),   # IEEE: an integral value is representable, nothing rounds
  Ops.ADD: (alu.eval_numeric, "numeric", "rounded", (_S, _G)), Ops.MUL: (alu.eval_numeric, "numeric", "rounded", (_S, _G)),
  Ops.MAX: (alu.eval_numeric, "numeric", "exact", (_S, _G)), Ops.SUB: (alu.eval_numeric, "numeric", "rounded", (_G,)),
  Ops.NEG: (alu.eval_numeric, "numeric", "exact", (_G,)),   # MAX picks an operand, NEG flips a sign bit: exact in IEEE
  Ops.MULACC: (alu.eval_numeric, "numeric", "rounded", ()),
  Ops.FLOORDIV: (alu.eval_numeric, "int", "exact", (_S, _G)), Ops.FLOORMOD: (alu.eval_numeric, "int", "exact", (_S, _G)),
  Ops.CDIV: (alu.eval_numeric, "int", "exact", (_G,)), Ops.CMOD: (alu.eval_numeric, "int", "exact", (_G,)),
  Ops.SHL: (alu.eval_numeric, "int", "exact", (_G,)), Ops.SHR: (alu.eval_numeric, "int", "exact", (_G,)),
  Ops.AND: (alu.eval_numeric, "int|bool", "exact", (_S, _G)), Ops.XOR: (alu.eval_numeric, "int|bool", "exact", (_S, _G)),
  Ops.OR: (alu.eval_numeric, "int|bool", "exact", (_G,)),
  Ops.CMPLT: (alu.eval_compare, "compare", "exact", (_S, _G)), Ops.CMPNE: (alu.eval_compare, "compare", "exact", (_S, _G)),
  Ops.CMPEQ: (alu.eval_compare, "compare", "exact", (_G,)),
  Ops.WHERE: (alu.eval_where, "select", "exact", (_S, _G)),
  Ops.THREEFRY: (alu.eval_numeric, "uint64", "exact", (_G,)),
}

def _arity(op:Ops) -> int: return 1 if op in GroupOp.Unary else 2 if op in GroupOp.Binary else 3 if op in GroupOp.Ternary else 0

def _build() -> dict[Ops, OpSpec]:
  t: dict[Ops, OpSpec] = {}
  for op in (Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL):
    t[op] = _e(op, {T, K, P}, "float -> same float (weakint promotes to weakfloat)", _ALU_SEM+"; transcendental tolerance", _check_float_unary)
  t[Ops.NEG] = _e(Ops.NEG, {T, K, P}, "x -> x's dtype", "-x; int: 0-x wrapping, INT_MIN is UB on CPU for int32/int64", _check_same,
                  overflow_ub=True)
  t[Ops.TRUNC] = _e(Ops.TRUNC, {T, K, P}, "float -> same float", "round toward zero", _check_float_unary)
  t[Ops.MULACC] = _e(Ops.MULACC, {P}, "operands share the result dtype", "a*b+c, made by codegen (never in a tensor graph)", _check_same,
                     overflow_ub=True)
  for op in (Ops.ADD, Ops.MUL, Ops.SUB, Ops.MAX):
    t[op] = _e(op, {T, K, P}, "operands share the result dtype (weak operands commit to it)", _ALU_SEM, _check_same, overflow_ub=op is not Ops.MAX)
  t[Ops.FDIV] = _e(Ops.FDIV, {T, K}, "float operands share the result dtype", "IEEE division; x/0 = +-inf, 0/0 = NaN", _check_float_unary)
  t[Ops.POW] = _e(Ops.POW, {T, K}, "float operands share the result dtype", "x**y (numpy power); transcendental tolerance", _check_float_unary)
  for op in (Ops.CDIV, Ops.CMOD):
    t[op] = _e(op, {T, K, P}, "int operands share the result dtype", "C semantics: truncating (helpers.cdiv/cmod); /0 undefined", _check_int_only,
               traps=True, overflow_ub=True)
  for op in (Ops.FLOORDIV, Ops.FLOORMOD):
    t[op] = _e(op, {T, K}, "int operands share the result dtype", "floor semantics (helpers.floordiv/floormod); /0 undefined", _check_int_only,
               traps=True, overflow_ub=True)
  for op in (Ops.SHL, Ops.SHR):
    t[op] = _e(op, {T, K, P}, "int lhs gives the result dtype; count is the same dtype, uint32 or weakint",
               "count outside [0,bits) undefined; SHR arithmetic on signed", _check_int_only, overflow_ub=op is Ops.SHL)
  for op in (Ops.AND, Ops.OR, Ops.XOR):
    t[op] = _e(op, {T, K, P}, "int or bool operands share the result dtype", "bitwise", _check_int_only)
  for op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
    t[op] = _e(op, {T, K, P}, "two operands of one dtype (or weak) -> bool", "IEEE compare: NaN < x false, NaN != x true", _check_cmp)
  t[Ops.WHERE] = _e(Ops.WHERE, {T, K, P}, "bool cond, branches share the result dtype", "cond ? a : b, lane-wise", _check_where)
  t[Ops.THREEFRY] = _e(Ops.THREEFRY, {T, K}, "uint64 x uint64 -> uint64", "Threefry-2x32, 20 rounds (spec.alu.threefry2x32)", _check_threefry)
  t[Ops.CAST] = _e(Ops.CAST, {T, K, P}, "any -> arg dtype", "spec.alu.cast: float->int truncates, out of range undefined; int->int wraps")
  t[Ops.BITCAST] = _e(Ops.BITCAST, {T, K, P}, "any -> arg dtype; last axis scales by itemsize ratio", "reinterpret the bytes")
  t[Ops.CONST] = _e(Ops.CONST, {T, K, P}, "dtype from the value: int->weakint, float->weakfloat, bool->bool (or explicit)",
                    "the value, broadcast to its shape; Invalid marks a lane with no value")
  for op in (Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP):
    # SHRINK: also a kernel/program view; RESHAPE: also a kernel's view of a PARAM with constant dims, indexed one index per dim
    # (the form of the kernels tinygrad's all-reduce builds directly: schedule/allreduce.py; ref.kernel_interp)
    t[op] = _e(op, {T} | ({K, P} if op is Ops.SHRINK else {K} if op is Ops.RESHAPE else set()), "keeps the dtype; shape per UOp._shape",
               "index remapping (ref.movement); EXPAND prepends its shape, PAD is (offset, size) and fills 0")
  t[Ops.REDUCE] = _e(Ops.REDUCE, {T, K}, "keeps the dtype; arg (op, n) reduces the first n axes (tensor) or the given ranges (kernel)",
                     "ADD/MUL/MAX fold; ints wrap at the dtype, floats accumulate in float64 then round", _check_reduce, tolerance="rounded")
  t[Ops.BUFFER] = _e(Ops.BUFFER, {T, K, P}, "ParamArg dtype; src[0] is the size", "device memory; a Variable is a 0-d ALU BUFFER")
  t[Ops.PARAM] = _e(Ops.PARAM, {K, P}, "ParamArg dtype", "the kernel's n-th argument buffer")
  t[Ops.CONTIGUOUS] = _e(Ops.CONTIGUOUS, {T}, "keeps the dtype", "identity on values (a realize hint)")
  t[Ops.CONTIGUOUS_BACKWARD] = _e(Ops.CONTIGUOUS_BACKWARD, {T}, "keeps the dtype", "identity on values")
  t[Ops.DETACH] = _e(Ops.DETACH, {T}, "keeps the dtype", "identity on values (gradient stop)")
  t[Ops.COPY] = _e(Ops.COPY, {T}, "keeps the dtype; arg is the target device", "identity on values, moves devices")
  t[Ops.AFTER] = _e(Ops.AFTER, {T, K}, "src[0]'s dtype", "src[0]'s value once the stores in src[1:] are done", orders_only=True)
  t[Ops.STORE] = _e(Ops.STORE, {T, K, P}, "void; (target, value[, gate])", "writes value through the target view")
  t[Ops.SINK] = _e(Ops.SINK, {T, K, P}, "void", "the tuple of its sources' values", orders_only=True)
  t[Ops.STACK] = _e(Ops.STACK, {T, K, P}, "sources share a dtype; shape (n,)+src shape", "stacks its sources (vectors and shape args)")
  t[Ops.INDEX] = _e(Ops.INDEX, {K, P}, "buffer dtype; int indices", "address of buf[idx]; Invalid index gates the lane")
  t[Ops.LOAD] = _e(Ops.LOAD, {K, P}, "the INDEX's dtype", "reads buf[idx] (alt value when gated off)")
  t[Ops.RANGE] = _e(Ops.RANGE, {T, K, P}, "weakint/int; src[0] is the end",
                    "loop variable over [0, end); at the tensor stage only AxisType.DEVICE: the device index an UNSHARD binds")
  t[Ops.UNSHARD] = _e(Ops.UNSHARD, {T}, "src[0]'s dtype; (value, device RANGE), arg (axis,)",
                      "src[0] evaluated at each device index of its RANGE, concatenated along the axis (a shard's logical value)")
  t[Ops.END] = _e(Ops.END, {K, P}, "void; closes RANGEs", "ends the loops of its RANGE sources", orders_only=True)
  t[Ops.CALL] = _e(Ops.CALL, {T, K}, "void for kernels", "runs its body (a kernel SINK, COPY or PROGRAM) on its arguments")
  t[Ops.SPECIAL] = _e(Ops.SPECIAL, {K, P}, "int32 after lowering", "a GPU launch index in [0, end)")
  t[Ops.BINARY] = _e(Ops.BINARY, {P}, "uint8 bytes", "compiled code", oos="compiled bytes; compared by running them")
  for op, why in [(Ops.NOOP, _OOS_RENDER), (Ops.REWRITE_ERROR, "marks a failed rewrite; its presence is itself an error"),
                  (Ops.FUNCTION, "gradient-able call body; the reference evaluates graphs after tinygrad inlines functions"),
                  (Ops.PROGRAM, "a compiled program; the fast path runs it"), (Ops.LINEAR, _OOS_RENDER), (Ops.SOURCE, _OOS_RENDER),
                  (Ops.GROUP, _OOS_RENDER), (Ops.TUPLE, "FUNCTION plumbing, outside the evaluated graph"),
                  (Ops.GETTUPLE, "FUNCTION plumbing, outside the evaluated graph"), (Ops.GETADDR, "HCQ address patching: runtime-only"),
                  (Ops.WMMA, "tensor-core op made by opts on GPU targets; not emitted for CPU"),
                  (Ops.BARRIER, _OOS_RENDER), (Ops.IF, _OOS_RENDER), (Ops.ENDIF, _OOS_RENDER),
                  (Ops.CUSTOM, "inline source text: no semantics the spec can state"), (Ops.CUSTOMI, "inline source text"),
                  (Ops.INS, "a machine instruction (ISA renderers)"), (Ops.STAGE, "scheduler-internal buffer staging before BUFFER"),
                  (Ops.MSELECT, "multi-device: uopcheck runs single-device graphs"), (Ops.MSTACK, "multi-device"),
                  (Ops.CUSTOM_FUNCTION, "opaque runtime function (hcq, graph, encdec)"),
                  (Ops.ALLREDUCE, "multi-device collective"), (Ops.PYLITERAL, "pattern-compiler IR, never in a graph")]:
    stages = {P} if op in (Ops.PROGRAM, Ops.LINEAR, Ops.SOURCE, Ops.BARRIER, Ops.IF, Ops.ENDIF, Ops.INS, Ops.GETADDR, Ops.CUSTOM, Ops.CUSTOMI) \
             else {T} if op in (Ops.FUNCTION, Ops.TUPLE, Ops.GETTUPLE, Ops.STAGE, Ops.MSELECT, Ops.MSTACK, Ops.ALLREDUCE) \
             else {K, P} if op in (Ops.WMMA, Ops.GROUP) else set()
    t[op] = _e(op, stages, "see tinygrad/uop/spec.py", "-", oos=why, orders_only=op is Ops.GROUP)
  return t

# the ALU ops with a value on bool operands (conformance/test_spec_table.py checks spec.alu evaluates exactly these on bool)
_ON_BOOL = (Ops.AND, Ops.OR, Ops.XOR, Ops.MAX, Ops.MUL, Ops.ADD, Ops.NEG, Ops.WHERE)

def _with_semantics(t:dict[Ops, OpSpec]) -> dict[Ops, OpSpec]:
  for op, (f, dom, tol, fz) in _ALU.items():
    t[op] = dataclasses.replace(t[op], evaluate=f, arity=_arity(op), domain=dom, tolerance=tol, fuzz=frozenset(fz), z3=INT_SEMANTICS.get(op),
                                fp=FLOAT_SEMANTICS.get(op), on_bool=op in _ON_BOOL)
  return t

OP_TABLE: dict[Ops, OpSpec] = _with_semantics(_build())

# The op and dtype sets the rest of uopcheck uses, derived from the table (conformance/test_layers.py fails on a module-level
# op set outside spec/): a new op's properties are stated once, in its entry above.
TRAPPING_OPS = frozenset(op for op, s in OP_TABLE.items() if s.traps)
OVERFLOW_UB_OPS = frozenset(op for op, s in OP_TABLE.items() if s.overflow_ub)
ROUNDING_OPS = frozenset(op for op, s in OP_TABLE.items() if s.rounds)
ORDERING_OPS = frozenset(op for op, s in OP_TABLE.items() if s.orders_only)
BOOL_OPS = frozenset(op for op, s in OP_TABLE.items() if s.on_bool)
FLOAT_OPS = frozenset(op for op, s in OP_TABLE.items() if s.domain in ("float", "numeric", "compare", "select"))   # defined on floats
SIZED_INTS = tuple(dtypes.sints + dtypes.uints)   # tinygrad's own groups: int8..int64, uint8..uint64 (weakint is unbounded)

def op_spec(op:Ops) -> OpSpec:
  if op not in OP_TABLE:
    from uopcheck.spec.errors import SpecError
    raise SpecError("unknown op: not in uopcheck's op table (spec/optable.py)", op)
  return OP_TABLE[op]

def check_typing(u:UOp) -> str|None:
  """The typing rule of ``u``'s op applied to ``u``: the broken rule, or None."""
  spec = op_spec(u.op)
  return spec.check(u) if spec.check is not None else None
