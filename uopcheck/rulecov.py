"""Rule coverage: which PatternMatcher rules fired during a run, and which never did (like coverage.py, for rules).

Collection uses tinygrad's own match statistics: with TRACK_MATCH_STATS=1 set *before tinygrad is imported*,
every PatternMatcher is a TrackedPatternMatcher and ``tinygrad.uop.ops.match_stats[upat][0]`` counts its matches.
A rule's stable id is its file:line (``UPat.location``) plus the module and name of the matcher that defines it.

As a pytest plugin (always loaded through pyproject's addopts, inert unless asked): ``pytest --rule-cov[=MATCHERS]
[--rule-cov-report=term|json|html|lcov]``, under pytest-xdist too (``-n 2``: each worker leaves its data, the controller combines).
Each process that runs with ``UOPCHECK_RULECOV_DIR`` set writes a data file there at exit;
``combine`` merges them (campaign workers included), and ``uopcheck coverage -- CMD`` wraps a command."""
from __future__ import annotations
import atexit, html, importlib, json, os, pathlib, sys
from collections import defaultdict

MODULES = ["tinygrad.uop.symbolic", "tinygrad.uop.divandmod", "tinygrad.uop.weak", "tinygrad.schedule.rangeify", "tinygrad.schedule.indexing",
           "tinygrad.codegen", "tinygrad.codegen.simplify", "tinygrad.codegen.late.devectorizer" , "tinygrad.codegen.late.expander",
           "tinygrad.codegen.decomp.op", "tinygrad.codegen.decomp.dtype", "tinygrad.codegen.late.linearizer", "tinygrad.codegen.opt.postrange"]

def enable() -> None:
  """Turn on tinygrad's match statistics; must happen before tinygrad is imported."""
  if "tinygrad.uop.ops" in sys.modules and not os.environ.get("TRACK_MATCH_STATS"):
    raise RuntimeError("rule coverage must be enabled before tinygrad is imported (TRACK_MATCH_STATS is read at import)")
  os.environ["TRACK_MATCH_STATS"] = "1"
  os.environ.setdefault("PRINT_MATCH_STATS", "0")
  # tinygrad compiles a many-kernel linear in spawned worker processes that run with TRACK_MATCH_STATS=0
  # (engine/worker.py), so the codegen rules they fire would be lost: compile in-process while measuring
  os.environ.setdefault("PARALLEL", "0")

def rules(select:list[str]|None=None) -> dict[str, dict]:
  """Every rule of the known matchers: id -> {matcher, file, line, pattern}; ``select`` filters by substring."""
  import tinygrad
  base = pathlib.Path(tinygrad.__file__).parent
  out: dict[str, dict] = {}
  for modname in MODULES:
    try: mod = importlib.import_module(modname)
    except ImportError: continue
    if mod.__file__ is None: continue
    mfile = str(pathlib.Path(mod.__file__).resolve())
    pms = [(n, o) for n, o in vars(mod).items() if hasattr(o, "patterns") and hasattr(o, "pdict")]
    for name, obj in sorted(pms, key=lambda x: (len(x[1].patterns), x[0])):  # the smallest matcher holding a rule names it
      matcher = f"{modname.replace('tinygrad.', '')}.{name}"
      if select and not any(s in matcher for s in select): continue
      for p, _ in obj.patterns:
        f, line = p.location
        if str(pathlib.Path(f).resolve()) != mfile: continue  # a rule belongs to the module that defines it
        rid = f"{pathlib.Path(f).resolve().relative_to(base)}:{line}"
        out.setdefault(rid, {"matcher": matcher, "file": str(pathlib.Path(f).resolve().relative_to(base)), "line": line,
                             "pattern": _pattern_text(f, line)})
  return out

def _pattern_text(f:str, line:int) -> str:
  try: return pathlib.Path(f).read_text().splitlines()[line - 1].strip()[:160]
  except (OSError, IndexError): return ""

def hits() -> dict[str, int]:
  """Matches per rule id so far in this process."""
  import tinygrad
  from tinygrad.uop import ops
  base = pathlib.Path(tinygrad.__file__).parent
  out: dict[str, int] = defaultdict(int)
  for p, v in list(ops.match_stats.items()):
    try: rid = f"{pathlib.Path(p.location[0]).resolve().relative_to(base)}:{p.location[1]}"
    except ValueError: continue
    out[rid] += int(v[0])
  return dict(out)

def write_data(directory:str|os.PathLike, tests:dict[str, set[str]]|None=None) -> pathlib.Path:
  d = pathlib.Path(directory); d.mkdir(parents=True, exist_ok=True)
  from uopcheck.atomic import atomic_write_json
  return atomic_write_json(d / f"rulecov.{os.getpid()}.json", {"hits": hits(), "tests": {k: sorted(v) for k, v in (tests or {}).items()}}, None)

def data_files(directory:str|os.PathLike) -> list[pathlib.Path]:
  """the per-process data files (``rulecov.<pid>.json``) -- not the report (``rulecov.report.json``) written beside them"""
  return sorted(f for f in pathlib.Path(directory).glob("rulecov.*.json") if f.name.split(".")[1].isdigit())

def combine(directory:str|os.PathLike) -> dict:
  """Merge every process's data file: hits add up, the tests that hit a rule are united."""
  tot: dict[str, int] = defaultdict(int); tests: dict[str, set[str]] = defaultdict(set)
  for f in data_files(directory):
    try: d = json.loads(f.read_text())
    except (OSError, ValueError) as e: raise ValueError(f"{f.name}: corrupt rule-coverage data file: {e}") from None
    for k, v in d["hits"].items(): tot[k] += v
    for k, v in d.get("tests", {}).items(): tests[k].update(v)
  return {"hits": dict(tot), "tests": {k: sorted(v) for k, v in tests.items()}}

def report(data:dict, select:list[str]|None=None) -> dict:
  """Per rule: hits and tests; per matcher: rules, fired, percent; and the never-fired list."""
  rs = rules(select)
  for rid, r in rs.items(): r["hits"], r["tests"] = data["hits"].get(rid, 0), data["tests"].get(rid, [])
  per: dict[str, dict] = {}
  for r in rs.values():
    m = per.setdefault(r["matcher"], {"rules": 0, "fired": 0})
    m["rules"] += 1; m["fired"] += r["hits"] > 0
  for m in per.values(): m["percent"] = round(100 * m["fired"] / m["rules"], 1) if m["rules"] else 0.0
  return {"matchers": per, "rules": rs, "never_fired": sorted(k for k, r in rs.items() if r["hits"] == 0)}

def term(rep:dict, max_never:int=40) -> str:
  lines = [f"{'matcher':44s} {'rules':>6s} {'fired':>6s} {'% fired':>8s}"]
  for name, m in sorted(rep["matchers"].items()): lines.append(f"{name:44s} {m['rules']:6d} {m['fired']:6d} {m['percent']:7.1f}%")
  n, f = sum(m["rules"] for m in rep["matchers"].values()), sum(m["fired"] for m in rep["matchers"].values())
  lines.append(f"{'TOTAL':44s} {n:6d} {f:6d} {100 * f / max(n, 1):7.1f}%")
  lines.append(f"\nnever fired ({len(rep['never_fired'])}):")
  for rid in rep["never_fired"][:max_never]: lines.append(f"  {rid:36s} {rep['rules'][rid]['pattern'][:90]}")
  if len(rep["never_fired"]) > max_never: lines.append(f"  ... {len(rep['never_fired']) - max_never} more (see the JSON report)")
  return "\n".join(lines)

_SORT_JS = ("<script>function srt(th){const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th),b=t.tBodies[0],"
            "d=th.dataset.d=th.dataset.d==='a'?'d':'a',k=r=>{const v=r.children[i].dataset.v??r.children[i].textContent;"
            "return isNaN(parseFloat(v))?v:parseFloat(v)};[...b.rows].sort((x,y)=>(k(x)>k(y)?1:k(x)<k(y)?-1:0)*(d==='a'?1:-1))"
            ".forEach(r=>b.appendChild(r))}</script>")

def _table(head:list[str], rows:list[list], total:list|None=None) -> str:
  """a sortable table (click a header); the totals row stays below, outside the sorted body"""
  th = "".join(f"<th onclick='srt(this)' style='cursor:pointer'>{h}</th>" for h in head)
  body = "".join("<tr>" + "".join(f"<td data-v='{html.escape(str(v[1]))}'>{v[0]}</td>" if isinstance(v, tuple) else f"<td>{v}</td>"
                                  for v in r) + "</tr>" for r in rows)
  foot = "<tfoot><tr class='total'>" + "".join(f"<td><b>{v}</b></td>" for v in total) + "</tr></tfoot>" if total else ""
  return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody>{foot}</table>"

def write_html(rep:dict, out_dir:str|os.PathLike, command:str="") -> pathlib.Path:
  """An index page like coverage.py's (totals, sortable columns, the never-fired rules, the command and the time), and one
  page per tinygrad source file with each rule line annotated by its hit count."""
  import time
  import tinygrad
  base = pathlib.Path(tinygrad.__file__).parent
  out = pathlib.Path(out_dir); out.mkdir(parents=True, exist_ok=True)
  by_file: dict[str, dict[int, dict]] = defaultdict(dict)
  for rid, r in rep["rules"].items(): by_file[r["file"]][r["line"]] = {**r, "id": rid}
  style = ("<style>body{font-family:sans-serif} pre{margin:0} .hit{background:#c8f7c5} .miss{background:#f7c5c5} "
           "td{padding:0 6px} .n{color:#888;text-align:right}</style>")
  rows = []
  for f, lines in sorted(by_file.items()):
    page = f.replace("/", "_") + ".html"
    src = (base / f).read_text().splitlines()
    body = []
    for i, text in enumerate(src, 1):
      r = lines.get(i)
      cls = "" if r is None else (" class='hit'" if r["hits"] else " class='miss'")
      count = "" if r is None else str(r["hits"])
      title = "" if r is None else f" title='{html.escape(r['matcher'])}: {html.escape(', '.join(r['tests'][:10]) or 'no test')}'"
      body.append(f"<tr id='L{i}'{cls}{title}><td class='n'>{i}</td><td class='n'>{count}</td><td><pre>{html.escape(text)}</pre></td></tr>")
    (out / page).write_text(f"<html><head><meta charset='utf-8'><title>{f}</title>{style}</head><body><h1>{f}</h1>"
                            f"<p><a href='index.html'>index</a></p><table>{''.join(body)}</table></body></html>")
    fired = sum(1 for r in lines.values() if r["hits"])
    rows.append([(f"<a href='{page}'>{f}</a>", f), len(lines), fired, (f"{100 * fired / len(lines):.1f}%", 100 * fired / len(lines))])
  mrows = [[html.escape(k), m["rules"], m["fired"], (f"{m['percent']}%", m["percent"])] for k, m in sorted(rep["matchers"].items())]
  n, f_ = sum(m["rules"] for m in rep["matchers"].values()), sum(m["fired"] for m in rep["matchers"].values())
  total = ["TOTAL", n, f_, f"{100 * f_ / max(n, 1):.1f}%"]
  never = [[(f"<a href='{rep['rules'][k]['file'].replace('/', '_')}.html#L{rep['rules'][k]['line']}'>{html.escape(k)}</a>", k),
            html.escape(rep["rules"][k]["matcher"]), f"<code>{html.escape(rep['rules'][k]['pattern'][:120])}</code>"] for k in rep["never_fired"]]
  when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
  (out / "index.html").write_text(f"<html><head><meta charset='utf-8'><title>uopcheck rule coverage</title>{style}{_SORT_JS}</head><body>"
                                  f"<h1>uopcheck rule coverage</h1><p>{n} rules, {f_} fired ({100 * f_ / max(n, 1):.1f}%); "
                                  f"created {when}{'; command: <code>' + html.escape(command) + '</code>' if command else ''}</p>"
                                  f"<h2>matchers</h2>{_table(['matcher', 'rules', 'fired', '%'], mrows, total)}"
                                  f"<h2>files</h2>{_table(['file', 'rules', 'fired', '%'], rows, total)}"
                                  f"<h2>never fired ({len(never)})</h2>{_table(['rule', 'matcher', 'pattern'], never)}</body></html>")
  return out / "index.html"

def write_lcov(rep:dict, path:str|os.PathLike) -> pathlib.Path:
  """LCOV tracefile (the format genhtml, editors' coverage gutters and coverage services read): each rule is a line of
  tinygrad's source, its hit count the DA count"""
  import tinygrad
  base = pathlib.Path(tinygrad.__file__).parent
  by_file: dict[str, list[tuple[int, int]]] = defaultdict(list)
  for r in rep["rules"].values(): by_file[r["file"]].append((r["line"], r["hits"]))
  out = ["TN:uopcheck-rule-coverage"]
  for f, ls in sorted(by_file.items()):
    per_line: dict[int, int] = defaultdict(int)
    for line, hits in ls: per_line[line] += hits
    out += [f"SF:{base / f}"] + [f"DA:{line},{hits}" for line, hits in sorted(per_line.items())]
    out += [f"LF:{len(per_line)}", f"LH:{sum(1 for h in per_line.values() if h)}", "end_of_record"]
  p = pathlib.Path(path)
  p.parent.mkdir(parents=True, exist_ok=True)
  p.write_text("\n".join(out) + "\n")
  return p

# ** pytest plugin **

def pytest_addoption(parser):
  g = parser.getgroup("uopcheck rule coverage")
  g.addoption("--rule-cov", nargs="?", const="all", default=None, help="collect PatternMatcher rule coverage (optionally: matchers, comma separated)")
  g.addoption("--rule-cov-report", action="append", default=None, choices=["term", "json", "html", "lcov"],
                help="report kinds (default term); lcov writes rulecov.lcov for editors and coverage services")
  g.addoption("--rule-cov-dir", default="reports/rulecov", help="where data files and reports go")

def pytest_load_initial_conftests(early_config, parser, args):
  if any(a.startswith("--rule-cov") for a in args): enable()

_TESTS: dict[str, set[str]] = defaultdict(set)

def _xdist_worker(config) -> bool: return hasattr(config, "workerinput")

def pytest_sessionstart(session):
  """a run starts from no data, as coverage.py's does: files an earlier run left in the directory would add up. Under
  pytest-xdist only the controller clears; each worker leaves its own data file at its end (pytest_sessionfinish)."""
  if not session.config.getoption("--rule-cov") or _xdist_worker(session.config): return
  for f in data_files(session.config.getoption("--rule-cov-dir")): f.unlink()

def pytest_sessionfinish(session):
  if session.config.getoption("--rule-cov") and _xdist_worker(session.config): write_data(session.config.getoption("--rule-cov-dir"), _TESTS)

def pytest_runtest_call(item):
  if not item.config.getoption("--rule-cov"): return
  before = hits()
  item._rulecov_before = before

def pytest_runtest_teardown(item):
  before = getattr(item, "_rulecov_before", None)
  if before is None: return
  for rid, n in hits().items():
    if n > before.get(rid, 0): _TESTS[rid].add(item.nodeid)

def pytest_terminal_summary(terminalreporter, exitstatus, config):
  sel = config.getoption("--rule-cov")
  if not sel or _xdist_worker(config): return
  d = config.getoption("--rule-cov-dir")
  write_data(d, _TESTS)   # this process's own (under xdist the workers' files are already there: they end before the summary)
  rep = report(combine(d), None if sel == "all" else sel.split(","))
  kinds = config.getoption("--rule-cov-report") or ["term"]
  tr = terminalreporter
  tr.section("uopcheck rule coverage")
  if "term" in kinds: tr.write_line(term(rep))
  if "json" in kinds:
    (pathlib.Path(d) / "rulecov.report.json").write_text(json.dumps(rep, indent=1)); tr.write_line(f"JSON report: {d}/rulecov.report.json")
  if "html" in kinds: tr.write_line(f"HTML report: {write_html(rep, pathlib.Path(d) / 'html', 'pytest ' + ' '.join(sys.argv[1:]))}")
  if "lcov" in kinds: tr.write_line(f"LCOV report: {write_lcov(rep, pathlib.Path(d) / 'rulecov.lcov')}")

# processes started with UOPCHECK_RULECOV_DIR (campaign workers, `uopcheck coverage -- CMD`) leave their data at exit
if os.environ.get("UOPCHECK_RULECOV_DIR") and os.environ.get("TRACK_MATCH_STATS"):
  atexit.register(lambda: "tinygrad.uop.ops" in sys.modules and write_data(os.environ["UOPCHECK_RULECOV_DIR"]))
