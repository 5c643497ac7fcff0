"""Reports of ``uopcheck rules verify``: the per-rule table as terminal text, JSON and HTML (rule source beside verdict).

The known list (``fuzz/rules_known.json``) holds refutations that were reviewed (confirmed by numpy, described in the
README); a refuted rule not on it is new, and ``rules verify`` exits 1."""
from __future__ import annotations
import html, json, os, pathlib
from uopcheck.atomic import atomic_write, atomic_write_json
from uopcheck.fuzz.rule_verify import RuleVerdict, summary

KNOWN = pathlib.Path(__file__).resolve().parent / "rules_known.json"

def load_known(path:str|os.PathLike=KNOWN) -> dict[str, str]:
  """rule key -> the reviewed note. A missing file is an empty list; a corrupt one is an error naming the file."""
  p = pathlib.Path(path)
  if not p.exists(): return {}
  try: d = json.loads(p.read_text())
  except (OSError, ValueError) as e: raise ValueError(f"{p}: corrupt known-rules file: {e}") from None
  if not isinstance(d, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in d.items()):
    raise ValueError(f"{p}: corrupt known-rules file: must map rule keys to notes")
  return d

def _cex_line(v:RuleVerdict) -> str:
  c = v.counterexample or {}
  reach = c.get("reachable") or {}
  return (f"{c.get('dtype')}: {c.get('before')} -> {c.get('after')} at {c.get('assignment')} (bounds/constants {c.get('constants')}): "
          f"{c.get('value_before')} vs {c.get('value_after')} [{c.get('reading')} reading]; "
          f"{'REACHABLE: ' if reach.get('reachable') else 'not shown reachable: '}{reach.get('result', '')}")

def format_table(verdicts:list[RuleVerdict], known:dict|None=None, show_na:bool=False) -> str:
  known = known or {}
  lines = [f"{'rule (file:line)':38s} {'verdict':8s} {'time':>6s} {'paths':>6s}  dtypes / why"]
  for v in verdicts:
    if v.verdict == "n/a" and not show_na: continue
    dts = ",".join(f"{k}:{x[0]}" for k, x in v.dtypes.items() if x != "proved") or "all proved"
    tag = " (known)" if v.verdict == "refuted" and v.rule in known else " (NEW)" if v.verdict == "refuted" else ""
    lines.append(f"{v.rule[9:]:38s} {v.verdict + tag:8s} {v.seconds:6.1f} {v.paths:6d}  {dts}  {v.why[:90] if v.verdict != 'proved' else ''}")
  s = summary(verdicts, known)
  lines.append(f"\n{s['integer_rules']} integer rules ({s['not_integer']} more are float/memory/graph rules, n/a): proved {s['proved']}, "
               f"refuted {s['refuted']} ({len(s['refuted_new'])} new), bounded {s['bounded']}, unknown {s['unknown']}; "
               f"decided for all inputs: {100 * s['decided_fraction']:.1f}%")
  for v in verdicts:
    if v.verdict == "refuted": lines.append(f"\nREFUTED {v.rule}: {v.source}\n  {_cex_line(v)}")
  return "\n".join(lines)

def write_json(verdicts:list[RuleVerdict], path:str|os.PathLike, known:dict|None=None) -> None:
  atomic_write_json(path, {"summary": summary(verdicts, known), "rules": [v.as_json() for v in verdicts]})

COLORS = {"proved": "#d4f7d4", "refuted": "#f7c6c6", "bounded": "#f7f0c6", "unknown": "#e6e6e6", "n/a": "#ffffff"}

def write_html(verdicts:list[RuleVerdict], path:str|os.PathLike, known:dict|None=None) -> None:
  s = summary(verdicts, known)
  rows = []
  for v in verdicts:
    detail = _cex_line(v) if v.verdict == "refuted" else v.why
    rows.append(f"<tr style='background:{COLORS[v.verdict]}'><td><code>{html.escape(v.rule)}</code></td><td><pre>{html.escape(v.source)}</pre></td>"
                f"<td><b>{v.verdict}</b></td><td>{html.escape(', '.join(f'{k}: {x}' for k, x in v.dtypes.items()))}</td>"
                f"<td>{v.seconds:.1f}s / {v.paths} paths</td><td>{html.escape(detail)}</td></tr>")
  doc = (f"<!doctype html><meta charset='utf-8'><title>uopcheck rules verify</title><h1>tinygrad integer rewrite rules</h1>"
         f"<p>{s['integer_rules']} integer rules: proved {s['proved']}, refuted {s['refuted']}, bounded {s['bounded']}, unknown {s['unknown']}; "
         f"decided for all inputs {100 * s['decided_fraction']:.1f}%</p><table border=1 cellspacing=0 cellpadding=3>"
         f"<tr><th>rule</th><th>source</th><th>verdict</th><th>dtypes</th><th>cost</th><th>counterexample / why</th></tr>{''.join(rows)}</table>")
  atomic_write(path, doc)
