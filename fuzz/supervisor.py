"""The one campaign supervisor on one machine: ``--workers`` processes of any registered fuzzer (``fuzz/fuzzers.py``), a
per-case time limit, and every finding kept. Its Dask backend is ``fuzz/cluster.py``: the same fuzzer ``work``, the same
buckets, lost-case re-checks and summary, with shards in place of processes.

Each worker runs the fuzzer's ``work``. Before a case runs it writes the case to ``.current-<wid>.json`` (graph: the
program, and the kernel sources as they compile; symbolic: the expression), so whatever happens next is reproducible from
a file:
- a case still running after ``case_timeout`` (a hang in Python or in native code) is seen by the supervisor, which kills
  the worker and re-runs that case in a fresh process (``fuzz/lost_case.py``): a ``hang`` finding if it hangs again;
- a worker that dies (a segfault in a kernel or in z3, tinygrad's queue aborting) is re-checked the same way: a
  ``crash`` finding if the case kills the fresh process too. A lost case that re-runs clean was lost to something outside
  it (the OOM killer, a kill from outside): an ``external-*.json`` record, never a finding.
Workers die with the supervisor (a parent-death signal), so a supervisor killed with -9 leaves none running.
Either way the worker is restarted with the next seeds and the campaign goes on. The time limit is enforced from outside
on purpose: with an in-worker timer (an armed ``ITIMER_REAL``, or a watchdog thread) tinygrad's CPU queue hung in the first
kernel after other Tensor work in the same process -- a false hang; see README.
``--minutes`` always holds: workers stop taking cases at the deadline and are killed a few seconds later."""
from __future__ import annotations
from typing import Any
import json, os, pathlib, signal, sys, time
from uopcheck.fuzz.fuzzers import Fuzzer, Work, fuzzer as get_fuzzer
from uopcheck.fuzz.lost_case import LostCaseCheck, die_with_parent
from uopcheck.fuzz.findings_store import DirectoryStore, known_signatures
from uopcheck.fuzz.findings_io import (probe_writable, open_example_db, FindingsUnwritable, EXIT_UNWRITABLE, SHIPPED_FINDINGS)
from uopcheck.interrupts import sigint_ignored
from uopcheck.atomic import remove_orphans
from uopcheck.settings import KILL_GRACE_S

def current_file(findings_dir:str|os.PathLike, wid:int) -> pathlib.Path: return pathlib.Path(findings_dir) / f".current-{wid}.json"

def pending_file(findings_dir:str|os.PathLike, name:str, pid:int) -> pathlib.Path:
  """the failure a fuzzer's worker ``pid`` is shrinking (the campaign engine keeps it there at every moment)"""
  return pathlib.Path(findings_dir) / f".pending-{name}-{pid}.json"

def buckets() -> dict[str, set]:
  """what a campaign saw, by the fuzzers' ``classify`` kinds: each a set of keys (both backends count the same way)"""
  return {k: set() for k in ("new", "known", "internal", "flaky", "external", "emulated", "resumed")}

def written_since(found:list[tuple[pathlib.Path, dict]], started_wall:float, known:dict) -> set[str]:
  """the signatures of the findings written since the run started that the shipped corpus does not know: what a run
  stopped early (Ctrl-C, a full disk) counts as new, since its event queue was not read to its end"""
  return {d["signature"] for p, d in found if p.stat().st_mtime >= started_wall and d["signature"] not in known}

def add_counts(total:dict, counts:dict) -> None:
  """a worker's (or shard's) counts into the run's: numbers are summed, lists joined (a finding listed once)"""
  for k, v in counts.items():
    if isinstance(v, bool) or not isinstance(v, (int, float, list)): continue
    if isinstance(v, list): total[k] = total.get(k, []) + [x for x in v if x not in total.get(k, [])]
    else: total[k] = total.get(k, 0) + v

def unwind_on_sigterm() -> None:
  """the supervisor's stop (budget over, Ctrl-C) is SIGTERM: unwind, so a file being written is finished or removed"""
  signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

def stop_worker(p:Any, findings_dir:str, wid:int, fuzzer:str, grace:float=3.0) -> None:
  """stop a ``fuzzer`` worker the campaign no longer needs: SIGTERM first (it unwinds, so the file it was writing is
  finished or removed), SIGKILL after ``grace`` seconds; then the temporary files a kill mid-write leaves are removed"""
  if p.is_alive():
    p.terminate()
    p.join(grace)
    if p.is_alive():
      p.kill()
      p.join(5)
  remove_orphans(current_file(findings_dir, wid))
  if p.pid is not None:
    remove_orphans(pending_file(findings_dir, fuzzer, p.pid))

def lost_case(findings_dir:str, wid:int) -> dict|None:
  """A worker died or hung mid-case: its last case, from its .current file (None: it was between cases)."""
  cur = current_file(findings_dir, wid)
  try: case = json.loads(cur.read_text())
  except (OSError, ValueError): return None
  cur.unlink(missing_ok=True)
  return case if isinstance(case, dict) else None

def file_lost_case(fz:Fuzzer, check:LostCaseCheck, seed:int|None, known:dict, store:Any) -> tuple[str, str]:
  """A finished re-check (fuzz/lost_case.py) as (bucket, key): a finding when the case reproduced its crash or hang in a
  fresh process, an external-fault record when it did not; what is not known is saved in ``store``."""
  d = check.record(seed)
  kind, key = fz.classify(d, known)
  if kind != "known": store.save(d)
  return kind, key

def _worker_main(name:str, work:Work, supervisor:int|None=None) -> None:
  die_with_parent()   # a supervisor killed with -9 leaves no worker fuzzing unsupervised
  if supervisor is not None and os.getppid() != supervisor: return   # it died before the line above took effect
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when to stop; written findings stay written
  unwind_on_sigterm()
  try: get_fuzzer(name).work(work)
  except FindingsUnwritable as e:   # not a crash to restart from: the supervisor stops the campaign (exit 3)
    print(f"uopcheck: worker {work.wid}: {e}", file=sys.stderr, flush=True)
    sys.exit(EXIT_UNWRITABLE)
  finally: work.tell_counts(force=True)   # stopped at the deadline (SIGTERM unwinds) too
  if os.environ.get("UOPCHECK_RULECOV_DIR"):  # under `uopcheck coverage`: leave this worker's rule hits for the combine
    from uopcheck import rulecov
    rulecov.write_data(os.environ["UOPCHECK_RULECOV_DIR"])

def run_local(fz:Fuzzer, minutes:float, workers:int=1, seed:int|None=None, findings_dir:str="", db_dir:str|None=None,
              options:dict|None=None, case_timeout:float|None=None, live:Any=None) -> dict:
  """``workers`` processes of ``fz`` until the budget is spent, supervised; returns the run's facts (``fz.summarize``
  makes them the report's summary): buckets, cases, counts, restarts, lost cases, interrupted / unwritable"""
  import multiprocessing as mp
  options = options or {}
  case_timeout = case_timeout or fz.case_timeout
  fz.prepare(options)   # a device that cannot run here, a bad scheduler spec: one line before any worker starts
  open_example_db(db_dir)  # an unusable database path is a one-line error before any worker starts
  probe_writable(findings_dir)   # a full disk or read-only directory: one line and exit 3 before any worker starts
  known, store = known_signatures(fz.layout), DirectoryStore(findings_dir, fz.layout)
  ctx = mp.get_context("spawn")
  counters, events = ctx.Array("l", 1), ctx.Queue()
  start, started_wall = time.perf_counter(), time.time()
  deadline = start + minutes * 60
  got = buckets()
  latest: dict[str, dict] = {}   # worker process -> its latest counts (summed at the end)
  # workers inherit the environment, so they count rule matches exactly when this process does (`uopcheck coverage`)
  from uopcheck.rulecov.collect import tracking
  rules = live.watch_rules(tracking()) if live is not None else None
  lost: list[str] = []
  rechecks: list[LostCaseCheck] = []   # lost cases being re-run in a fresh process before they are filed
  restarts = 0
  def launch(wid:int, offset:int):
    left = max(0.0, (deadline - time.perf_counter()) / 60)
    work = Work(wid, left, seed, findings_dir, db_dir, options, case_timeout, offset, counters, events, known_dir=SHIPPED_FINDINGS)
    p = ctx.Process(target=_worker_main, args=(fz.name, work, os.getpid()), daemon=True)
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
      if kind == "counts":   # the latest counts of one worker process (fuzzers.Work.tell_counts)
        told = json.loads(key)
        latest[told["worker"]] = told["counts"]
      elif kind != "rule": got[kind].add(key)
      elif rules is not None: rules.add([key])
  def settle(check:LostCaseCheck) -> bool:
    if check.poll() is None: return False
    kind, key = file_lost_case(fz, check, seed, known, store)
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
          except (OSError, ValueError, KeyError, TypeError): stuck = False
          if not stuck and now < deadline + KILL_GRACE_S: continue
          if not stuck:   # the budget is over: a case cut short is no finding
            stop_worker(p, findings_dir, w, fz.name)
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
        if (case := lost_case(findings_dir, w)) is not None:
          rechecks.append(LostCaseCheck(case, why[0], f"worker {w}: {why[1]}", timeout=case_timeout, fuzzer=fz.name, options=options).start())
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
    for w, p in procs.items(): stop_worker(p, findings_dir, w, fz.name)
    for c in rechecks: c.kill()   # not re-checked: not filed (its case stays in the report's lost cases)
    lost += [f"{c.why}; not re-checked (interrupted)" for c in rechecks]
  # after an interrupt the event queue may hold half a message (the signal landed mid-read, or a worker was killed
  # mid-put) and reading it can block forever: the findings are on disk, so read them from there instead
  if not (interrupted or unwritable): drain()
  if live is not None: live.update(force=True)   # the last rules the workers sent
  print()
  counts: dict = {}
  for c in latest.values(): add_counts(counts, c)
  return {"got": got, "known": known, "started_wall": started_wall, "interrupted": interrupted, "unwritable": unwritable,
          "seconds": round(time.perf_counter() - start, 1), "cases": counters[0], "counts": counts, "restarts": restarts, "lost": lost,
          "workers": workers, "minutes": minutes, "seed": seed, "findings_dir": str(findings_dir), "case_timeout": case_timeout,
          "options": options}

def main(fz:Fuzzer, args:Any) -> int:
  """``uopcheck fuzz NAME --workers N [--cluster ADDRESS]``: the campaign on either backend, its report, the exit code"""
  from uopcheck.runs import report, live_status
  from uopcheck.spec.errors import SpecError
  from uopcheck.fuzz.findings_io import exit_code, EXIT_INTERNAL
  opts = fz.options(args)
  timeout = getattr(args, "case_timeout", None) or opts.get("case_timeout") or fz.case_timeout
  if getattr(args, "cluster", None):
    if opts.get("device", "CPU") != "CPU": raise SpecError("--device with --cluster: a cluster campaign runs on the workers' CPU only (for now)")
    from uopcheck.fuzz.cluster import run_cluster_campaign
    run = run_cluster_campaign(args.minutes, args.cluster, args.workers, args.seed, args.findings, args.db, case_timeout=timeout,
                               fuzzer=fz.name, options=opts,
                               **({"shard_minutes": args.shard_minutes} if getattr(args, "shard_minutes", None) else {}))
    s = fz.summarize(run)
  else:
    open_example_db(args.db)   # refused input is one line, before the run directory (and its live status) exists
    live = live_status(args, f"fuzz-{fz.name}")
    s = fz.summarize(run_local(fz, args.minutes, args.workers, args.seed, args.findings, args.db, opts, timeout, live=live))
    if live is not None: live.close("stopped" if s.get("unwritable") else "interrupted" if s["interrupted"] else "finished", phase="done",
                                    new_findings=len(s["new"]), known_findings=len(s["known"]), new=s["new"], lost_cases=len(s["lost_cases"]))
  report(args, fz.result(s), f"fuzz-{fz.name}")
  for x in s.get("skipped_files", []): print(f"uopcheck: skipped {x}", file=sys.stderr)
  if s.get("unwritable"):   # what was found before it stopped is reported above; the run itself failed
    print(f"uopcheck: fuzz {fz.name} stopped: {s['unwritable']}", file=sys.stderr)
    return EXIT_INTERNAL
  if s["interrupted"]: return 130
  return exit_code(new=len(s["new"]), internal=len(s["uopcheck_internal"]))
