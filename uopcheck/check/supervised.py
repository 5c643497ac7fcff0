"""``uopcheck check``, supervised: every real graph gets a verdict row, whatever tinygrad does to the process.

The graphs run in a worker process (``python -m uopcheck.check.supervised worker SPEC``) that reports one JSON line per
graph. The supervisor reads them and, when the worker dies (a segfault in tinygrad's compiled code, an abort) or a graph
runs past its time limit, writes a ``CRASH``/``HANG`` row for that graph and starts a fresh worker for the rest, so the
table always completes. A tinygrad exception inside a graph is caught in the worker and is a ``CRASH`` row too.

A crash or hang is tinygrad's only when it is confirmed independently of uopcheck: the graph is built and realized by
plain tinygrad in a fresh process (``plain`` mode: no capture, no reference, outputs copied out as ``fast.run`` does).
Failing there too, it is tinygrad's finding; passing there, it is ``INTERNAL`` (it happened only under uopcheck's capture).
With a candidate scheduler there is no plain run to compare with (the scheduler enters through uopcheck's hook): the row
says the crash is the candidate's. A failure of uopcheck's own reference or graph builder is ``INTERNAL`` for that row
only; the other rows are still checked."""
from __future__ import annotations
import json, os, queue, signal, subprocess, sys, threading, time
from dataclasses import dataclass, field
from typing import Callable
from uopcheck.spec.errors import first_line

MARK = "UOPCHECK-ROW "     # the worker's report lines; anything else on its stdout (tinygrad's DEBUG prints) is passed through

@dataclass
class GraphRow:
  graph: str
  result: str                     # PASS | FAIL | CRASH | HANG | INTERNAL
  device: str
  kernels: int = 0
  ref_s: float = 0.0
  fast_s: float = 0.0
  max_abs_err: float = 0.0
  error: str = ""
  note: str = ""
  tensor_core_kernels: int = 0
  reproducer: str = ""
  confirmed: str = ""             # crash/hang rows: what the plain-tinygrad re-run said
  extra: dict = field(default_factory=dict)

  @property
  def ok(self) -> bool: return self.result == "PASS"
  @property
  def tinygrads(self) -> bool: return self.result in ("FAIL", "CRASH", "HANG")   # a finding about tinygrad (or the candidate)


def row_of(name:str, device:str, build:Callable, hcq2:bool, scheduler:str|None) -> GraphRow:
  """one graph, ref vs fast, in this process: a verdict row whatever the graph raises"""
  from uopcheck.check import harness
  try: r = harness.check(build, name, hcq2=hcq2, scheduler=scheduler, device=device)
  except Exception as e:   # tinygrad raised on a real graph (harness turns uopcheck's own refusals into SpecError rows)
    return GraphRow(name, "CRASH", device, error=f"crash: {first_line(e)}")
  err = max((c.max_abs_err for c in r.comparisons), default=0.0)
  note = "; ".join(x for x in (f"UB-on-CPU lanes={r.ub_lanes}" if r.ub_lanes else "",
                               f"tensor cores in {r.tensor_core_kernels}" if r.tensor_core_kernels else "") if x)
  result = "PASS" if r.ok else "INTERNAL" if r.failed_in in ("reference", "build") else "FAIL"
  return GraphRow(name, result, device, r.kernels, r.ref_s, r.fast_s, err, r.error, r.error or note, r.tensor_core_kernels, r.reproducer)

def _emit(obj:dict) -> None:
  sys.stdout.write(MARK + json.dumps(obj) + "\n")
  sys.stdout.flush()

def worker(spec:dict) -> int:
  """the worker: open the device, then one report line per graph"""
  from dataclasses import asdict
  from uopcheck.check import catalog
  from uopcheck.fast.devices import default_device
  from uopcheck.spec.errors import SpecError
  from uopcheck.fast.runner import open_cpu_queues
  try:
    with default_device(spec["device"], spec["hcq2"]) as device:
      if device.startswith("CPU"): open_cpu_queues()
      for n in spec["names"]:
        _emit({"start": n})
        _emit({"row": asdict(row_of(n, device, catalog.REAL_GRAPHS[n], spec["hcq2"], spec["scheduler"]))})
  except SpecError as e:
    _emit({"usage": str(e)})
    return 2
  return 0

def plain(spec:dict) -> int:
  """``plain`` mode: build one graph and realize it with plain tinygrad on the device (no capture, no reference); exit 0
  when it returns, 1 (with the exception on stdout) when tinygrad raises"""
  from tinygrad import Tensor
  from uopcheck.check import catalog
  from uopcheck.check.harness import _tensors
  from uopcheck.fast.devices import default_device
  from uopcheck.fast.runner import on_device
  with default_device(spec["device"], spec["hcq2"]) as device:
    try:
      outs = on_device(_tensors(catalog.REAL_GRAPHS[spec["names"][0]]()), device)
      Tensor.realize(*outs)
      for t in outs: t.numpy()
    except Exception as e:
      _emit({"raised": first_line(e)})
      return 1
  _emit({"returned": True})
  return 0

def _spawn(mode:str, spec:dict) -> tuple[subprocess.Popen, queue.Queue]:
  p = subprocess.Popen([sys.executable, "-m", "uopcheck.check.supervised", mode, json.dumps(spec)], stdout=subprocess.PIPE, text=True,
                       start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
  lines: queue.Queue = queue.Queue()
  def pump():
    assert p.stdout is not None
    for ln in p.stdout:
      if ln.startswith(MARK): lines.put(json.loads(ln[len(MARK):]))
      else: sys.stderr.write(ln)
    lines.put(None)   # end of output: the worker is gone
  threading.Thread(target=pump, daemon=True).start()
  return p, lines

def _kill(p:subprocess.Popen) -> None:
  try: os.killpg(p.pid, signal.SIGKILL)
  except ProcessLookupError: pass
  p.wait()

def _death(rc:int|None) -> str:
  if rc is not None and rc < 0:
    try: return f"killed by {signal.Signals(-rc).name}"
    except ValueError: return f"killed by signal {-rc}"
  return f"exited with {rc}"

def confirm_plain(name:str, device:str, hcq2:bool, timeout:float) -> str:
  """the graph on plain tinygrad in a fresh process: 'raises: ...' | 'killed by SIG...' | 'hangs' | 'returns'"""
  p, lines = _spawn("plain", {"names": [name], "device": device, "hcq2": hcq2, "scheduler": None})
  got: dict = {}
  deadline = time.monotonic() + timeout
  while True:
    try: msg = lines.get(timeout=max(0.1, deadline - time.monotonic()))
    except queue.Empty:
      _kill(p)
      return "hangs"
    if msg is None: break
    got.update(msg)
  rc = p.wait()
  if "raised" in got: return f"raises: {got['raised']}"
  if rc < 0 or rc not in (0, 1): return _death(rc)
  return "returns" if got.get("returned") else f"{_death(rc)} without a result"

def _settle(row:GraphRow, scheduler:str|None, hcq2:bool, timeout:float) -> GraphRow:
  """a CRASH/HANG row confirmed in plain tinygrad (stock scheduler), else INTERNAL"""
  if scheduler is not None:
    row.confirmed = "not re-run: the candidate scheduler runs only through uopcheck's hook"
    row.note = f"{row.error} (candidate scheduler {scheduler})"
    return row
  row.confirmed = confirm_plain(row.graph, row.device, hcq2, timeout)
  if row.confirmed == "returns":
    row.result, row.note = "INTERNAL", f"{row.error}; plain tinygrad realizes this graph: only under uopcheck's capture"
  else: row.note = f"{row.error}; plain tinygrad: {row.confirmed}"
  return row

class UsageError(Exception): pass

def check_graphs(names:list[str], device:str, hcq2:bool, scheduler:str|None, graph_timeout:float,
                 on_row:Callable[[GraphRow], None]=lambda r: None) -> list[GraphRow]:
  """every graph's row, in order; a worker that dies or overruns costs that one graph a CRASH/HANG row"""
  rows: list[GraphRow] = []
  todo = list(names)
  while todo:
    p, lines = _spawn("worker", {"names": todo, "device": device, "hcq2": hcq2, "scheduler": scheduler})
    current, deadline = None, time.monotonic() + graph_timeout
    while True:
      try: msg = lines.get(timeout=max(0.1, deadline - time.monotonic()))
      except queue.Empty:
        _kill(p)
        row = GraphRow(current or todo[0], "HANG", device, error=f"hang: no verdict within {graph_timeout:g} s")
        break
      if msg is None:
        rc = p.wait()
        if current is None: raise UsageError(f"the check worker {_death(rc)} before its first graph") if rc != 0 else UsageError("no graphs")
        row = GraphRow(current, "CRASH", device, error=f"crash: the process {_death(rc)}")
        break
      if "usage" in msg:
        p.wait()
        raise UsageError(msg["usage"])
      if "start" in msg: current, deadline = msg["start"], time.monotonic() + graph_timeout
      elif "row" in msg:
        d = msg["row"]
        r = GraphRow(**d)
        if r.result == "CRASH": r = _settle(r, scheduler, hcq2, graph_timeout)
        rows.append(r)
        on_row(r)
        todo.remove(r.graph)
        current = None
        if not todo:
          p.wait()
          return rows
    rows.append(r := _settle(row, scheduler, hcq2, graph_timeout))
    on_row(r)
    todo.remove(r.graph)
  return rows

if __name__ == "__main__":
  mode, spec = sys.argv[1], json.loads(sys.argv[2])
  sys.exit({"worker": worker, "plain": plain}[mode](spec))
