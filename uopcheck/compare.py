"""``uopcheck compare-schedulers A B``: two schedulers side by side, correctness beside cost.

Cases are the real graphs (``uopcheck.check.catalog``), the programs of a graph-fuzz corpus (a directory of ``graph-*.json``)
and programs drawn from a seed. For each case and each scheduler: the verdict against the reference (ref vs fast), then
a second, warm run (kernels already compiled) for the cost: kernels launched, tinygrad's own estimates of FLOPs and of
bytes moved (``GlobalCounters``: the ``Estimates`` of every kernel run), compile time (tinygrad's ``lower_and_compile``
on the first run, with its compiled-binary cache off) and the warm run's wall time. Written as a table, JSON and a plot."""
from __future__ import annotations
import pathlib, time
from dataclasses import dataclass, asdict, field
from typing import Callable
from tinygrad.helpers import GlobalCounters, Context
from uopcheck import fast
from uopcheck.check import harness, catalog
from uopcheck.spec.errors import SpecError

@dataclass
class Cost:
  ok: bool
  error: str = ""
  internal: bool = False     # uopcheck's own reference failed: no verdict on the scheduler
  kernels: int = 0
  ops: int = 0
  bytes: int = 0
  compile_s: float = 0.0
  run_s: float = 0.0

@dataclass
class Row:
  case: str
  source: str                # real-graph | corpus | fuzz
  costs: dict[str, Cost] = field(default_factory=dict)

def measure(build:Callable[[], object], name:str, scheduler) -> Cost:
  """One case under one scheduler: the verdict (first run, compiles timed, compiled-binary cache off), then the cost
  of a warm run."""
  first: list = []
  def realize(tensors):
    with Context(CCACHE=0): f = fast.run(tensors, scheduler=scheduler)
    first.append(f)
    return f
  try: r = harness.check(build, name, scheduler=scheduler, realize=realize)
  except Exception as e:  # the scheduler (or tinygrad under it) crashed on a valid case: a verdict, not uopcheck's failure
    return Cost(False, f"crash: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200])
  if r.failed_in in ("reference", "build"): return Cost(False, r.error[:200], internal=True)
  c = Cost(r.ok, "" if r.ok else r.error[:200], compile_s=first[0].compile_s if first else 0.0)
  try:
    tensors = harness._tensors(build())
    GlobalCounters.reset()
    st = time.perf_counter()
    f = fast.run(tensors, scheduler=scheduler, check_spec=False)
    c.run_s = time.perf_counter() - st
    c.kernels, c.ops, c.bytes = max(GlobalCounters.kernel_count, len(f.kernels)), int(GlobalCounters.global_ops), int(GlobalCounters.global_mem)
  except Exception as e:  # the verdict stands; the cost run failing is reported beside it
    c.ok, c.error = False, (c.error or f"warm run: {type(e).__name__}: {e}")[:200]
  return c

def cases(graphs:list[str]|None, corpus:str|None, fuzz:int, seed:int, profile:str) -> list[tuple[str, str, Callable]]:
  """(name, source, build) for every case asked for."""
  out: list[tuple[str, str, Callable]] = []
  names = list(catalog.REAL_GRAPHS) if graphs is None else graphs
  if unknown := [n for n in names if n not in catalog.REAL_GRAPHS]:
    raise SpecError(f"unknown graph(s) {unknown}; known: {', '.join(catalog.REAL_GRAPHS)}")
  out += [(n, "real-graph", catalog.REAL_GRAPHS[n]) for n in names]
  from uopcheck.fuzz.graph import build_program, load_graph_findings
  from uopcheck.fuzz.program import without_jit
  if corpus:
    if not pathlib.Path(corpus).is_dir(): raise SpecError(f"corpus {corpus}: not a directory of graph-*.json findings")
    found, problems = load_graph_findings(corpus)
    for p in problems: print(f"uopcheck: skipped {p}")
    out += [(p.stem, "corpus", lambda d=d: build_program(without_jit(d["program"]))) for p, d in found]
  for i, d in enumerate(sample_programs(fuzz, seed, profile)):
    out.append((f"fuzz-{seed}-{i}", "fuzz", lambda d=d: build_program(without_jit(d))))
  return out

def sample_programs(n:int, seed:int, profile:str="small") -> list[dict]:
  """``n`` graph-fuzz programs, the same for the same seed."""
  if n <= 0: return []
  from hypothesis import given, settings, seed as hseed, HealthCheck, Phase
  from uopcheck.fuzz.graph_strategy import programs
  got: list[dict] = []
  @hseed(seed)
  @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate])
  @given(programs(profile=profile))
  def draw(d): got.append(d)
  draw()
  return got[:n]

def compare(a:str, b:str, graphs=None, corpus=None, fuzz:int=0, seed:int=0, profile:str="small", progress=print) -> list[Row]:
  sched = {a: fast.load_scheduler(None if a == "rangeify" else a), b: fast.load_scheduler(None if b == "rangeify" else b)}
  rows = []
  todo = cases(graphs, corpus, fuzz, seed, profile)
  for k, (name, src, build) in enumerate(todo):
    row = Row(name, src)
    for label, s in sched.items(): row.costs[label] = measure(build, name, s)
    rows.append(row)
    progress(f"[{k + 1}/{len(todo)}] {name}")
  return rows

def _fmt_bytes(n:float) -> str:
  for unit in ("B", "KB", "MB", "GB"):
    if n < 1024: return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
    n /= 1024
  return f"{n:.1f}TB"

def table(rows:list[Row], a:str, b:str) -> str:
  la, lb = "A", "B"
  head = f"{'case':28s} {'src':10s} | {la+' ok':5s} {'kern':>5s} {'bytes':>8s} {'ops':>9s} {'comp s':>7s} {'run ms':>7s} | " \
         f"{lb+' ok':5s} {'kern':>5s} {'bytes':>8s} {'ops':>9s} {'comp s':>7s} {'run ms':>7s}"
  lines = [f"A = {a}", f"B = {b}", head, "-" * len(head)]
  def cell(c:Cost) -> str:
    ok = "int!" if c.internal else "ok" if c.ok else "FAIL"
    return f"{ok:5s} {c.kernels:5d} {_fmt_bytes(c.bytes):>8s} {c.ops:9d} {c.compile_s:7.2f} {c.run_s * 1e3:7.1f}"
  for r in rows: lines.append(f"{r.case[:28]:28s} {r.source:10s} | {cell(r.costs[a])} | {cell(r.costs[b])}")
  tot = {s: (sum(r.costs[s].ok for r in rows), sum(r.costs[s].kernels for r in rows), sum(r.costs[s].bytes for r in rows),
             sum(r.costs[s].compile_s for r in rows), sum(r.costs[s].run_s for r in rows)) for s in (a, b)}
  lines.append("-" * len(head))
  for s, lab in ((a, "A"), (b, "B")):
    ok, k, by, cs, rs = tot[s]
    lines.append(f"{lab}: {ok}/{len(rows)} correct, {k} kernels, {_fmt_bytes(by)} moved, {cs:.1f} s compiling, {rs:.2f} s warm runs")
  if tot[a][1]: lines.append(f"B/A: kernels x{tot[b][1] / max(tot[a][1], 1):.2f}, bytes x{tot[b][2] / max(tot[a][2], 1):.2f}, "
                             f"compile x{tot[b][3] / max(tot[a][3], 1e-9):.2f}, warm run x{tot[b][4] / max(tot[a][4], 1e-9):.2f}")
  for r in rows:
    for s, lab in ((a, "A"), (b, "B")):
      if not r.costs[s].ok: lines.append(f"{lab} {'uopcheck-internal' if r.costs[s].internal else 'FAIL'} {r.case}: {r.costs[s].error}")
  return "\n".join(lines)

def write_plot(rows:list[Row], a:str, b:str, path:pathlib.Path) -> pathlib.Path|None:
  """Kernels, bytes and warm run time per case, A beside B; a failing case is marked x. None without matplotlib."""
  try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
  except ImportError: return None
  import numpy as np
  x = np.arange(len(rows))
  fig, axes = plt.subplots(3, 1, figsize=(max(8, len(rows) * 0.45), 10), sharex=True)
  for ax, key, label in zip(axes, ("kernels", "bytes", "run_s"), ("kernels", "bytes moved (tinygrad estimate)", "warm run (s)")):
    for off, s, lab in ((-0.2, a, "A"), (0.2, b, "B")):
      vals = [getattr(r.costs[s], key) for r in rows]
      ax.bar(x + off, vals, 0.4, label=f"{lab}: {s[-40:]}")
      bad = [i for i, r in enumerate(rows) if not r.costs[s].ok]
      ax.scatter(x[bad] + off, [vals[i] for i in bad], marker="x", color="red", zorder=3, label=f"{lab} wrong" if bad else None)
    ax.set_ylabel(label)
    if key == "bytes": ax.set_yscale("symlog")
  axes[0].legend(fontsize=7)
  axes[-1].set_xticks(x, [r.case[:20] for r in rows], rotation=75, fontsize=7)
  fig.tight_layout()
  path.parent.mkdir(parents=True, exist_ok=True)
  fig.savefig(path, dpi=90)
  plt.close(fig)
  return path

def main(args) -> int:
  from uopcheck.fuzz.findings_io import atomic_write_json, exit_code
  rows = compare(args.a, args.b, args.graphs, args.corpus, args.fuzz, args.seed, args.profile,
                 progress=lambda s: print(s, flush=True) if not args.quiet else None)
  print(table(rows, args.a, args.b))
  from uopcheck.runs import resolve
  out = resolve(args, "compare-schedulers")
  atomic_write_json(out / "compare_schedulers.json", {"a": args.a, "b": args.b, "seed": args.seed, "profile": args.profile,
                                                       "rows": [{"case": r.case, "source": r.source, "a": asdict(r.costs[args.a]),
                                                                 "b": asdict(r.costs[args.b])} for r in rows]})
  print(f"JSON: {out / 'compare_schedulers.json'}")
  if (p := write_plot(rows, args.a, args.b, out / "compare_schedulers.png")) is not None: print(f"plot: {p}")
  else: print("plot: skipped (matplotlib is not installed)")
  wrong = sum(not c.ok and not c.internal for r in rows for c in r.costs.values())
  return exit_code(new=wrong, internal=sum(c.internal for r in rows for c in r.costs.values()))
