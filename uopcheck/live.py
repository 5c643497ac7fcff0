"""Something to watch while a campaign runs: ``status.json`` in the run directory from its first second, rewritten
(atomically) as the work goes -- phase, elapsed time, cases, rate, findings, restarts -- and ``status.html`` beside it, a
page that reloads itself every few seconds while the run is live and stops once it has finished (in the spirit of
HypoFuzz's dashboard, with no server: open the file). A CI job or a script polls the JSON; a person opens the page.
Standard library only."""
from __future__ import annotations
from typing import Any
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
    self.rules: NewRules|None = None   # see watch_rules
    self._fired: Any = None   # an object with new(), or None (see watch_rules)
    self.update(phase="starting")

  def watch_rules(self, tracked:bool, fired=None) -> NewRules:
    """Show the rules newly fired (``NewRules``; ``tracked``: tinygrad counts rule matches in this run). ``fired``: an
    object whose ``new()`` gives the rule ids first fired since its last call (``rulecov.collect.FiredRules``), read at
    each write (a one-process campaign); without it the caller feeds ``self.rules`` (a supervisor, with what its workers send)."""
    self.rules, self._fired = NewRules(tracked), fired if tracked else None
    return self.rules

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
    if self.rules is not None:
      if self._fired is not None: self.rules.add(self._fired.new())
      self.fields.update(self.rules.fields())
    s = self.status(state)
    try:
      atomic_write(self.dir / "status.json", json.dumps(s, indent=1, default=str) + "\n")
      atomic_write(self.dir / "status.html", page(s))
    except OSError: pass   # something to watch, never a reason to stop: the campaign's own files say what failed

NOT_TRACKED = "not tracked (run the campaign under `uopcheck coverage -- uopcheck fuzz ...` to see rules fire)"

class NewRules:
  """The rules a run has fired so far, each with the second it first fired, for the live status (``fields()``): how many,
  and the newest ten -- the campaign's "new coverage" events. Fed rule ids from ``rulecov.collect.FiredRules`` (in the
  process, or sent by campaign workers); ``tracked`` False when tinygrad does not count matches in this run."""
  def __init__(self, tracked:bool) -> None:
    self.tracked, self.started = tracked, time.monotonic()
    self.first: dict[str, float] = {}

  def add(self, rule_ids) -> None:
    for r in rule_ids: self.first.setdefault(r, round(time.monotonic() - self.started, 1))

  def fields(self) -> dict:
    if not self.tracked: return {"rules_fired": NOT_TRACKED}
    return {"rules_fired": len(self.first), "rules_newest": [{"rule": r, "first_fired_s": t} for r, t in list(self.first.items())[-10:]]}

def page(s:dict) -> str:
  """the status as a page; it reloads itself while the run is live"""
  rows = [[html.escape(str(k)), html.escape(json.dumps(v, default=str) if isinstance(v, (list, dict)) else str(v))] for k, v in s.items()]
  refresh = f"<meta http-equiv='refresh' content='{REFRESH_S}'>" if s["state"] == "running" else ""
  body = (f"{refresh}<h1>uopcheck {html.escape(s['command'])}: {html.escape(s['state'])}</h1>"
          f"<p>{'reloads every ' + str(REFRESH_S) + ' s' if refresh else 'finished: this page no longer reloads'}</p>" +
          html_table(["field", "value"], rows))
  return html_page(f"uopcheck {s['command']} ({s['state']})", body)

def _utc(t:float) -> str: return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
