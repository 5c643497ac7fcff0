"""The graph fuzzer: hypothesis over ``graph.programs()``, each case ref vs fast (and a candidate scheduler), registered
(``FUZZER``) for the one supervisor (``fuzz/supervisor.py``: local processes, or Dask shards through ``fuzz/cluster.py``).

Before a case runs its worker writes the program to ``.current-<wid>.json`` (and, as they compile, the kernel sources),
so a case that hangs or takes its worker down is re-run from that file in a fresh process (``rerun``) and filed as a
``crash``/``hang`` finding only if it does so again (``lost_record``). Failures are shrunk by hypothesis (hangs and
crashes are not: each try would cost a worker), then blamed and signed on the shrunk case (``graph.finalize``);
signatures already in the shipped corpus count as known. Past ``--minutes`` a failure is saved without its per-kernel
blame. A failure still being shrunk when a campaign stopped is filed first by the next campaign on that directory with
the same schedulers (``orphan_pendings``)."""
from __future__ import annotations
import argparse
from typing import Any, Callable, Iterator
import contextlib, json, os, pathlib, time
from dataclasses import dataclass, field
from tinygrad.uop import Ops
from tinygrad.uop.ops import PatternMatcher, UPat, graph_rewrite
from tinygrad.dtype import dtypes
from uopcheck.fuzz.graph import FailureKind, crash_verdict, check_program, finalize, load_graph_findings, programs, FILE_PREFIX, LAYOUT
from uopcheck.fuzz.program import validate_program
from uopcheck.fuzz.campaign import Campaign, Failure, UNSHRUNK
from uopcheck.spec.errors import SpecError
from uopcheck.fuzz.fuzzers import Fuzzer, Work
from uopcheck.fuzz.supervisor import current_file, written_since, pending_file as supervisor_pending
from uopcheck.fuzz.findings_store import FindingsStore, DirectoryStore, known_signatures
from uopcheck.fuzz.findings_io import (write_or_stop, open_example_db, SHIPPED_FINDINGS)
from uopcheck.results import Column, Table, Section, Result, Outcome

from uopcheck.settings import GRAPH_SHRINK_BUDGET as SHRINK_BUDGET, CASE_TIMEOUT_S, LARGE_CASE_TIMEOUT_S

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

def pending_file(findings_dir:str|os.PathLike, pid:int) -> pathlib.Path: return supervisor_pending(findings_dir, "graph", pid)

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

def summarize(findings_dir:str, got:dict[str, set], started_wall:float, interrupted:bool, known:dict, *, minutes:float, workers:int,
              seed:int|None, seconds:float, cases:int, scheduler:str|None, candidate:str|None, case_timeout:float, profile:str,
              restarts:int, lost:list[str]) -> dict:
  """the campaign's summary (the JSON and Markdown reports), from what it saw and the findings directory: after an
  interrupt, every finding file written since the start that is not in the shipped corpus counts as new"""
  found, problems = load_graph_findings(findings_dir)
  if interrupted: got["new"] |= written_since(found, started_wall, known)
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

# ** the graph fuzzer's registration (fuzz/fuzzers.py): the supervisor and the CLI run it through this **

def add_arguments(g:argparse.ArgumentParser) -> None:
  g.add_argument("--scheduler", default=None, metavar="MODULE:FN", help="a candidate scheduler (package.module:fn or file.py:fn); every "
                 "case runs the reference, stock rangeify and the candidate, and a finding names which is wrong")
  g.add_argument("--device", default=None, help="where the cases run (default: DEV from the environment, else CPU): CPU, MOCK+AMD, "
                 "MOCK+AMD::gfx950 (tinygrad's AMD backend on its mock GPU), AMD, NV, CUDA; one line if it cannot run here (not with --cluster)")
  g.add_argument("--profile", choices=["small", "large"], default="small",
                 help="program size (small: <= 6 steps, <= 4,096 elements; large: <= 40 steps, up to 2M elements)")
  g.add_argument("--self-test-bug", action="store_true", help=argparse.SUPPRESS)  # run under a deliberately broken scheduler

def options(args:argparse.Namespace) -> dict:
  """what the workers need of the flags: the scheduler under test (stock, or the self-test's broken one), the candidate,
  the device, the program profile and the case timeout it implies"""
  profile = getattr(args, "profile", "small")
  return {"scheduler": "self-test-bug" if getattr(args, "self_test_bug", False) else None, "candidate": getattr(args, "scheduler", None),
          "device": getattr(args, "device", None) or "CPU", "profile": profile,
          "case_timeout": getattr(args, "case_timeout", None) or (LARGE_CASE_TIMEOUT_S if profile == "large" else CASE_TIMEOUT_S)}

def prepare(opts:dict) -> None:
  """a device that cannot run here, a bad scheduler spec: one line before any worker starts"""
  if opts.get("device", "CPU") != "CPU":
    from uopcheck.fast.devices import open_device
    open_device(opts["device"])
  load_schedulers(opts.get("scheduler"), opts.get("candidate"))

def work(w:Work) -> None:
  """one graph worker (a process of the supervisor, or a Dask shard) with the campaign's schedulers and device (its cases
  are counted in the shared counter; the supervisor reads its findings from its events and the findings directory)"""
  sched, cand = load_schedulers(w.options.get("scheduler"), w.options.get("candidate"))
  with on_device(w.options.get("device", "CPU")):
    worker(w.wid, w.minutes, w.seed, w.findings_dir, w.db_dir, w.counters, sched, known_dir=w.known_dir, candidate=cand,
                   case_timeout=w.case_timeout, events=w.events, round_offset=w.round_offset, profile=w.options.get("profile", "small"),
                   store=w.store, publish=w.publish, specs=(w.options.get("scheduler"), w.options.get("candidate")))

def validate_case(case:dict) -> None:
  """a running case (a .current file, a peer's message) is data: a program that passes the program schema"""
  if not isinstance(case.get("program"), dict): raise ValueError("the case holds no program")
  validate_program(case["program"])

def rerun(case:dict, opts:dict) -> None:
  """the lost case again in this fresh process (fuzz/lost_case.py): the same schedulers, the same device"""
  from uopcheck.fast.runner import open_cpu_queues
  open_cpu_queues()
  sched, cand = load_schedulers(opts.get("scheduler"), opts.get("candidate"))
  with on_device(opts.get("device", "CPU")): check_program(case["program"], scheduler=sched, candidate=cand)

def lost_record(check:Any, seed:int|None) -> dict:
  """a finished re-check as a graph record: a crash/hang finding (reproduced) or an external-fault record (not); on the
  mock GPU an amd-unattributed record (the emulator's slowness or crash, or the AMD backend -- hardware decides)"""
  from uopcheck.fuzz.graph import GraphVerdict
  out = check.outcome or {"reproduced": None, "detail": "not re-run"}
  kind = FailureKind(out["reproduced"] or check.kind)
  d = finalize(check.case["program"], GraphVerdict(False, kind, f"{check.why}; {out['detail']}"), seed=seed, blame=kind,
               kernels=check.case.get("kernels"))
  if out["reproduced"] is None: d["kind"] = "external-fault"
  elif str(check.options.get("device", "CPU")).startswith("MOCK+"): d["kind"] = "amd-unattributed"
  return d

def summary_of(run:dict) -> dict:
  """the supervisor's facts about a run (either backend) as the graph campaign's summary"""
  o = run["options"]
  s = summarize(run["findings_dir"], run["got"], run["started_wall"], run["interrupted"] or bool(run["unwritable"]), run["known"],
                minutes=run["minutes"], workers=run["workers"], seed=run["seed"], seconds=run["seconds"], cases=run["cases"],
                scheduler=o.get("scheduler"), candidate=o.get("candidate"), case_timeout=run["case_timeout"], profile=o.get("profile", "small"),
                restarts=run["restarts"], lost=run["lost"])
  s.update({k: run[k] for k in ("interrupted", "unwritable", "cluster", "shards", "workers_used", "rejected_messages") if k in run})
  s["device"] = o.get("device", "CPU")
  return s

FUZZER = Fuzzer("graph", "tensor programs, ref vs fast (and a candidate scheduler)", LAYOUT, add_arguments, options, prepare, work, classify,
                validate_case, rerun, lost_record, summary_of, result, case_timeout=CASE_TIMEOUT_S)
