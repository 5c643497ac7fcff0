"""The graph-fuzz campaign: supervised worker processes, a per-case time limit, and every finding kept.

Each worker runs hypothesis over ``graph.programs()`` (``worker``). Before a case runs it writes the program to
``.current-<wid>.json`` (and, as they compile, the kernel sources), so whatever happens next is reproducible from a file:
- a case still running after ``case_timeout`` (a hang in Python or in a compiled kernel) is seen by the supervisor, which
  kills the worker and re-runs that case in a fresh process (``fuzz/lost_case.py``): a ``hang`` finding if it hangs again;
- a worker that dies (a segfault in a kernel, tinygrad's queue aborting) is re-checked the same way: a ``crash`` finding
  if the case kills the fresh process too. A lost case that re-runs clean was lost to something outside it (the OOM
  killer, a kill from outside): an ``external-*.json`` record, never a finding.
Workers die with the supervisor (a parent-death signal), so a supervisor killed with -9 leaves none running.
Either way the worker is restarted with the next seed and the campaign goes on. The time limit is enforced from outside on
purpose: with an in-worker timer (an armed ``ITIMER_REAL``, or a watchdog thread) tinygrad's CPU queue hung in the first
kernel after other Tensor work in the same process -- a false hang; see README.
``--minutes`` always holds: workers stop taking cases at the deadline, skip blame past it, and are killed a few seconds
later. Failures are shrunk by hypothesis (hangs and crashes are not: each try would cost a worker), then blamed and
signed on the shrunk case (``graph.finalize``); signatures already in the shipped corpus count as known."""
from __future__ import annotations
import argparse
from typing import Any, Callable, Iterator
import contextlib, json, os, pathlib, signal, sys, time
from dataclasses import dataclass, field
from tinygrad.uop import Ops
from tinygrad.uop.ops import PatternMatcher, UPat, graph_rewrite
from tinygrad.dtype import dtypes
from uopcheck.fuzz.graph import FailureKind, crash_verdict, check_program, finalize, load_graph_findings, programs, FILE_PREFIX, LAYOUT
from uopcheck.interrupts import sigint_ignored
from uopcheck.fuzz.program import validate_program
from uopcheck.fuzz.campaign import Campaign, Failure, UNSHRUNK
from uopcheck.spec.errors import SpecError
from uopcheck.fuzz.lost_case import LostCaseCheck, die_with_parent
from uopcheck.atomic import remove_orphans
from uopcheck.fuzz.findings_store import FindingsStore, DirectoryStore, known_signatures
from uopcheck.fuzz.findings_io import (write_or_stop, probe_writable, open_example_db, exit_code, FindingsUnwritable, EXIT_UNWRITABLE,
                                       EXIT_INTERNAL, DEFAULT_FINDINGS, SHIPPED_FINDINGS)
from uopcheck.results import Column, Table, Section, Result, Outcome

from uopcheck.settings import GRAPH_SHRINK_BUDGET as SHRINK_BUDGET, CASE_TIMEOUT_S, LARGE_CASE_TIMEOUT_S, KILL_GRACE_S

@dataclass
class GraphStats:
  cases: int = 0
  failures: int = 0
  new: list = field(default_factory=list)        # signatures of new tinygrad findings
  known: list = field(default_factory=list)      # files of the shipped corpus matched
  internal: list = field(default_factory=list)   # signatures of uopcheck-internal failures
  flaky: list = field(default_factory=list)      # signatures of failures that did not reproduce (not findings)
  external: list = field(default_factory=list)   # lost cases that re-ran clean (fuzz/lost_case.py; not findings)
  emulated: list = field(default_factory=list)   # on the mock GPU: the emulator's own, or the AMD path's alone (not findings yet)
  seconds: float = 0.0

_self_test_bug = PatternMatcher([(UPat(Ops.MAX, name="m"), lambda m: m.replace(op=Ops.ADD) if dtypes.is_float(m.dtype) else None)])

def _broken_scheduler(function):
  """--self-test-bug: rangeify, then every float MAX inside a kernel becomes ADD (for testing the campaign itself)."""
  from tinygrad.schedule.rangeify import get_kernel_graph
  return graph_rewrite(get_kernel_graph(function), _self_test_bug, name="self-test bug", enter_calls=True)

def current_file(findings_dir:str|os.PathLike, wid:int) -> pathlib.Path: return pathlib.Path(findings_dir) / f".current-{wid}.json"
def pending_file(findings_dir:str|os.PathLike, pid:int) -> pathlib.Path: return pathlib.Path(findings_dir) / f".pending-graph-{pid}.json"

def buckets() -> dict[str, set]:
  """what a campaign saw, by ``classify``'s kinds: each a set of keys (both supervisors count the same way)"""
  return {k: set() for k in ("new", "known", "internal", "flaky", "external", "emulated", "resumed")}

def classify(d:dict, known:dict) -> tuple[str, str]:
  """(new / known / internal / flaky / external / emulated, its key: the signature, or the shipped file it matches) of a
  finalized finding"""
  if d["kind"] == "uopcheck-internal": return "internal", d["signature"]
  if d["kind"] == "flaky": return "flaky", d["signature"]
  if d["kind"] == "external-fault": return "external", d["signature"]
  if d["kind"] in ("emulator", "amd-unattributed"): return "emulated", f"{FILE_PREFIX[d['kind']]}-{d['signature']}"
  if d["signature"] in known: return "known", known[d["signature"]]
  return "new", d["signature"]

def _record(stats:GraphStats, d:dict, known:dict, store:FindingsStore, events) -> None:
  """Sort a finalized finding into new / known / uopcheck-internal, save it in the store (a cluster worker's store sends
  it to the client, which saves it), and tell the supervisor."""
  stats.failures += 1
  name, key = classify(d, known)
  if name != "known": store.save(d)
  if key not in (bucket := getattr(stats, name)):
    bucket.append(key)
    if events is not None: events.put((name, key))

def worker(wid:int, minutes:float, seed:int|None, findings_dir:str, db_dir:str|None, counters:Any=None, scheduler:Callable|None=None,
           max_examples:int|None=None, known_dir:str|os.PathLike|None=SHIPPED_FINDINGS, candidate:Callable|None=None,
           case_timeout:float=CASE_TIMEOUT_S, events:Any=None, round_offset:int=0, profile:str="small",
           store:FindingsStore|None=None, publish:Callable[..., Any]|None=None, specs:tuple=(None, None)) -> GraphStats:
  """One campaign process: hypothesis over ``programs()`` until the time budget. A failure is written at once to a pending
  file; hypothesis shrinks it (smaller failures of the same kind replace it); when the round ends the minimal case is blamed,
  signed and saved in ``store`` (default: the findings directory) -- or counted as known when the shipped corpus has its
  signature. On a cluster (fuzz.cluster) ``store`` sends each finding to the client, and ``publish`` is told the running case
  and the pending failure.
  ``specs`` (the scheduler and candidate as given) go into the pending record, so the next run resumes it only under the
  same schedulers: worker 0 first re-checks and files every pending failure an earlier, stopped campaign left."""
  from uopcheck.fast.runner import on_compiled, open_cpu_queues
  from uopcheck.rulecov.collect import FiredRules, tracking
  open_cpu_queues()   # before any case frees a buffer (see its docstring)
  db = open_example_db(db_dir)
  fired = FiredRules() if events is not None and tracking() else None   # under `uopcheck coverage`: the live status's new rules
  known = known_signatures(LAYOUT, known_dir)
  store = store or DirectoryStore(findings_dir, LAYOUT)
  stats = GraphStats()
  start = time.perf_counter()
  deadline = start + minutes * 60
  pending = pending_file(findings_dir, os.getpid())
  current = current_file(findings_dir, wid)
  case: dict = {}
  def compiled(srcs):  # kernel sources of the running case, on disk before they run
    case["kernels"] = case.get("kernels", []) + [list(s) for s in srcs]
    write_or_stop(current, case)
    if publish is not None: publish({"case": case})
  def check(desc) -> Failure|None:
    case.clear()
    case.update({"program": desc, "started": time.time(), "timeout": case_timeout, "kernels": [], "pid": os.getpid()})
    write_or_stop(current, case)
    if publish is not None: publish({"case": case})
    try:
      with on_compiled(compiled): v = check_program(desc, scheduler=scheduler, candidate=candidate)
    except Exception as e:  # tinygrad crashing on a valid program is a finding too
      v = crash_verdict(e)
    stats.cases += 1
    if fired is not None:
      for r in fired.new(): events.put(("rule", r))
    if counters is not None:
      with counters.get_lock(): counters[0] += 1
    if v.ok: return None
    return Failure(len(desc["steps"]), {"kind": "pending", "failure": v.kind, "summary": v.summary, "seed": seed, "program": desc,
                                        "schedulers": list(specs)}, v.kind, (desc, v))
  def finish(f:Failure) -> None:
    desc, v = f.case
    late = time.perf_counter() > deadline
    # past the budget: save without the per-kernel blame (a crash's blame costs nothing: it is the crash)
    d = finalize(desc, v, scheduler, seed, candidate, blame="not computed (time budget)" if late and v.kind is not FailureKind.CRASH else None)
    if f.cut_short: d["shrink"] = UNSHRUNK
    _record(stats, d, known, store, events)
    if publish is not None: publish({"pending": None})
  seed_of = None if seed is None else (lambda r: seed * 1000 + wid * 100 + r + round_offset)
  campaign = Campaign(programs(profile=profile), check, finish, deadline, pending, db, max_examples, seed_of, SHRINK_BUDGET,
                      on_pending=None if publish is None else lambda rec: publish({"pending": rec}))
  try:
    if wid == 0 and not store.remote:   # an earlier run's failure left unfinished (killed mid-shrink): checked and filed first
      for path, rec in orphan_pendings(findings_dir, specs):
        if (f := check(rec["program"])) is not None:
          f.cut_short = True
          finish(f)
        outcome = "still fails: signed and recorded" if f is not None else "passes now: not filed"
        if events is not None: events.put(("resumed", f"{path.name}: {outcome}"))
        path.unlink(missing_ok=True)
    campaign.run()
  finally:
    current.unlink(missing_ok=True)
  stats.seconds = time.perf_counter() - start
  return stats

def orphan_pendings(findings_dir:str|os.PathLike, specs:tuple) -> list[tuple[pathlib.Path, dict]]:
  """pending failures of campaigns that are gone (their process no longer runs) and ran the same schedulers: each a
  confirmed failure that was still being shrunk when its campaign stopped; a corrupt one is left where it is"""
  out = []
  for p in sorted(pathlib.Path(findings_dir).glob(".pending-graph-*.json")):
    try:
      pid = int(p.stem.rsplit("-", 1)[1])
      if _alive(pid): continue
      rec = json.loads(p.read_text())
      if not isinstance(rec, dict) or list(rec.get("schedulers", [None, None])) != list(specs): continue
      validate_program(rec["program"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, SpecError): continue
    out.append((p, rec))
  return out

def _alive(pid:int) -> bool:
  try: os.kill(pid, 0)
  except ProcessLookupError: return False
  except PermissionError: return True
  return True

# ** the supervisor **

def load_schedulers(scheduler:str|None, candidate:str|None) -> tuple:
  """(the scheduler under test, the candidate) from their specs, in the process that runs the cases"""
  from uopcheck.fast.runner import load_scheduler
  sched = _broken_scheduler if scheduler == "self-test-bug" else load_scheduler(scheduler) if scheduler else None
  return sched, load_scheduler(candidate) if candidate else None

def unwind_on_sigterm() -> None:
  """the supervisor's stop (budget over, Ctrl-C) is SIGTERM: unwind, so a file being written is finished or removed"""
  signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

def _worker_main(wid, minutes, seed, findings_dir, db_dir, scheduler, candidate, case_timeout, round_offset, counters, events, profile,
                 supervisor:int|None=None, device:str="CPU"):
  die_with_parent()   # a supervisor killed with -9 leaves no worker fuzzing unsupervised
  if supervisor is not None and os.getppid() != supervisor: return   # it died before the line above took effect
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when to stop; written findings stay written
  unwind_on_sigterm()
  sched, cand = load_schedulers(scheduler, candidate)
  try:
    with on_device(device):
      worker(wid, minutes, seed, findings_dir, db_dir, counters, sched, known_dir=SHIPPED_FINDINGS, candidate=cand, case_timeout=case_timeout,
             events=events, round_offset=round_offset, profile=profile, specs=(scheduler, candidate))
  except FindingsUnwritable as e:   # not a crash to restart from: the supervisor stops the campaign (exit 3)
    print(f"uopcheck: worker {wid}: {e}", file=sys.stderr, flush=True)
    sys.exit(EXIT_UNWRITABLE)
  if os.environ.get("UOPCHECK_RULECOV_DIR"):  # under `uopcheck coverage`: leave this worker's rule hits for the combine
    from uopcheck import rulecov
    rulecov.write_data(os.environ["UOPCHECK_RULECOV_DIR"])

@contextlib.contextmanager
def on_device(device:str) -> Iterator[None]:
  """a campaign process's cases on ``device`` (fuzz graph --device): tinygrad's default device, and the programs' CPU values
  built there (fuzz.program.targeting); CPU changes nothing"""
  if device == "CPU":
    yield
    return
  from uopcheck.fast.devices import default_device
  from uopcheck.fuzz.program import targeting
  with default_device(device) as dev, targeting(dev): yield

def stop_worker(p:Any, findings_dir:str, wid:int, grace:float=3.0) -> None:
  """stop a worker the campaign no longer needs: SIGTERM first (it unwinds, so the file it was writing is finished or
  removed), SIGKILL after ``grace`` seconds; then the temporary files a kill mid-write leaves are removed"""
  if p.is_alive():
    p.terminate()
    p.join(grace)
    if p.is_alive():
      p.kill()
      p.join(5)
  remove_orphans(current_file(findings_dir, wid))
  if p.pid is not None: remove_orphans(pending_file(findings_dir, p.pid))

def _lost_case(findings_dir:str, wid:int) -> dict|None:
  """A worker died or hung mid-case: its last case, from its .current file (None: it was between cases)."""
  cur = current_file(findings_dir, wid)
  try: case = json.loads(cur.read_text())
  except (OSError, ValueError): return None
  cur.unlink(missing_ok=True)
  return case if isinstance(case, dict) and isinstance(case.get("program"), dict) else None

def file_lost_case(check:LostCaseCheck, seed:int|None, known:dict, write:Callable[[dict], Any]) -> tuple[str, str]:
  """A finished re-check (fuzz/lost_case.py) as (new / known / external, key): a finding when the case reproduced its
  crash or hang in a fresh process, an external-fault record when it did not; ``write`` writes what is not known."""
  d = check.record(seed)
  kind, key = classify(d, known)
  if kind != "known": write(d)
  return kind, key

def run_campaign(minutes:float, workers:int=1, seed:int|None=None, findings_dir:str=DEFAULT_FINDINGS, db_dir:str=".hypothesis/uopcheck-graph",
                 self_test_bug:bool=False, scheduler:str|None=None, candidate:str|None=None,
                 case_timeout:float=CASE_TIMEOUT_S, profile:str="small", device:str="CPU", live:Any=None) -> dict:
  import multiprocessing as mp
  if device != "CPU":   # a device that cannot run here is one line before any worker starts
    from uopcheck.fast.devices import open_device
    open_device(device)
  open_example_db(db_dir)  # an unusable database path is a one-line error before any worker starts
  from uopcheck.fast.runner import load_scheduler
  for s in (scheduler, candidate):
    if s: load_scheduler(s)  # a bad scheduler spec is a one-line error here, not in every worker
  probe_writable(findings_dir)   # a full disk or read-only directory: one line and exit 3 before any worker starts
  known, store = known_signatures(LAYOUT), DirectoryStore(findings_dir, LAYOUT)
  ctx = mp.get_context("spawn")
  counters, events = ctx.Array("l", 1), ctx.Queue()
  start, started_wall = time.perf_counter(), time.time()
  deadline = start + minutes * 60
  got = buckets()
  # workers inherit the environment, so they count rule matches exactly when this process does (`uopcheck coverage`)
  from uopcheck.rulecov.collect import tracking
  rules = live.watch_rules(tracking()) if live is not None else None
  lost: list[str] = []
  rechecks: list[LostCaseCheck] = []   # lost cases being re-run in a fresh process before they are filed
  restarts = 0
  sched = "self-test-bug" if self_test_bug else scheduler
  def launch(wid:int, offset:int):
    left = max(0.0, (deadline - time.perf_counter()) / 60)
    p = ctx.Process(target=_worker_main, args=(wid, left, seed, findings_dir, db_dir, sched, candidate, case_timeout, offset, counters, events,
                                               profile, os.getpid(), device),
                    daemon=True)
    with sigint_ignored(): p.start()   # ignoring Ctrl-C from its first instruction (it also sets SIG_IGN itself, once imported)
    return p
  procs = {w: launch(w, 0) for w in range(workers)}
  offsets = {w: 0 for w in range(workers)}
  interrupted, unwritable = False, ""   # how the loop stopped early: Ctrl-C, or the findings directory could not be written
  tty, last_line = sys.stdout.isatty(), [0.0]
  def drain():
    while not events.empty():
      try: kind, key = events.get_nowait()
      except Exception: break
      if kind != "rule": got[kind].add(key)
      elif rules is not None: rules.add([key])
  def settle(check:LostCaseCheck) -> bool:
    if check.poll() is None: return False
    kind, key = file_lost_case(check, seed, known, store.save)
    got[kind].add(key)
    lost.append(f"{check.why}; {check.outcome['detail'] if check.outcome else ''}"[:300])
    return True
  try:
    while procs or rechecks:
      time.sleep(1.0)
      drain()
      rechecks[:] = [c for c in rechecks if not settle(c)]
      now = time.perf_counter()
      for w, p in list(procs.items()):
        cur = current_file(findings_dir, w)
        stuck = False
        if p.is_alive():
          try: stuck = time.time() - json.loads(cur.read_text())["started"] > case_timeout
          except (OSError, ValueError, KeyError): stuck = False
          if not stuck and now < deadline + KILL_GRACE_S: continue
          if not stuck:   # the budget is over: a case cut short is no finding
            stop_worker(p, findings_dir, w)
            cur.unlink(missing_ok=True)
            del procs[w]
            continue
          p.kill()
          p.join(5)   # hung: killed as it is, its .current file is the lost case
          why = ("hang", f"hang: the case ran past {case_timeout:g} s; the worker was killed")
        elif p.exitcode == 0:
          del procs[w]
          continue
        elif p.exitcode == EXIT_UNWRITABLE:   # the findings cannot be written: nothing more can be kept, so stop now
          probe_writable(findings_dir)          # raises, naming the cause (ENOSPC, EROFS...)
          raise FindingsUnwritable(f"cannot write findings in {findings_dir}: worker {w} could not write its files there")
        else: why = ("crash", f"crash: the worker process died ({'signal ' + str(-p.exitcode) if p.exitcode < 0 else 'exit ' + str(p.exitcode)})")
        remove_orphans(cur)   # a process dead mid-write leaves the temporary file; its last complete .current is the case
        if (case := _lost_case(findings_dir, w)) is not None:
          rechecks.append(LostCaseCheck(case, why[0], f"worker {w}: {why[1]}", sched, candidate, case_timeout, device=device).start())
        del procs[w]
        if time.perf_counter() < deadline - 1:
          offsets[w] += 1000
          restarts += 1
          procs[w] = launch(w, offsets[w])
      el = time.perf_counter() - start
      line = f"[{el:6.0f}s] cases {counters[0]}  {counters[0] / max(el, 1e-9):5.2f}/s  new findings {len(got['new'])}  restarts {restarts}"
      if live is not None:
        live.update(phase="fuzzing", budget_s=round(minutes * 60), cases=counters[0], cases_per_s=round(counters[0] / max(el, 1e-9), 2),
                    new_findings=len(got["new"]), known_findings=len(got["known"]), workers=len(procs), worker_restarts=restarts,
                    rechecking_lost_cases=len(rechecks), findings_dir=str(findings_dir))
      if tty: print("\r" + line, end="", flush=True)
      elif el - last_line[0] >= 15:
        print(line, flush=True)
        last_line[0] = el  # a log gets a line every 15 s, not one endless line
  except FindingsUnwritable as e: unwritable = str(e)   # from a worker, or a lost case's finding written here
  except KeyboardInterrupt: interrupted = True
  if interrupted or unwritable:
    for w, p in procs.items(): stop_worker(p, findings_dir, w)
    for c in rechecks: c.kill()   # not re-checked: not filed (its program stays in the report's lost cases)
    lost += [f"{c.why}; not re-checked (interrupted)" for c in rechecks]
  # after an interrupt the event queue may hold half a message (the signal landed mid-read, or a worker was killed
  # mid-put) and reading it can block forever: the findings are on disk, so read them from there instead
  if not (interrupted or unwritable): drain()
  if live is not None: live.update(force=True)   # the last rules the workers sent
  summary = summarize(findings_dir, got, started_wall, interrupted or bool(unwritable), known, minutes=minutes, workers=workers, seed=seed,
                      seconds=round(time.perf_counter() - start, 1), cases=counters[0], scheduler=scheduler, candidate=candidate,
                      case_timeout=case_timeout, profile=profile, restarts=restarts, lost=lost)
  summary["interrupted"], summary["unwritable"] = interrupted, unwritable
  print()
  return summary

def summarize(findings_dir:str, got:dict[str, set], started_wall:float, interrupted:bool, known:dict, *, minutes:float, workers:int,
              seed:int|None, seconds:float, cases:int, scheduler:str|None, candidate:str|None, case_timeout:float, profile:str,
              restarts:int, lost:list[str]) -> dict:
  """the campaign's summary (the JSON and Markdown reports), from what it saw and the findings directory: after an
  interrupt, every finding file written since the start that is not in the shipped corpus counts as new"""
  found, problems = load_graph_findings(findings_dir)
  if interrupted:
    for f, d in found:
      if f.stat().st_mtime >= started_wall and d["signature"] not in known: got["new"].add(d["signature"])
  internal, _ = load_graph_findings(findings_dir, "internal-*.json")
  from uopcheck.settings import selected_profile
  return {"minutes": minutes, "workers": workers, "seed": seed, "findings_dir": str(findings_dir), "seconds": seconds, "cases": cases,
          "hypothesis_profile": selected_profile(),
          "cases_per_min": round(cases / max(seconds, 1e-9) * 60, 1), "interrupted": interrupted, "scheduler": scheduler or "tinygrad rangeify",
          "candidate": candidate, "case_timeout_s": case_timeout, "profile": profile, "worker_restarts": restarts, "lost_cases": lost,
          "new": sorted(got["new"]), "known": sorted(got["known"]),
          "uopcheck_internal": [{"file": p.name, "summary": d.get("summary", "")[:200]} for p, d in internal if d["signature"] in got["internal"]],
          "flaky": sorted(got["flaky"]), "external_faults": sorted(got.get("external", ())), "emulated": sorted(got.get("emulated", ())),
          "skipped_files": problems,
          # a failure a worker was still shrinking when the campaign stopped: confirmed failing, not shrunk nor signed -- kept, named
          "unfinished": sorted(str(p) for p in pathlib.Path(findings_dir).glob(".pending-graph-*.json")),
          "resumed": sorted(got.get("resumed", ())),
          "unshrunk": sorted(d["signature"] for _, d in found if d["signature"] in got["new"] and d.get("shrink") == UNSHRUNK),
          "findings": [{"file": p.name, "signature": d["signature"], "blame": d.get("blame"), "new": d["signature"] in got["new"],
                        "unshrunk": d.get("shrink") == UNSHRUNK,
                        "wrong_scheduler": d.get("wrong_scheduler", ""), "summary": d.get("summary", "")[:200]} for p, d in found]}

FINDING_COLUMNS = [Column("file", width=40), Column("new", width=11), Column("wrong scheduler", width=16), Column("blame", width=10),
                   Column("summary")]

def result(summary:dict) -> Result:
  """the campaign's report: what ran, how much, and one row per finding in the findings directory"""
  where = f"Dask cluster {summary['cluster']}, {summary['shards']} shards" if summary.get("cluster") else "one machine"
  pre = [f"STOPPED EARLY: {summary['unwritable']}"] if summary.get("unwritable") else []
  pre += [f"time: {summary['seconds']} s on {summary['workers']} worker(s) ({where}), seed {summary['seed']}, device {summary.get('device', 'CPU')}",
         f"scheduler: {summary['scheduler']}" + (f"; candidate: {summary['candidate']}" if summary["candidate"] else ""),
         f"cases: {summary['cases']} ({summary['cases_per_min']}/min, profile {summary.get('profile', 'small')}, "
         f"hypothesis profile {summary.get('hypothesis_profile', 'ci')})" + (" (interrupted)" if summary["interrupted"] else ""),
         f"new findings: {len(summary['new'])}" + (f" ({len(summary['unshrunk'])} UNSHRUNK: the budget ended their shrink, not minimal)"
                                                   if summary.get("unshrunk") else "") +
         f", known (in the shipped corpus): {len(summary['known'])} {summary['known'] or ''}",
         f"hangs/crashes that took a worker down: {len(summary['lost_cases'])} (worker restarts: {summary['worker_restarts']})",
         f"uopcheck-internal failures (uopcheck's own, not tinygrad's): {len(summary['uopcheck_internal'])}",
         *([f"unfinished (a failure still being shrunk when the campaign stopped; not signed, not filed; the next campaign on this "
            f"directory with the same schedulers files it first): {', '.join(summary['unfinished'])}"] if summary.get("unfinished") else []),
         *([f"resumed from an earlier campaign's unfinished failures: {'; '.join(summary['resumed'])}"] if summary.get("resumed") else []),
         f"flaky (failed once, passed the re-checks: not findings, kept as flaky-*.json): {len(summary.get('flaky', []))}",
         f"external faults (a worker lost to something outside its case, which re-ran clean in a fresh process: not findings, kept "
         f"as external-*.json): {len(summary.get('external_faults', []))}"]
  if summary.get("device", "CPU").startswith("MOCK+"):
    pre.append(f"emulated-path failures, not tinygrad findings until attributed (emulator-*.json: the mock GPU's own; amd-*.json: the AMD "
               f"path only, the CPU path agrees -- the emulator or tinygrad's AMD backend, hardware decides): {summary.get('emulated', [])}")
  rows = [{"file": f["file"], "new": ("UNSHRUNK" if f.get("unshrunk") else "NEW") if f["new"] else "seen before",
           "wrong scheduler": f["wrong_scheduler"] or "-", "blame": f["blame"] or "-", "summary": f["summary"][:120]} for f in summary["findings"]]
  internal = [f"{f['file']}: {f['summary'][:160]}" for f in summary["uopcheck_internal"]]
  sections = [Section(t, x) for t, x in (("uopcheck-internal", internal), ("skipped (corrupt) files", summary["skipped_files"])) if x]
  fdir = pathlib.Path(summary.get("findings_dir", "."))
  outcomes = [Outcome(f["file"], "fail" if f["new"] else "skip", f["summary"] if f["new"] else "seen before", str(fdir / f["file"]),
                      group="fuzz graph") for f in summary["findings"]]
  outcomes += [Outcome(f["file"], "error", f["summary"], str(fdir / f["file"]), group="fuzz graph") for f in summary["uopcheck_internal"]]
  return Result("graph_campaign", "uopcheck graph campaign", summary, tables=[Table(FINDING_COLUMNS, rows)] if rows else [],
                preamble=pre, sections=sections, outcomes=outcomes)

def main(args:argparse.Namespace) -> int:
  from uopcheck.runs import report
  profile = getattr(args, "profile", "small")
  timeout = args.case_timeout or (LARGE_CASE_TIMEOUT_S if profile == "large" else CASE_TIMEOUT_S)
  if getattr(args, "cluster", None):
    if getattr(args, "device", "CPU") != "CPU": raise SpecError("--device with --cluster: a cluster campaign runs on the workers' CPU only (for now)")
    from uopcheck.fuzz.cluster import run_cluster_campaign
    s = run_cluster_campaign(args.minutes, args.cluster, args.workers, args.seed, args.findings, args.db, candidate=args.scheduler,
                             scheduler="self-test-bug" if getattr(args, "self_test_bug", False) else None,
                             case_timeout=timeout, profile=profile,
                             **({"shard_minutes": args.shard_minutes} if getattr(args, "shard_minutes", None) else {}))
  else:
    from uopcheck.runs import live_status
    open_example_db(args.db)   # refused input is one line, before the run directory (and its live status) exists
    live = live_status(args, "fuzz-graph")
    s = run_campaign(args.minutes, args.workers, args.seed, args.findings, args.db, getattr(args, "self_test_bug", False),
                     candidate=args.scheduler, profile=profile, case_timeout=timeout, device=getattr(args, "device", "CPU"), live=live)
    s["device"] = getattr(args, "device", "CPU")
    if live is not None: live.close("stopped" if s.get("unwritable") else "interrupted" if s["interrupted"] else "finished", phase="done",
                                    new_findings=len(s["new"]), known_findings=len(s["known"]), new=s["new"], lost_cases=len(s["lost_cases"]))
  report(args, result(s), "fuzz-graph")
  for x in s["skipped_files"]: print(f"uopcheck: skipped {x}", file=sys.stderr)
  if s.get("unwritable"):   # what was found before it stopped is reported above; the run itself failed
    print(f"uopcheck: fuzz graph stopped: {s['unwritable']}", file=sys.stderr)
    return EXIT_INTERNAL
  if s["interrupted"]: return 130
  return exit_code(new=len(s["new"]), internal=len(s["uopcheck_internal"]))
