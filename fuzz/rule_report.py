"""The result of ``uopcheck rules verify``: the per-rule table (rule source and counterexample beside each verdict in the
Markdown and HTML reports), its summary and the refutations, for the renderers of ``uopcheck.results``.

The known list (``fuzz/rules_known.json``) holds refutations that were reviewed (confirmed by numpy, described in the
README); a refuted rule not on it is new, and ``rules verify`` exits 1."""
from __future__ import annotations
import json, os, pathlib
from uopcheck.results import Column, Table, Section, Result
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

COLUMNS = [Column("rule (file:line)", width=38), Column("verdict", width=8), Column("time", width=6, align=">", fmt=".1f"),
           Column("paths", width=6, align=">"), Column("dtypes / why"), Column("source", term=False), Column("counterexample / why", term=False)]

def result(verdicts:list[RuleVerdict], known:dict|None=None, show_na:bool=False) -> Result:
  """the per-rule table (n/a rules only with ``show_na``), the summary line, and one section per refutation"""
  known = known or {}
  rows = []
  for v in verdicts:
    if v.verdict == "n/a" and not show_na: continue
    dts = ",".join(f"{k}:{x[0]}" for k, x in v.dtypes.items() if x != "proved") or "all proved"
    tag = " (known)" if v.verdict == "refuted" and v.rule in known else " (NEW)" if v.verdict == "refuted" else ""
    rows.append({"rule (file:line)": v.rule[9:], "verdict": v.verdict + tag, "time": v.seconds, "paths": v.paths,
                 "dtypes / why": f"{dts}  {v.why[:90] if v.verdict != 'proved' else ''}", "source": v.source,
                 "counterexample / why": _cex_line(v) if v.verdict == "refuted" else v.why})
  s = summary(verdicts, known)
  line = (f"{s['integer_rules']} integer rules ({s['not_integer']} more are float/memory/graph rules, n/a): proved {s['proved']}, "
          f"refuted {s['refuted']} ({len(s['refuted_new'])} new), bounded {s['bounded']}, unknown {s['unknown']}; "
          f"decided for all inputs: {100 * s['decided_fraction']:.1f}%")
  return Result("rules_verify", "uopcheck rules verify: tinygrad's integer rewrite rules", {"summary": s, "rules": [v.as_json() for v in verdicts]},
                tables=[Table(COLUMNS, rows)], summary=[line],
                sections=[Section(f"REFUTED {v.rule}: {v.source}", [_cex_line(v)]) for v in verdicts if v.verdict == "refuted"])
