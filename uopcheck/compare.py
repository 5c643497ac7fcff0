"""``uopcheck compare-schedulers A B``: two schedulers side by side, correctness beside cost.

Cases are the real graphs (``uopcheck.check.catalog``), the programs of a graph-fuzz corpus (a directory of ``graph-*.json``)
and programs drawn from a seed. For each case and each scheduler: the verdict against the reference (ref vs fast), then
a second, warm run (kernels already compiled) for the cost: kernels launched, tinygrad's own estimates of FLOPs and of
bytes moved (``GlobalCounters``: the ``Estimates`` of every kernel run), compile time (tinygrad's ``lower_and_compile``
on the first run, with its compiled-binary cache off) and the warm run's wall time. Reported through ``--report``, plus a plot."""
from __future__ import annotations
import pathlib, time
from dataclasses import dataclass, asdict, field
from typing import Callable
from tinygrad import Device
from tinygrad.helpers import GlobalCounters, Context
from uopcheck import fast
from uopcheck.check import harness, catalog
from uopcheck.spec.errors import SpecError
from uopcheck.results import Column, Table, Section, Result

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
    with Context(CCACHE=0): f = fast.run(tensors, device=Device.DEFAULT, hcq2=fast.hcq2_active(), scheduler=scheduler)
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
    f = fast.run(tensors, device=Device.DEFAULT, hcq2=fast.hcq2_active(), scheduler=scheduler, check_spec=False)
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

def _cost_columns(lab:str) -> list[Column]:
  k = lab.lower()
  return [Column(f"{k} ok", f"{lab} ok", 5), Column(f"{k} kern", "kern", 5, ">"), Column(f"{k} bytes", "bytes", 8, ">"),
          Column(f"{k} ops", "ops", 9, ">"), Column(f"{k} comp s", "comp s", 7, ">", ".2f"), Column(f"{k} run ms", "run ms", 7, ">", ".1f")]

COLUMNS = [Column("case", width=28), Column("src", width=10), *_cost_columns("A"), *_cost_columns("B")]

def _cost_cells(c:Cost, k:str) -> dict:
  return {f"{k} ok": "int!" if c.internal else "ok" if c.ok else "FAIL", f"{k} kern": c.kernels, f"{k} bytes": _fmt_bytes(c.bytes),
          f"{k} ops": c.ops, f"{k} comp s": c.compile_s, f"{k} run ms": c.run_s * 1e3}

def result(rows:list[Row], a:str, b:str, extra:dict|None=None) -> Result:
  """one row per case (A's cost beside B's), the totals and B/A ratios, and every failure"""
  table = Table(COLUMNS, [{"case": r.case[:28], "src": r.source, **_cost_cells(r.costs[a], "a"), **_cost_cells(r.costs[b], "b")} for r in rows])
  tot = {s: (sum(r.costs[s].ok for r in rows), sum(r.costs[s].kernels for r in rows), sum(r.costs[s].bytes for r in rows),
             sum(r.costs[s].compile_s for r in rows), sum(r.costs[s].run_s for r in rows)) for s in (a, b)}
  summary = [f"{lab}: {ok}/{len(rows)} correct, {k} kernels, {_fmt_bytes(by)} moved, {cs:.1f} s compiling, {rs:.2f} s warm runs"
             for s, lab in ((a, "A"), (b, "B")) for ok, k, by, cs, rs in [tot[s]]]
  if tot[a][1]: summary.append(f"B/A: kernels x{tot[b][1] / max(tot[a][1], 1):.2f}, bytes x{tot[b][2] / max(tot[a][2], 1):.2f}, "
                               f"compile x{tot[b][3] / max(tot[a][3], 1e-9):.2f}, warm run x{tot[b][4] / max(tot[a][4], 1e-9):.2f}")
  failures = [f"{lab} {'uopcheck-internal' if r.costs[s].internal else 'FAIL'} {r.case}: {r.costs[s].error}"
              for r in rows for s, lab in ((a, "A"), (b, "B")) if not r.costs[s].ok]
  data = {"a": a, "b": b, **(extra or {}),
          "rows": [{"case": r.case, "source": r.source, "a": asdict(r.costs[a]), "b": asdict(r.costs[b])} for r in rows]}
  return Result("compare_schedulers", "uopcheck compare-schedulers", data, tables=[table], preamble=[f"A = {a}", f"B = {b}"], summary=summary,
                sections=[Section("failures", failures)] if failures else [])

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
  from uopcheck.fuzz.findings_io import exit_code
  from uopcheck.runs import report
  from uopcheck.fuzz.graph_campaign import on_device
  with on_device(getattr(args, "device", "CPU")):   # --device: the cases built, run and read there (CPU: as before)
    rows = compare(args.a, args.b, args.graphs, args.corpus, args.fuzz, args.seed, args.profile,
                   progress=lambda s: print(s, flush=True) if not args.quiet else None)
  written = report(args, result(rows, args.a, args.b, {"seed": args.seed, "profile": args.profile}), "compare-schedulers")
  if written and (p := write_plot(rows, args.a, args.b, next(iter(written.values())).parent / "compare_schedulers.png")) is not None:
    print(f"plot: {p}")
  elif written: print("plot: skipped (matplotlib is not installed)")
  wrong = sum(not c.ok and not c.internal for r in rows for c in r.costs.values())
  return exit_code(new=wrong, internal=sum(c.internal for r in rows for c in r.costs.values()))
