"""Graph campaigns on a Dask distributed cluster: ``uopcheck fuzz graph --cluster ADDRESS`` (``--cluster local`` starts an
embedded ``LocalCluster`` of ``--workers`` processes, so one machine needs nothing else).

The client cuts the time budget into *shards* (a seed and a slice of minutes each) and keeps one running per worker
thread. A shard is ``graph_campaign.worker`` in the Dask worker's process, with two changes: it never writes a finding --
it sends each one, as soon as it is finalized, through a ``distributed.Queue`` to the client, which validates it as
data, deduplicates it by signature (against the shipped corpus and everything this run saw) and writes it, once; and it
publishes its running case and its pending (found, not yet shrunk) failure in a ``distributed.Variable``. So:

- a Dask worker lost mid-case (the case crashed the process, the machine went away) loses no finding: what it sent is
  written, and its last case is re-run by the client in a fresh process (fuzz/lost_case.py) -- reported by the shard's
  next attempt when Dask reschedules it, or seen by the client when Dask gives up on it (``KilledWorker``) -- and saved
  as a ``crash`` finding if it kills that process too, else as an external fault (never a finding); a pending failure it
  had not finalized is kept beside the findings as ``.pending-graph-shard<N>.json`` (unconfirmed);
- a case running past ``--case-timeout`` is re-run the same way (a ``hang`` finding if it hangs again), and the client
  restarts that worker.

Peers are authenticated: ``--cluster local`` runs over TLS with a certificate made for the run, and a remote scheduler is
joined only over ``tls://`` with the certificates of Dask's configuration. Every queue item must be a JSON string of a
known message (``_Collector.message``); anything else is skipped and counted, never fatal, and paths are built from
validated integers only. Dask's own wire protocol unpickles what an authenticated peer sends: the certificate is the
boundary (README, "Threat model").

hypothesis' example database is shared through Redis with ``--db redis://HOST:6379/0`` (or a directory on a shared
filesystem). Every worker must be able to import uopcheck, tinygrad and the ``--scheduler`` module (same environment)."""
from __future__ import annotations
from typing import Any
import json, time, uuid
from uopcheck.spec.errors import SpecError
from uopcheck.fuzz.findings_io import DEFAULT_FINDINGS, MALFORMED
from uopcheck.settings import CASE_TIMEOUT_S, KILL_GRACE_S, CLUSTER_SHARD_MINUTES
from uopcheck.progress import StatusLine

class _Counter:
  """``worker``'s shared case counter, as the shard sees it: every ``every`` cases the count goes to the client"""
  def __init__(self, send, every:int=20): self.n, self.sent, self.send, self.every = [0], 0, send, every
  def get_lock(self): return self
  def __enter__(self): return self
  def __exit__(self, *a): self.flush(self.every)
  def __getitem__(self, i): return self.n[i]
  def __setitem__(self, i, v): self.n[i] = v
  def flush(self, every:int=1) -> None:
    if self.n[0] - self.sent >= every:
      self.send({"cases": self.n[0] - self.sent})
      self.sent = self.n[0]

def _var_get(var) -> dict|None:
  """a shard's published state: a JSON object whose ``case`` (if any) is an object -- anything else (gone, malformed) None"""
  try: st = json.loads(var.get(timeout=5))
  except Exception: return None   # gone (the client set it before the shard was submitted): nothing to recover
  return st if isinstance(st, dict) and isinstance(st.get("case") or {}, dict) else None

def _exit_worker() -> None:
  import os
  os._exit(70)   # EX_SOFTWARE: the worker ran a hung case (fuzz.cluster's watchdog)

def shard(spec:dict) -> dict:
  """One Dask task: the registered fuzzer ``spec['fuzzer']`` for ``spec['minutes']`` on this worker. Returns its counts;
  findings, progress and the running case travel through the run's Queue and this shard's Variable while it runs."""
  from uopcheck.settings import apply_environment
  apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported in this worker
  import tempfile
  from distributed import Queue, Variable, get_worker
  from uopcheck.fuzz.fuzzers import Work, fuzzer
  from uopcheck.fuzz.findings_store import QueueStore
  fz = fuzzer(spec["fuzzer"])
  out, var = Queue(spec["run"]), Variable(f"{spec['run']}-shard-{spec['shard']}")
  def send(msg):
    return out.put(json.dumps({**msg, "shard": spec["shard"]}))
  prev = _var_get(var)
  if prev and prev.get("case") and not prev.get("handled"):   # an earlier attempt died with its worker, mid-case
    send({"lost": prev, "why": "crash: the Dask worker running the case was lost"})
  attempt = (prev or {}).get("attempt", -1) + 1
  state = {"attempt": attempt, "worker": get_worker().address}
  def publish(update:dict) -> None:
    state.update(update)
    var.set(json.dumps(state))
  publish({})
  counter = _Counter(send)
  with tempfile.TemporaryDirectory(prefix="uopcheck-shard-") as d:   # the worker's pending and current files (local scratch)
    w = Work(0, spec["minutes"], spec["seed"], d, spec["db"], spec["options"], spec["case_timeout"], attempt * 1000, counter,
             store=QueueStore(send, fz.layout), publish=publish, shard=spec["shard"])
    fz.work(w)
  counter.flush()
  var.set(json.dumps({"attempt": attempt, "done": True}))
  return {"shard": spec["shard"], "counts": w.tally(), "worker": state["worker"]}

class _Collector:
  """The client's side: every message from the shards checked as data, findings validated, deduplicated and written once,
  lost cases re-run in a fresh process before they are filed (fuzz/lost_case.py)."""
  def __init__(self, findings_dir:str, known:dict, seed, fuzzer:str="graph", options:dict|None=None, case_timeout:float=CASE_TIMEOUT_S):
    import pathlib
    from uopcheck.fuzz.findings_store import DirectoryStore
    from uopcheck.fuzz.fuzzers import fuzzer as get_fuzzer
    from uopcheck.fuzz.supervisor import buckets
    self.fz = get_fuzzer(fuzzer)
    self.dir, self.known, self.seed = pathlib.Path(findings_dir), known, seed
    self.store = DirectoryStore(self.dir, self.fz.layout)
    self.options, self.case_timeout = options or {}, case_timeout
    self.got = buckets()
    self.cases = 0
    self.lost: list[str] = []       # one line per case that took a worker down
    self.rejected: list[str] = []   # messages that were not findings (never written)
    self.checks: list = []          # lost cases being re-run in a fresh process

  def _reject(self, what:str, e:Exception) -> None:
    self.rejected.append(f"{what} from a worker was skipped: {type(e).__name__}: {e}"[:300])

  def finding(self, d:dict) -> None:
    try: d = self.store.check(d)   # a message from the network is data: checked like a finding file before it is saved
    except (SpecError, RecursionError, *MALFORMED) as e: return self._reject("a malformed finding", e)
    kind, key = self.fz.classify(d, self.known)
    if kind != "known": self.store.save(d)   # one file per signature; a smaller program of the same bug replaces it
    self.got[kind].add(key)

  def lost_case(self, state:dict, kind:str, why:str, shard:int) -> None:
    """a shard's case that took its worker down: its pending failure kept beside the findings, the case re-run in a fresh
    process (``settle`` files it); ``shard`` is a validated integer, the only part of the message a path is built from"""
    from uopcheck.atomic import atomic_write_json
    from uopcheck.fuzz.lost_case import LostCaseCheck
    if type(shard) is not int or shard < 0: return self._reject("a lost case", ValueError(f"shard {shard!r} is not an integer"))
    if isinstance(state.get("pending"), dict): atomic_write_json(self.dir / f".pending-{self.fz.name}-shard{shard}.json", state["pending"])
    case = state.get("case")
    if not case: return
    try:   # the case will run in a process here: data from the network, checked first
      if not isinstance(case, dict): raise ValueError("the case is not an object")
      self.fz.validate_case(case)
    except (SpecError, RecursionError, *MALFORMED) as e: return self._reject("a lost case", e)
    self.lost.append(f"shard {shard}: {why}")
    self.checks.append(LostCaseCheck(case, kind, f"shard {shard}: {why}", self.case_timeout, self.fz.name, self.options).start())

  def settle(self) -> None:
    """file every finished re-check: a finding if the case took a fresh process down too, else an external fault"""
    from uopcheck.fuzz.supervisor import file_lost_case
    for c in [c for c in self.checks if c.poll() is not None]:
      self.checks.remove(c)
      kind, key = file_lost_case(self.fz, c, self.seed, self.known, self.store)
      self.got[kind].add(key)

  def message(self, raw) -> None:
    """one queue item: a JSON string holding an object with an integer ``shard`` and one of cases / finding / lost+why;
    anything else is logged in ``rejected`` and skipped, never fatal"""
    try:
      if not isinstance(raw, str): raise TypeError(f"a {type(raw).__name__}, not a JSON string")
      m = json.loads(raw)
      if not isinstance(m, dict): raise TypeError(f"JSON {type(m).__name__}, not an object")
      shard, keys = m.get("shard"), set(m) - {"shard"}
      if type(shard) is not int or shard < 0: raise ValueError(f"shard {str(shard)[:40]!r} is not a non-negative integer")
      if keys == {"cases"} and type(m["cases"]) is int and m["cases"] >= 0: self.cases += m["cases"]
      elif keys == {"finding"}: self.finding(m["finding"])
      elif keys == {"lost", "why"} and isinstance(m["lost"], dict) and isinstance(m["why"], str):
        self.lost_case(m["lost"], "crash", m["why"][:300], shard)
      else: raise ValueError(f"unknown message {sorted(keys)[:5]}")
    except (ValueError, TypeError, RecursionError) as e: self._reject("a malformed message", e)

def local_cluster(workers:int) -> tuple[Any, Any]:
  """an embedded LocalCluster of ``workers`` processes that only holders of this run's certificate can reach: TLS with a
  certificate made for the run (Dask's ``Security.temporary()``), the scheduler on loopback; returns (cluster, client)"""
  import distributed
  from distributed.security import Security
  sec = Security.temporary()
  cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1",
                                     security=sec, protocol="tls://")
  try: return cluster, distributed.Client(cluster, security=sec, timeout=30)
  except Exception:
    cluster.close()
    raise

def remote_client(address:str) -> Any:
  """a Client of a running scheduler; only over TLS (tls://), with the certificates of Dask's configuration
  (distributed.comm.tls.*, see README): anyone who reaches a plain tcp:// scheduler can run code in it and its workers"""
  import distributed
  from distributed.security import Security
  if not address.startswith("tls://"):
    raise SpecError(f"--cluster {address}: only tls:// schedulers are joined (a tcp:// one runs anyone's code; see README, 'Threat model')")
  sec = Security()   # from dask's config: DASK_DISTRIBUTED__COMM__TLS__CA_FILE, ...__CLIENT__CERT, ...__CLIENT__KEY
  if not (getattr(sec, "tls_ca_file", None) and getattr(sec, "tls_client_cert", None)):
    raise SpecError(f"--cluster {address}: no TLS certificates configured (set distributed.comm.tls.ca-file and .client.cert/.key; see README)")
  try: return distributed.Client(address, security=sec, timeout=30)
  except (OSError, TimeoutError) as e: raise SpecError(f"{address}: no Dask scheduler answers there ({type(e).__name__}: {e})") from None

def run_cluster_campaign(minutes:float, cluster:str="local", workers:int=2, seed:int|None=None, findings_dir:str=DEFAULT_FINDINGS,
                         db:str|None=None, case_timeout:float|None=None, shard_minutes:float=CLUSTER_SHARD_MINUTES, fuzzer:str="graph",
                         options:dict|None=None) -> dict:
  """The supervisor's Dask backend, for any registered fuzzer: start (``local``) or join (``tls://HOST:8786``) a Dask
  cluster, keep a shard on every worker thread until the budget is spent, write what comes back. Returns the same facts as
  the one-machine supervisor (``supervisor.run_local``), plus the cluster's."""
  import pathlib
  from uopcheck.fuzz.findings_io import open_example_db
  from uopcheck.fuzz.findings_store import known_signatures
  from uopcheck.fuzz.fuzzers import fuzzer as get_fuzzer
  from uopcheck.fuzz.supervisor import add_counts
  fz, options = get_fuzzer(fuzzer), options or {}
  case_timeout = case_timeout or fz.case_timeout
  try: import dask, distributed
  except ImportError as e: raise SpecError(f"--cluster needs Dask (pip install uopcheck[cluster]): {e}") from None
  open_example_db(db)   # an unusable database (path or Redis URL) is a one-line error before any worker starts
  fz.prepare(options)   # a bad scheduler spec is a one-line error here, not in every shard
  pathlib.Path(findings_dir).mkdir(parents=True, exist_ok=True)
  col = _Collector(findings_dir, known_signatures(fz.layout), seed, fz.name, options, case_timeout)
  counts: dict = {}
  run = f"uopcheck-{uuid.uuid4().hex[:10]}"
  start, started_wall = time.perf_counter(), time.time()
  deadline = start + minutes * 60
  # tinygrad compiles in spawned processes: a Dask worker must be allowed children (LocalCluster's; a remote cluster's
  # workers need DASK_DISTRIBUTED__WORKER__DAEMON=False, see README)
  with dask.config.set({"distributed.worker.daemon": False}):
    local, client = local_cluster(workers) if cluster == "local" else (None, remote_client(cluster))
  queue = distributed.Queue(run, client=client)
  running: dict = {}   # future -> shard number
  shards, interrupted, restarts = 0, False, 0
  used: set[str] = set()   # the Dask workers that finished a shard
  status = StatusLine()
  def submit() -> None:
    nonlocal shards
    left = (deadline - time.perf_counter()) / 60
    spec = {"run": run, "shard": shards, "minutes": min(shard_minutes, left), "db": db, "fuzzer": fz.name, "options": options,
            "case_timeout": case_timeout, "seed": None if seed is None else seed * 1000 + shards}
    # the shard's Variable is set before it runs (a get of an unset Variable waits, and the scheduler logs the timeout)
    distributed.Variable(f"{run}-shard-{shards}", client=client).set(json.dumps({"attempt": -1}))
    running[client.submit(shard, spec, key=f"{run}-shard-{shards}", pure=False)] = shards
    shards += 1
  def drain() -> None:
    for raw in queue.get(batch=True): col.message(raw)
    col.settle()
  try:
    for _ in range(sum(client.nthreads().values())): submit()
    while running or col.checks:
      time.sleep(1.0)
      drain()
      alive = client.scheduler_info()["workers"]   # once per poll, not once per running shard
      for fut, n in list(running.items()):
        var = distributed.Variable(f"{run}-shard-{n}", client=client)
        if fut.status == "pending":
          st = _var_get(var) or {}
          case = st.get("case") or {}
          started = case.get("started")
          gone = case and (not isinstance(st.get("worker"), str) or st["worker"] not in alive)   # the worker died mid-case
          stuck = case and isinstance(started, (int, float)) and time.time() - started > case_timeout
          if (gone or stuck) and not st.get("handled"):
            var.set(json.dumps({**st, "handled": True}))   # the shard's next attempt would report it too
            col.lost_case(st, "crash" if gone else "hang", "crash: the Dask worker running the case died" if gone else
                          f"hang: the case ran past {case_timeout:g} s; its Dask worker was restarted", n)
            # the stuck thread may never return: the worker's event loop ends the process and its nanny starts a new one (a
            # graceful restart_workers waits for the stuck task, up to minutes)
            if not gone: client.run(_exit_worker, workers=[st["worker"]], wait=False, on_error="ignore")
            restarts += 1
          elif time.perf_counter() > deadline + KILL_GRACE_S + case_timeout:
            fut.cancel()
            del running[fut]
          continue
        del running[fut]
        if fut.status == "finished" and isinstance(r := fut.result(), dict) and isinstance(r.get("worker"), str):
          used.add(r["worker"])
          if isinstance(r.get("counts"), dict): add_counts(counts, r["counts"])
        if fut.status == "error":   # Dask gave up on the shard (its workers kept dying): its last case is re-checked
          drain()
          st = _var_get(var) or {}
          if not st.get("handled"): col.lost_case(st, "crash", "crash: the shard failed on its Dask worker", n)
          restarts += 1
        if time.perf_counter() < deadline - 5: submit()
      status.update(f"cases {col.cases}  new findings {len(col.got['new'])}  shards {shards}  lost {len(col.lost)}")
    drain()
  except KeyboardInterrupt:
    interrupted = True
    for fut in running: fut.cancel()
    for c in col.checks: c.kill()   # not re-checked: not filed
    try: drain()   # what the shards already sent is written before the client goes
    except Exception: pass
  finally:
    status.close()
    client.close()
    if local is not None: local.close()
  return {"got": col.got, "known": col.known, "started_wall": started_wall, "interrupted": interrupted, "unwritable": "",
          "seconds": round(time.perf_counter() - start, 1), "cases": col.cases, "counts": counts, "restarts": restarts, "lost": col.lost,
          "workers": workers, "minutes": minutes, "seed": seed, "findings_dir": str(findings_dir), "case_timeout": case_timeout,
          "options": options, "cluster": cluster, "shards": shards, "workers_used": len(used), "rejected_messages": col.rejected}
