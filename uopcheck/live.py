"""Something to watch while a campaign runs: ``status.json`` in the run directory from its first second, rewritten
(atomically) as the work goes -- phase, elapsed time, cases, rate, findings, restarts -- and ``status.html`` beside it, a
page that reloads itself every few seconds while the run is live and stops once it has finished (in the spirit of
HypoFuzz's dashboard, with no server: open the file). A CI job or a script polls the JSON; a person opens the page.
Standard library only."""
from __future__ import annotations
import html, json, os, pathlib, time
from uopcheck.atomic import atomic_write
from uopcheck.results.render import html_page, html_table

REFRESH_S = 3

class LiveStatus:
  """``update(**fields)`` as the work goes (written at most every ``every_s`` seconds, the first at once); ``close(state,
  **fields)`` at the end: ``finished``, ``interrupted`` or ``stopped``. A write that fails (the disk) never stops the work."""
  def __init__(self, run_dir:str|os.PathLike, command:str, every_s:float=1.0):
    self.dir, self.command, self.every_s = pathlib.Path(run_dir), command, every_s
    self.started, self.last = time.time(), -1e9
    self.fields: dict = {}
    self.update(phase="starting")

  def update(self, force:bool=False, **fields) -> None:
    self.fields.update(fields)
    if force or time.monotonic() - self.last >= self.every_s: self._write("running")

  def close(self, state:str="finished", **fields) -> None:
    self.fields.update(fields)
    self._write(state)

  def status(self, state:str) -> dict:
    now = time.time()
    return {"command": self.command, "state": state, "pid": os.getpid(), "started_utc": _utc(self.started), "updated_utc": _utc(now),
            "elapsed_s": round(now - self.started, 1), **self.fields}

  def _write(self, state:str) -> None:
    self.last = time.monotonic()
    s = self.status(state)
    try:
      atomic_write(self.dir / "status.json", json.dumps(s, indent=1, default=str) + "\n")
      atomic_write(self.dir / "status.html", page(s))
    except OSError: pass   # something to watch, never a reason to stop: the campaign's own files say what failed

def page(s:dict) -> str:
  """the status as a page; it reloads itself while the run is live"""
  rows = [[html.escape(str(k)), html.escape(json.dumps(v, default=str) if isinstance(v, (list, dict)) else str(v))] for k, v in s.items()]
  refresh = f"<meta http-equiv='refresh' content='{REFRESH_S}'>" if s["state"] == "running" else ""
  body = (f"{refresh}<h1>uopcheck {html.escape(s['command'])}: {html.escape(s['state'])}</h1>"
          f"<p>{'reloads every ' + str(REFRESH_S) + ' s' if refresh else 'finished: this page no longer reloads'}</p>" +
          html_table(["field", "value"], rows))
  return html_page(f"uopcheck {s['command']} ({s['state']})", body)

def _utc(t:float) -> str: return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
