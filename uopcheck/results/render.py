"""Renderers of a ``Result``: one protocol (``name``, ``suffix``, ``render(result) -> str``) and one implementation per
medium -- terminal text, JSON (the result's own payload), Markdown, HTML (sortable tables, no outside assets), and the
CI kinds of ``uopcheck.results.ci`` (JUnit, SARIF, GitHub annotations). ``emit``
prints the terminal kind and writes the others as ``<dir>/<result.name>.<suffix>``; every command's ``--report`` goes
through it. Standard library only."""
from __future__ import annotations
import argparse, html, json, os, pathlib, sys
from typing import Protocol, TextIO
from uopcheck.atomic import atomic_write
from uopcheck.results.model import Result, Table
from uopcheck.results.ci import JUnitRenderer, SarifRenderer, GithubRenderer

class Renderer(Protocol):
  name: str
  suffix: str   # "" for the terminal: printed, not written
  def render(self, result:Result) -> str: ...

def _cells(t:Table, row:dict) -> list[str]: return [c.text(row) for c in t.columns]

class TermRenderer:
  """fixed-width text; ``head`` and ``row`` let a command print a table's lines as its rows arrive (``tables=False`` then)"""
  name, suffix = "term", ""
  def row(self, t:Table, row:dict) -> str: return self._line([(c, c.text(row)) for c in t.columns if c.term])
  def head(self, t:Table) -> str: return self._line([(c, c.heading()) for c in t.columns if c.term])
  def _line(self, cells:list) -> str:
    return " ".join(f"{x:{c.align}{c.width}s}" if c.width and (i < len(cells) - 1 or c.align == ">") else x
                    for i, (c, x) in enumerate(cells)).rstrip()
  def table(self, t:Table) -> list[str]:
    head = self.head(t)
    lines = ([t.title] if t.title else []) + [head] + [self.row(t, r) for r in t.rows]
    return lines + (["-" * len(head)] + [self.row(t, r) for r in t.footer] if t.footer else [])
  def render(self, result:Result, tables:bool=True) -> str:
    lines = list(result.preamble)
    for t in result.tables if tables else []: lines += ([""] if lines else []) + self.table(t)
    if result.summary: lines += ([""] if lines else []) + result.summary
    for s in result.sections: lines += ["", s.title] + [f"  {x}" for x in s.lines]
    return "\n".join(lines)

class JsonRenderer:
  name, suffix = "json", "json"
  def render(self, result:Result) -> str: return json.dumps(result.data, indent=1, default=str)

def _md(x:str) -> str: return x.replace("|", "\\|").replace("\n", " ")

class MarkdownRenderer:
  name, suffix = "md", "md"
  def render(self, result:Result) -> str:
    lines = [f"# {result.title}", ""] + [f"- {x}" for x in result.preamble] + ([""] if result.preamble else [])
    for t in result.tables:
      if t.title: lines += [f"## {t.title}", ""]
      lines += ["| " + " | ".join(_md(c.heading()) for c in t.columns) + " |",
                "|" + "|".join("---:" if c.align == ">" else "---" for c in t.columns) + "|"]
      lines += ["| " + " | ".join(_md(x) for x in _cells(t, r)) + " |" for r in t.rows + t.footer] + [""]
    lines += [f"{x}  " for x in result.summary] + ([""] if result.summary else [])
    for s in result.sections: lines += [f"## {s.title}", ""] + [f"- {_md(x)}" for x in s.lines] + [""]
    return "\n".join(lines)

SORT_JS = ("<script>function srt(th){const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th),b=t.tBodies[0],"
           "d=th.dataset.d=th.dataset.d==='a'?'d':'a',k=r=>{const v=r.children[i].dataset.v??r.children[i].textContent;"
           "return isNaN(parseFloat(v))?v:parseFloat(v)};[...b.rows].sort((x,y)=>(k(x)>k(y)?1:k(x)<k(y)?-1:0)*(d==='a'?1:-1))"
           ".forEach(r=>b.appendChild(r))}</script>")
STYLE = ("<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:1px 6px;border:1px solid #ccc} "
         "th{cursor:pointer;background:#eee} pre{margin:0} .n{color:#888;text-align:right}</style>")

def html_table(head:list[str], rows:list[list], totals:list[list]|None=None) -> str:
  """a sortable table (click a header); cells are HTML, or (html, sort value) pairs; the totals rows stay below, unsorted"""
  th = "".join(f"<th onclick='srt(this)'>{h}</th>" for h in head)
  body = "".join("<tr>" + "".join(f"<td data-v='{html.escape(str(v[1]))}'>{v[0]}</td>" if isinstance(v, tuple) else f"<td>{v}</td>"
                                  for v in r) + "</tr>" for r in rows)
  foot = "".join("<tr class='total'>" + "".join(f"<td><b>{v}</b></td>" for v in t) + "</tr>" for t in totals or [])
  foot = f"<tfoot>{foot}</tfoot>" if foot else ""
  return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody>{foot}</table>"

def html_page(title:str, body:str) -> str:
  return f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{STYLE}{SORT_JS}</head><body>{body}</body></html>"

class HtmlRenderer:
  name, suffix = "html", "html"
  def render(self, result:Result) -> str:
    def cell(c, r:dict):
      v = r.get(c.key)
      return (html.escape(c.text(r)), v) if isinstance(v, (int, float)) and not isinstance(v, bool) else html.escape(c.text(r))
    parts = [f"<h1>{html.escape(result.title)}</h1>"] + [f"<p>{html.escape(x)}</p>" for x in result.preamble]
    for t in result.tables:
      if t.title: parts.append(f"<h2>{html.escape(t.title)}</h2>")
      parts.append(html_table([html.escape(c.heading()) for c in t.columns], [[cell(c, r) for c in t.columns] for r in t.rows],
                              [[html.escape(c.text(f)) for c in t.columns] for f in t.footer]))
    parts += [f"<p>{html.escape(x)}</p>" for x in result.summary]
    for s in result.sections:
      parts.append(f"<h2>{html.escape(s.title)}</h2><ul>" + "".join(f"<li><code>{html.escape(x)}</code></li>" for x in s.lines) + "</ul>")
    return html_page(result.title, "".join(parts))

TERM = TermRenderer()
RENDERERS: dict[str, Renderer] = {r.name: r for r in (TERM, JsonRenderer(), MarkdownRenderer(), HtmlRenderer(), JUnitRenderer(),
                                                       SarifRenderer(), GithubRenderer())}
DEFAULT_KINDS = ("term", "json", "md")
ALIASES = {"markdown": "md", "text": "term"}

def parse_kinds(text:str, extra:tuple[str, ...]=()) -> list[str]:
  """``--report term,json,md,html`` (comma separated, repeatable); ``extra``: kinds one command adds (coverage: lcov)"""
  kinds = [ALIASES.get(k.strip(), k.strip()) for k in text.split(",") if k.strip()]
  if bad := [k for k in kinds if k not in RENDERERS and k not in extra]:
    raise argparse.ArgumentTypeError(f"unknown report kind(s) {bad}; known: {', '.join([*RENDERERS, *extra])}")
  return kinds

def emit(result:Result, kinds, out_dir:str|os.PathLike|None, stream:TextIO|None=None, live:bool=False) -> dict[str, pathlib.Path]:
  """print the terminal report (``live``: its tables were printed row by row already), write every other kind under
  ``out_dir``; returns kind -> path written"""
  written = {}
  for k in dict.fromkeys(kinds):
    r = RENDERERS.get(k)
    if r is None: continue   # a kind the command renders itself (coverage's lcov)
    if not r.suffix:   # printed: the terminal report, GitHub's workflow commands
      text = TERM.render(result, tables=not live) if r is TERM else r.render(result)
      if text: print(("\n" if live and r is TERM else "") + text, file=stream or sys.stdout, flush=True)
      continue
    if out_dir is None: raise ValueError(f"report kind {k!r} needs a report directory")
    written[k] = atomic_write(pathlib.Path(out_dir) / f"{result.name}.{r.suffix}", r.render(result) + "\n")
  return written
