"""A case that took its worker down is a finding only when it does so again in a fresh process.

A campaign worker that dies mid-case (a segfault in a kernel, tinygrad's queue aborting) or stalls past the case's time
limit leaves the case it was running (graph: a program; symbolic: an expression). Something outside the case can do
that too: the OOM killer, a ``kill -9``, a ``kill -STOP``, a machine going away. So before such a case is filed as a
``crash``/``hang``, ``LostCaseCheck`` re-runs it in a fresh interpreter (``python -m uopcheck.fuzz.lost_case --fuzzer
NAME CASE.json``: the registered fuzzer's ``rerun``, after its ``validate_case``; its own process group, killed with its
supervisor) under the same limit -- the case timeout, plus ``RECHECK_STARTUP_S`` for the interpreter to start:

- the re-run dies (a signal, or an exit code other than 0) or runs past the limit: the case reproduces -> a finding of
  that kind (``crash`` / ``hang``), in the fuzzer's record format (``lost_record``);
  (on tinygrad's mock GPU an ``amd-unattributed`` record instead: the emulator's slowness or crash, or the AMD backend --
  hardware decides);
- the re-run finishes: the worker was lost to something outside the case -> an ``external-fault`` record
  (``external-*.json``, never a finding, never exit 1), kept so a person can look.

The check runs beside the campaign (``poll`` each supervisor tick), never blocking it. A case whose fault needs state an
earlier case left in the same process does not reproduce this way and is recorded as external: a missed finding, never a
false one."""
from __future__ import annotations
import json, os, pathlib, signal, subprocess, sys, tempfile, time
from dataclasses import dataclass, field
from uopcheck.settings import RECHECK_STARTUP_S

def die_with_parent() -> None:
  """Linux: this process gets SIGKILL when the process that started it dies (a supervisor killed with -9 leaves no
  worker behind); elsewhere nothing. Called first thing in every campaign worker and re-check."""
  if not sys.platform.startswith("linux"): return
  import ctypes
  try: ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG
  except (OSError, AttributeError): return

@dataclass
class LostCaseCheck:
  """One lost case being re-run in a fresh process; ``poll()`` is None while it runs, then the outcome."""
  case: dict         # the running case, as the worker wrote it (its fuzzer's ``validate_case`` checks it)
  kind: str          # how the worker was lost: crash | hang
  why: str
  timeout: float = 60.0
  fuzzer: str = "graph"                          # the registered fuzzer (fuzz/fuzzers.py) whose case it is
  options: dict = field(default_factory=dict)    # the campaign's options for it (graph: schedulers, device)
  proc: subprocess.Popen|None = None
  started: float = 0.0
  outcome: dict|None = field(default=None)

  def start(self) -> "LostCaseCheck":
    fd, path = tempfile.mkstemp(prefix="uopcheck-lost-case-", suffix=".json")
    with os.fdopen(fd, "w") as f: json.dump({"case": self.case, "options": self.options}, f)
    self._path, self._err = path, tempfile.TemporaryFile()   # a file, not a pipe: a full pipe would stall the re-run (a false hang)
    cmd = [sys.executable, "-m", "uopcheck.fuzz.lost_case", "--fuzzer", self.fuzzer, path]
    # no preexec_fn (unsafe in a process with threads, as both supervisors are): the re-run sets its parent-death signal
    # itself, first thing, and leaves if its supervisor is already gone
    self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._err, start_new_session=True,
                                 env={**os.environ, "UOPCHECK_SUPERVISOR": str(os.getpid())})
    self.started = time.perf_counter()
    return self

  def _done(self, reproduced:str|None, detail:str) -> dict:
    pathlib.Path(self._path).unlink(missing_ok=True)
    self._err.close()
    self.outcome = {"reproduced": reproduced, "detail": detail[:300], "seconds": round(time.perf_counter() - self.started, 1)}
    return self.outcome

  def poll(self) -> dict|None:
    """None while the re-run runs; then {"reproduced": crash | hang | None, "detail", "seconds"}"""
    if self.outcome is not None: return self.outcome
    assert self.proc is not None, "LostCaseCheck.poll before start"
    rc = self.proc.poll()
    if rc is None:
      if time.perf_counter() - self.started <= self.timeout + RECHECK_STARTUP_S: return None
      self.kill()
      return self._done("hang", f"the re-run in a fresh process also ran past {self.timeout:g} s")
    self._err.seek(0)
    err = (self._err.read()[-4000:].decode(errors="replace").strip().splitlines() or [""])[-1]
    if rc == 0: return self._done(None, "the re-run in a fresh process finished: the worker was lost to something outside the case")
    how = f"signal {-rc}" if rc < 0 else f"exit {rc}"
    return self._done("crash", f"the re-run in a fresh process died too ({how}{': ' + err if err else ''})")

  def kill(self) -> None:
    if self.proc is not None and self.proc.poll() is None:
      try: os.killpg(self.proc.pid, signal.SIGKILL)
      except ProcessLookupError: pass
      self.proc.wait()
    if self.proc is not None: pathlib.Path(self._path).unlink(missing_ok=True)   # the re-run's copy of the case, in /tmp

  def record(self, seed:int|None) -> dict:
    """the finished check as a finding (reproduced) or an external-fault record (not), both reproducers of the case --
    in its fuzzer's own record format"""
    from uopcheck.fuzz.fuzzers import fuzzer
    return fuzzer(self.fuzzer).lost_record(self, seed)

def main(argv:list[str]|None=None) -> int:
  """the re-run: one case of a registered fuzzer (a JSON file, checked as data by the fuzzer's ``validate_case``), with
  the campaign's options; exit 0 when it finishes, whatever its verdict -- only dying or hanging is what the supervisor
  asks about"""
  import argparse
  die_with_parent()
  if os.environ.get("UOPCHECK_SUPERVISOR", str(os.getppid())) != str(os.getppid()): return 0   # the supervisor died before that
  p = argparse.ArgumentParser(prog="python -m uopcheck.fuzz.lost_case")
  p.add_argument("--fuzzer", default="graph")
  p.add_argument("case")
  a = p.parse_args(argv)
  from uopcheck.settings import apply_environment
  apply_environment()
  from uopcheck.fuzz.fuzzers import fuzzer
  fz = fuzzer(a.fuzzer)
  rec = json.loads(pathlib.Path(a.case).read_text())
  if not isinstance(rec, dict) or not isinstance(rec.get("case"), dict) or not isinstance(rec.get("options"), dict):
    raise ValueError(f"{a.case}: not a lost case record")
  fz.validate_case(rec["case"])
  fz.rerun(rec["case"], rec["options"])
  return 0

if __name__ == "__main__": sys.exit(main())
