"""What a file may hand tinygrad: the admission rules for kernel ASTs and devices read from reproducers and findings.

A reproducer or finding travels between people. ``spec.uop_json`` already parses it as data (no code runs while it is
read); this module decides, *before* tinygrad renders, compiles or allocates anything, whether what it describes is
something uopcheck itself could have produced:

- ``check_device``: a device the gate or the fuzzers run on -- the CPU, the AMD backend (hardware or tinygrad's mock GPU)
  and NVIDIA -- never ``DISK`` (it maps a file path: a buffer there overwrites the file), ``REMOTE``, a path or anything else.
- ``check_kernel_ast``: a kernel AST as rangeify makes it. Every op must be one the op table allows in a kernel AST, and
  none of the ops whose argument tinygrad pastes into the program's source (``CUSTOM``, ``CUSTOMI``, ``INS``, ``WMMA``'s
  name, a ``SOURCE``/``PROGRAM``/``BINARY``) may appear; every string in an argument must be an identifier (a
  ``PARAM``'s name is pasted into the C source as it is); every device named inside it passes ``check_device``; every
  node passes its op's typing rule (``spec.optable``) and the graph tinygrad's own structural spec for the kernel stage.
Each refusal is one ``SpecError`` naming the node, the op and the rule it broke."""
from __future__ import annotations
import dataclasses, re
from typing import Any, Iterator
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, ParamArg, KernelInfo
from uopcheck.spec.errors import SpecError
from uopcheck.spec.optable import OP_TABLE, Stage, check_typing

# devices a reproducer may name: what uopcheck runs on (a ':N' device index; an '::gfxNNN' target of the AMD mock)
ALLOWED_DEVICE = re.compile(r"(CPU|AMD|MOCK\+AMD|NV|CUDA)(:\d{1,2})?(::gfx\d{3,4}[a-z]?)?")
# ops whose argument becomes program text (or that are a program already): never accepted from a file
SOURCE_OPS = frozenset({Ops.CUSTOM, Ops.CUSTOMI, Ops.INS, Ops.SOURCE, Ops.PROGRAM, Ops.BINARY, Ops.LINEAR, Ops.WMMA, Ops.CALL,
                        Ops.CUSTOM_FUNCTION})
KERNEL_OPS = frozenset(op for op, s in OP_TABLE.items() if Stage.KERNEL in s.stages) - SOURCE_OPS
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# a kernel's name is turned into a C identifier by tinygrad (to_function_name); still, no control or quote characters
KERNEL_NAME = re.compile(r"[A-Za-z0-9_ .:\-\[\]\x1b]{0,200}")

def check_device(dev:Any, where:str="") -> str:
  """``dev`` if it is a device uopcheck runs on, else a SpecError naming it (DISK, REMOTE and paths never are)."""
  if not isinstance(dev, str) or ALLOWED_DEVICE.fullmatch(dev) is None:
    raise SpecError(f"{where}device {str(dev)[:80]!r} is not one uopcheck runs on (CPU, AMD, MOCK+AMD, NV, CUDA, with an optional :N); "
                    "never DISK, REMOTE or a path")
  return dev

def _strings(arg:Any, field:str="arg") -> Iterator[tuple[str, str]]:
  """(field, string) for every string inside an argument (tuples and dataclass fields searched)"""
  if isinstance(arg, str): yield field, arg
  elif isinstance(arg, (tuple, list)):
    for i, x in enumerate(arg): yield from _strings(x, f"{field}[{i}]")
  elif dataclasses.is_dataclass(arg) and not isinstance(arg, type):
    for f in dataclasses.fields(arg): yield from _strings(getattr(arg, f.name), f"{field}.{f.name}")

def _check_arg(u:UOp, where:str) -> None:
  for field, s in _strings(u.arg):
    if isinstance(u.arg, ParamArg) and field == "arg.device": check_device(s, where)
    elif isinstance(u.arg, KernelInfo) and field == "arg.name":
      if KERNEL_NAME.fullmatch(s) is None: raise SpecError(f"{where}kernel name {s[:40]!r} has characters a kernel name never has")
    elif IDENTIFIER.fullmatch(s) is None:
      raise SpecError(f"{where}string {s[:40]!r} in {field} is not an identifier (tinygrad may paste it into the program's source)")

def check_kernel_ast(ast:UOp, name:str="ast") -> UOp:
  """``ast`` if it is a kernel AST uopcheck could have saved (see the module docstring), else one SpecError."""
  from uopcheck.spec.structural import verify
  if ast.op is not Ops.SINK: raise SpecError(f"{name}: a kernel AST is a SINK, got {ast.op}")
  for i, u in enumerate(ast.toposort()):
    where = f"{name}: node {i} ({u.op.name}): "
    if u.op in SOURCE_OPS: raise SpecError(f"{where}{u.op} pastes its argument into the program's source: not allowed in a reproducer")
    if u.op not in KERNEL_OPS: raise SpecError(f"{where}{u.op} is not an op of a kernel AST (spec/optable.py stages)")
    _check_arg(u, where)
    if (broken := check_typing(u)) is not None: raise SpecError(f"{where}breaks its typing rule: {broken}")
  try: verify(ast, "kernel")
  except SpecError as e: raise SpecError(f"{name}: {e}") from None
  return ast
