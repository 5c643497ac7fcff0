"""Reports of rule coverage: ``report`` joins the combined data with every known rule (per rule: hits and tests; per
matcher: rules, fired, percent; the never-fired list); ``result`` makes it a ``Result`` for the terminal, JSON and
Markdown renderers; ``write_html`` is coverage.py's kind of index (totals, sortable columns, never-fired rules, command
and time) with one annotated page per tinygrad source file; ``write_lcov`` is the tracefile editors and coverage
services read. ``write_reports`` is the one entry both the pytest plugin and ``uopcheck coverage`` use."""
from __future__ import annotations
import html, os, pathlib, time
from collections import defaultdict
from typing import Callable
from uopcheck.atomic import atomic_write
from uopcheck.results import Column, Table, Section, Result, emit
from uopcheck.results.render import TERM, html_table, html_page
from uopcheck.rulecov.collect import rules, _tinygrad_dir

KINDS = ("term", "json", "md", "html", "lcov")   # html and lcov are rule coverage's own; term/json/md are the shared renderers
NEVER_SHOWN = 40

def report(data:dict, select:list[str]|None=None) -> dict:
  """Per rule: hits and tests; per matcher: rules, fired, percent; and the never-fired list."""
  rs = rules(select)
  for rid, r in rs.items(): r["hits"], r["tests"] = data["hits"].get(rid, 0), data["tests"].get(rid, [])
  per: dict[str, dict] = {}
  for r in rs.values():
    m = per.setdefault(r["matcher"], {"rules": 0, "fired": 0})
    m["rules"] += 1
    m["fired"] += r["hits"] > 0
  for m in per.values(): m["percent"] = round(100 * m["fired"] / m["rules"], 1) if m["rules"] else 0.0
  return {"matchers": per, "rules": rs, "never_fired": sorted(k for k, r in rs.items() if r["hits"] == 0)}

def _totals(rep:dict) -> tuple[int, int]:
  return sum(m["rules"] for m in rep["matchers"].values()), sum(m["fired"] for m in rep["matchers"].values())

COLUMNS = [Column("matcher", width=44), Column("rules", width=6, align=">"), Column("fired", width=6, align=">"),
           Column("% fired", width=8, align=">")]

def result(rep:dict, max_never:int=NEVER_SHOWN) -> Result:
  n, f = _totals(rep)
  rows = [{"matcher": k, "rules": m["rules"], "fired": m["fired"], "% fired": f"{m['percent']:.1f}%"} for k, m in sorted(rep["matchers"].items())]
  never = [f"{rid:36s} {rep['rules'][rid]['pattern'][:90]}" for rid in rep["never_fired"][:max_never]]
  if len(rep["never_fired"]) > max_never: never.append(f"... {len(rep['never_fired']) - max_never} more (see the JSON report)")
  return Result("rulecov.report", "uopcheck rule coverage", rep,
                tables=[Table(COLUMNS, rows, footer=[{"matcher": "TOTAL", "rules": n, "fired": f, "% fired": f"{100 * f / max(n, 1):.1f}%"}])],
                sections=[Section(f"never fired ({len(rep['never_fired'])}):", never)])

def term(rep:dict, max_never:int=NEVER_SHOWN) -> str: return TERM.render(result(rep, max_never))

def write_html(rep:dict, out_dir:str|os.PathLike, command:str="") -> pathlib.Path:
  """An index page like coverage.py's (totals, sortable columns, the never-fired rules, the command and the time), and one
  page per tinygrad source file with each rule line annotated by its hit count."""
  base = _tinygrad_dir()
  out = pathlib.Path(out_dir)
  out.mkdir(parents=True, exist_ok=True)
  by_file: dict[str, dict[int, dict]] = defaultdict(dict)
  for rid, r in rep["rules"].items(): by_file[r["file"]][r["line"]] = {**r, "id": rid}
  style = "<style>.hit{background:#c8f7c5} .miss{background:#f7c5c5}</style>"
  rows = []
  for f, lines in sorted(by_file.items()):
    page = f.replace("/", "_") + ".html"
    body = []
    for i, text in enumerate((base / f).read_text().splitlines(), 1):
      r = lines.get(i)
      cls = "" if r is None else (" class='hit'" if r["hits"] else " class='miss'")
      count = "" if r is None else str(r["hits"])
      title = "" if r is None else f" title='{html.escape(r['matcher'])}: {html.escape(', '.join(r['tests'][:10]) or 'no test')}'"
      body.append(f"<tr id='L{i}'{cls}{title}><td class='n'>{i}</td><td class='n'>{count}</td><td><pre>{html.escape(text)}</pre></td></tr>")
    atomic_write(out / page, html_page(f, f"{style}<h1>{html.escape(f)}</h1><p><a href='index.html'>index</a></p><table>{''.join(body)}</table>"))
    fired = sum(1 for r in lines.values() if r["hits"])
    rows.append([(f"<a href='{page}'>{html.escape(f)}</a>", f), len(lines), fired, (f"{100 * fired / len(lines):.1f}%", 100 * fired / len(lines))])
  mrows = [[html.escape(k), m["rules"], m["fired"], (f"{m['percent']}%", m["percent"])] for k, m in sorted(rep["matchers"].items())]
  n, f_ = _totals(rep)
  totals = [["TOTAL", n, f_, f"{100 * f_ / max(n, 1):.1f}%"]]
  never = [[(f"<a href='{rep['rules'][k]['file'].replace('/', '_')}.html#L{rep['rules'][k]['line']}'>{html.escape(k)}</a>", k),
            html.escape(rep["rules"][k]["matcher"]), f"<code>{html.escape(rep['rules'][k]['pattern'][:120])}</code>"] for k in rep["never_fired"]]
  when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
  return atomic_write(out / "index.html", html_page("uopcheck rule coverage",
                      f"<h1>uopcheck rule coverage</h1><p>{n} rules, {f_} fired ({100 * f_ / max(n, 1):.1f}%); "
                      f"created {when}{'; command: <code>' + html.escape(command) + '</code>' if command else ''}</p>"
                      f"<h2>matchers</h2>{html_table(['matcher', 'rules', 'fired', '%'], mrows, totals)}"
                      f"<h2>files</h2>{html_table(['file', 'rules', 'fired', '%'], rows, totals)}"
                      f"<h2>never fired ({len(never)})</h2>{html_table(['rule', 'matcher', 'pattern'], never)}"))

def write_lcov(rep:dict, path:str|os.PathLike) -> pathlib.Path:
  """LCOV tracefile (the format genhtml, editors' coverage gutters and coverage services read): each rule is a line of
  tinygrad's source, its hit count the DA count"""
  base = _tinygrad_dir()
  by_file: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
  for r in rep["rules"].values(): by_file[r["file"]][r["line"]] += r["hits"]
  out = ["TN:uopcheck-rule-coverage"]
  for f, per_line in sorted(by_file.items()):
    out += [f"SF:{base / f}"] + [f"DA:{line},{hits}" for line, hits in sorted(per_line.items())]
    out += [f"LF:{len(per_line)}", f"LH:{sum(1 for h in per_line.values() if h)}", "end_of_record"]
  return atomic_write(path, "\n".join(out) + "\n")

def write_reports(rep:dict, kinds, directory:str|os.PathLike, command:str, say:Callable[[str], None]=print) -> None:
  """every asked-for kind: the terminal table through ``say``; JSON/Markdown beside the data files; the HTML index and
  LCOV tracefile by their own writers"""
  d = pathlib.Path(directory)
  res = result(rep)
  if "term" in kinds: say(TERM.render(res))
  for kind, path in emit(res, [k for k in kinds if k in ("json", "md")], d).items(): say(f"{kind.upper()} report: {path}")
  if "html" in kinds: say(f"HTML report: {write_html(rep, d / 'html', command)}")
  if "lcov" in kinds: say(f"LCOV report: {write_lcov(rep, d / 'rulecov.lcov')}")
