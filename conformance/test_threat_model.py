"""The threat model (README "Threat model"), attack by attack: what a file or a peer sends never runs code, never writes
outside its folder, and never becomes a false verdict. Each test here is an attack that succeeded before its defence."""
from __future__ import annotations
import pytest
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, ParamArg
from uopcheck.cli import main
from uopcheck.spec.errors import SpecError
from uopcheck.spec import admission, uop_json
from conformance import hostile

@pytest.fixture
def renders(monkeypatch):
  """counts every kernel tinygrad lowers to a program (its renderer and compiler sit behind ``to_program``)"""
  import tinygrad.engine.realize as tg_realize
  calls = []
  orig = tg_realize.lower_and_compile
  monkeypatch.setattr(tg_realize, "lower_and_compile", lambda *a, **k: calls.append(1) or orig(*a, **k))
  return calls

def test_a_reproducer_with_source_pasting_op_is_refused_before_anything_is_compiled(tmp_path, capsys, renders):
  """attack: an Ops.CUSTOM node whose text opens a file through a raw syscall (the kernel compiled and ran it before)"""
  marker = tmp_path / "pwned"
  repro = hostile.custom_op_reproducer(tmp_path / "evil.kernel.json", marker)
  renders.clear()
  assert main(["train", "--replay", str(repro)]) == 2
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and "CUSTOM" in err[0] and "evil.kernel.json" in err[0], err
  assert not marker.exists() and renders == []

def test_a_reproducer_naming_a_disk_device_touches_no_file(tmp_path, capsys):
  """attack: "device": "DISK:<victim>" with crafted bytes (the replay mapped the victim file and wrote them into it)"""
  victim = tmp_path / "victim.txt"
  victim.write_bytes(original := b"precious data!!!" * 4)
  repro = hostile.disk_device_reproducer(tmp_path / "disk.kernel.json", victim, b"OWNED BY ATTACKER")
  assert main(["train", "--replay", str(repro)]) == 2
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and "DISK:" in err[0] and "not one uopcheck runs on" in err[0], err
  assert victim.read_bytes() == original

@pytest.mark.parametrize("dev", ["DISK:/etc/passwd", "DISK:x", "REMOTE:10.0.0.1:6667", "/tmp/x", "CPU/../x", "PYTHON", "NULL", "CPU:1;x",
                                 "cpu", "", 3, None, "AMD:999"])
def test_only_devices_uopcheck_runs_on_are_admitted(dev):
  with pytest.raises(SpecError, match="is not one uopcheck runs on"): admission.check_device(dev)

@pytest.mark.parametrize("dev", ["CPU", "CPU:1", "AMD", "AMD:7", "MOCK+AMD", "MOCK+AMD::gfx950", "NV", "CUDA:0"])
def test_the_devices_uopcheck_runs_on_are_admitted(dev): assert admission.check_device(dev) == dev

def _real_ast() -> UOp:
  return uop_json.decode_one(uop_json.encode(hostile._int_kernel()))   # as a file delivers it

def test_no_op_outside_the_kernel_spec_reaches_tinygrad():
  """every op the kernel stage does not allow, planted in a real kernel AST in place of its ALU op, is refused"""
  ast = _real_ast()
  add = next(u for u in ast.toposort() if u.op is Ops.ADD)
  assert admission.check_kernel_ast(ast) is ast   # the real one is admitted
  outside = [op for op in Ops if op not in admission.KERNEL_OPS]
  assert {Ops.CUSTOM, Ops.CUSTOMI, Ops.INS, Ops.PROGRAM, Ops.SOURCE, Ops.BINARY, Ops.WMMA} <= set(outside)
  for op in outside:
    planted = ast.substitute({add: UOp(op, add.dtype, add.src, "x")})
    with pytest.raises(SpecError, match=f"{op}"): admission.check_kernel_ast(planted)

def test_strings_inside_args_are_identifiers_and_devices_inside_the_ast_are_checked():
  ast = _real_ast()
  param = next(u for u in ast.toposort() if u.op is Ops.PARAM)
  import dataclasses
  for arg, needle in ((dataclasses.replace(param.arg, name="x; system(\"id\")"), "not an identifier"),
                      (dataclasses.replace(param.arg, device="DISK:/etc/passwd"), "not one uopcheck runs on")):
    with pytest.raises(SpecError, match=needle): admission.check_kernel_ast(ast.substitute({param: param.replace(arg=arg)}))
  assert isinstance(param.arg, ParamArg)

def test_an_ast_that_breaks_a_typing_rule_or_tinygrads_kernel_spec_is_refused():
  from tinygrad.dtype import dtypes
  ast = _real_ast()
  add = next(u for u in ast.toposort() if u.op is Ops.ADD)
  for new, needle in ((add.replace(op=Ops.CMPLT), "typing rule"), (add.replace(dtype=dtypes.float32), "typing rule|kernel stage")):
    with pytest.raises(SpecError, match=needle): admission.check_kernel_ast(ast.substitute({add: new}))

def test_every_kernel_of_the_real_graphs_is_admitted():
  """no false refusal: each kernel AST rangeify makes for the catalog's real graphs, as a file delivers it, passes"""
  from uopcheck.check import catalog
  from uopcheck import fast
  n = 0
  for name, build in catalog.REAL_GRAPHS.items():
    for k in fast.run(build(), check_spec=False).kernels:
      admission.check_kernel_ast(uop_json.decode_one(uop_json.encode(k.ast)), f"{name}/{k.name}"); n += 1
  assert n >= len(catalog.REAL_GRAPHS)

def test_graph_findings_name_only_cpu_devices():
  """the other entry point that hands a file to tinygrad: a graph finding's program (findings, compare-schedulers --corpus)"""
  from uopcheck.fuzz.program import validate_program
  prog = {"inputs": [{"shape": [4], "dtype": "float32", "seed": 0, "kind": "normal", "device": "DISK:/etc/passwd"}],
          "steps": [["unary", "relu", 0]], "outputs": [1]}
  with pytest.raises(SpecError, match="device"): validate_program(prog)
  prog["inputs"][0]["device"] = "CPU"
  prog["steps"].append(["copy", 1, "DISK:/tmp/x"])
  with pytest.raises(SpecError, match="device"): validate_program(prog)
