"""The threat model (README "Threat model"), attack by attack: what a file or a peer sends never runs code, never writes
outside its folder, and never becomes a false verdict. Each test here is an attack that succeeded before its defence."""
from __future__ import annotations
from typing import Any
import pathlib
import pytest
from conformance.campaign_processes import running_case_pid
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
      admission.check_kernel_ast(uop_json.decode_one(uop_json.encode(k.ast)), f"{name}/{k.name}")
      n += 1
  assert n >= len(catalog.REAL_GRAPHS)

def test_graph_findings_name_only_cpu_devices():
  """the other entry point that hands a file to tinygrad: a graph finding's program (findings, compare-schedulers --corpus)"""
  from uopcheck.fuzz.program import validate_program
  prog: dict[str, Any] = {"inputs": [{"shape": [4], "dtype": "float32", "seed": 0, "kind": "normal", "device": "DISK:/etc/passwd"}],
          "steps": [["unary", "relu", 0]], "outputs": [1]}
  with pytest.raises(SpecError, match="device"): validate_program(prog)
  prog["inputs"][0]["device"] = "CPU"
  prog["steps"].append(["copy", 1, "DISK:/tmp/x"])
  with pytest.raises(SpecError, match="device"): validate_program(prog)

# ** peers and processes: a cluster message, a worker killed or stopped from outside, a supervisor killed **

def test_cluster_messages_are_data_with_integer_shards(tmp_path):
  """attack: a lost-case message whose shard is a path (it wrote <dir>/traversal.json), a message that is the number 5 or
  None (each stopped the campaign with a traceback), deep nesting, a pickled object: each is skipped and counted"""
  import json
  from uopcheck.fuzz.cluster import _Collector
  victim_dir = tmp_path / "victim"
  victim_dir.mkdir()
  col = _Collector(str(tmp_path / "f"), {}, None)
  (tmp_path / "f").mkdir()
  evil_shard = f"/../../../../../../../../{victim_dir}/traversal"
  bad = [json.dumps({"lost": {"pending": {"x": 1}, "case": {"program": {}}}, "why": "x", "shard": evil_shard}),
         json.dumps({"lost": {"pending": {"x": 1}}, "why": "x", "shard": -1}), 5, None, b"{}", "5", "[1, 2]", "{not json",
         "[" * 100_000 + "]" * 100_000, json.dumps({"cases": -3, "shard": 0}), json.dumps({"cases": 3, "shard": True}),
         json.dumps({"cases": 1, "shard": 0, "extra": 1}), json.dumps({"lost": {"case": {"program": {"steps": "rm -rf /"}}}, "why": "x", "shard": 0})]
  for raw in bad: col.message(raw)
  col.message(json.dumps({"cases": 7, "shard": 2}))
  assert col.cases == 7 and len(col.rejected) == len(bad) and not col.checks, col.rejected
  assert list(victim_dir.iterdir()) == [] and list((tmp_path / "f").iterdir()) == []

def test_a_local_cluster_accepts_only_holders_of_its_certificate(tmp_path):
  """attack: from another local process, Client(address).run_on_scheduler(f) ran code in the campaign (no auth, no TLS)"""
  import subprocess, sys
  pytest.importorskip("distributed")
  from uopcheck.fuzz.cluster import local_cluster
  cluster, client = local_cluster(1)
  try:
    addr = cluster.scheduler_address
    assert addr.startswith("tls://127.0.0.1:"), addr
    assert client.submit(sum, [1, 2]).result(timeout=60) == 3   # the campaign's own client works
    marker = tmp_path / "pwned"
    for a in (addr, addr.replace("tls://", "tcp://")):
      code = (f"from distributed import Client\ntry:\n  c = Client({a!r}, timeout=5)\n"
              f"  c.run_on_scheduler(lambda: open({str(marker)!r}, 'w').write('x'))\n"
              "  print('CONNECTED')\nexcept Exception as e: print('refused', type(e).__name__)\n")
      out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
      assert "refused" in out and "CONNECTED" not in out and not marker.exists(), (a, out)
  finally:
    client.close()
    cluster.close()

def test_a_remote_scheduler_is_joined_only_over_tls():
  from uopcheck.fuzz.cluster import remote_client
  pytest.importorskip("distributed")
  with pytest.raises(SpecError, match="only tls://"): remote_client("tcp://10.0.0.1:8786")
  with pytest.raises(SpecError, match="no TLS certificates configured"): remote_client("tls://127.0.0.1:1")

def _start_campaign(tmp_path, *extra:str):
  import subprocess, sys
  root = pathlib.Path(__file__).resolve().parent.parent
  cmd = [sys.executable, "-m", "uopcheck.cli", "fuzz", "graph", "--workers", "1", "--seed", "2", "--findings", str(tmp_path / "f"),
         "--db", str(tmp_path / "db"), "--report-dir", str(tmp_path / "r"),
         "--scheduler", f"{root / 'conformance' / 'fault_schedulers.py'}:slow_stock", *extra]
  return subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

@pytest.mark.slow
@pytest.mark.parametrize("sig,kind", [("SIGKILL", "crash"), ("SIGSTOP", "hang")])
def test_a_worker_killed_or_stopped_from_outside_is_no_finding(tmp_path, sig, kind):
  """attack (or accident): the OOM killer / kill -9 / kill -STOP on a campaign worker was filed as a new tinygrad crash or
  hang. Now the case is re-run in a fresh process first; it runs clean, so it is an external fault, never a finding."""
  import json, os, signal, time
  proc = _start_campaign(tmp_path, "--minutes", "0.5", "--case-timeout", "10")
  try:
    time.sleep(1.0)
    os.kill(running_case_pid(tmp_path / "f", proc), getattr(signal, sig))
    out, err = proc.communicate(timeout=300)
  finally:
    if proc.poll() is None: os.killpg(proc.pid, signal.SIGKILL)
  rep = json.loads((tmp_path / "r" / "graph_campaign.json").read_text())
  from uopcheck.fuzz.graph import load_graph_findings
  found, _ = load_graph_findings(tmp_path / "f")
  external, _ = load_graph_findings(tmp_path / "f", "external-*.json")
  assert not [d for _, d in found if d["failure"] in ("crash", "hang")], [d["summary"] for _, d in found]
  assert rep["external_faults"] and [d["failure"] for _, d in external] == [kind], (rep["lost_cases"], err[-2000:])
  assert "re-ran clean" in out and all(d["program"]["steps"] for _, d in external)   # kept, as a reproducer, for a person
  assert proc.returncode == (1 if rep["new"] else 0)

@pytest.mark.slow
def test_a_supervisor_killed_with_sigkill_leaves_no_worker_running(tmp_path):
  import os, signal, time
  psutil = pytest.importorskip("psutil")
  proc = _start_campaign(tmp_path, "--minutes", "1")
  try:
    worker = running_case_pid(tmp_path / "f", proc)
    family = psutil.Process(proc.pid).children(recursive=True)
    assert worker in {p.pid for p in family}
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    def alive(p) -> bool:
      try: return p.status() != psutil.STATUS_ZOMBIE
      except psutil.NoSuchProcess: return False
    end = time.time() + 20
    while time.time() < end and any(alive(p) for p in family): time.sleep(0.2)
    assert not [(p.pid, p.name()) for p in family if alive(p)]
  finally:
    try: os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError: pass

def test_a_shared_example_database_needs_its_password_and_never_prints_it(tmp_path):
  """the README's Redis set-up requires a password: without it the campaign refuses in one line, with it it works, and the
  password appears in no message"""
  import shutil, socket, subprocess, time
  if shutil.which("redis-server") is None: pytest.skip("redis-server is not installed (Debian package redis-server; `make redis`)")
  pytest.importorskip("redis")
  from uopcheck.fuzz.findings_io import open_example_db
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  secret = "s3cret-pw"
  proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--requirepass", secret, "--save", "",
                           "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  try:
    for _ in range(100):
      try:
        db = open_example_db(f"redis://:{secret}@127.0.0.1:{port}/0")
        break
      except SpecError: time.sleep(0.05)
    db.save(b"k", b"v")
    assert list(db.fetch(b"k")) == [b"v"]
    for url in (f"redis://127.0.0.1:{port}/0", f"redis://:wrong-{secret}@127.0.0.1:{port}/0"):
      with pytest.raises(SpecError, match="unreachable") as e: open_example_db(url)
      assert secret not in str(e.value)
  finally:
    proc.terminate()
    proc.wait(10)
