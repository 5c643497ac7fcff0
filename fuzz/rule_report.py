"""The result of ``uopcheck rules verify``: the per-rule table (rule source and counterexample beside each verdict in the
Markdown and HTML reports), its summary and the refutations, for the renderers of ``uopcheck.results``.

The known list (``fuzz/rules_known.json``) holds refutations that were reviewed (confirmed by numpy, described in the
README); a refuted rule not on it is new, and ``rules verify`` exits 1."""
from __future__ import annotations
import json, os, pathlib
from uopcheck.results import Column, Table, Section, Result, Outcome, at_source
from uopcheck.fuzz.rule_verify import RuleVerdict, summary, refutation_keys, space_labels

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
  if c.get("reading") == "ieee": return _float_cex_line(c.get("dtype", ""), c)
  reach = c.get("reachable") or {}
  return (f"{c.get('dtype')}: {c.get('before')} -> {c.get('after')} at {c.get('assignment')} (bounds/constants {c.get('constants')}): "
          f"{c.get('value_before')} vs {c.get('value_after')} [{c.get('reading')} reading]; "
          f"{'REACHABLE: ' if reach.get('reachable') else 'not shown reachable: '}{reach.get('result', '')}")

def _float_cex_line(dtype:str, c:dict) -> str:
  lib = c.get("liberty")
  zs = " (only the sign of a zero)" if c.get("zero_sign_only") else ""
  return (f"{dtype}: {_one_line(c.get('before'))} -> {_one_line(c.get('after'))} at {c.get('assignment')} (constants {c.get('constants')}): "
          f"{c.get('value_before')} vs {c.get('value_after')}{zs} [IEEE]; fails at {', '.join(c.get('classes') or []) or '?'}" +
          (f"; tinygrad's comment \"{lib['states']}\" ({lib['assumes']}): {lib['verdict']}"
           f"{' at ' + str(lib['counterexample']) if lib.get('counterexample') else ''}" if lib else ""))

def _bounded_cex_line(v:RuleVerdict) -> str:
  c = v.bounded_counterexample or {}
  return (f"{c.get('dtype')}: {_one_line(c.get('before'))} -> {_one_line(c.get('after'))} at {c.get('assignment')}: "
          f"{c.get('value_before')} -> {c.get('value_after')}{' (only the sign of a zero)' if c.get('zero_sign_only') else ''} "
          f"({c.get('reading')} reading; {c.get('confirm')})")

def _one_line(x) -> str: return " ".join(str(x).split())[:160]

COLUMNS = [Column("rule (file:line)", width=38), Column("verdict", width=20), Column("int", width=8), Column("float", width=8),
           Column("time", width=6, align=">", fmt=".1f"), Column("paths", width=6, align=">"), Column("dtypes / why"),
           Column("source", term=False), Column("counterexample / why", term=False)]

LETTER = {"proved": "P", "refuted": "R", "liberty": "L", "bounded": "B", "unknown": "U", "n/a": "."}

def grid(verdicts:list[RuleVerdict]) -> Table:
  """rule x dtype: one letter per instantiation (P proved, R refuted, L sound only under tinygrad's stated liberty,
  B bounded, U unknown, . no instance of that dtype)"""
  from uopcheck.fuzz.rule_verify import MAIN_DTYPES
  from uopcheck.fuzz.float_verify import FLOAT_DTYPES
  names = [d.name for d in MAIN_DTYPES + FLOAT_DTYPES]
  short = {n: n.replace("unsigned ", "u").replace("signed ", "s").replace("__", "") for n in names}
  cols = [Column("rule", width=30)] + [Column(short[n], width=max(2, len(short[n])), align=">") for n in names]
  rows = [{"rule": v.rule[9:], **{short[n]: LETTER.get((v.dtypes or v.bounded_dtypes).get(n, "n/a"), "?") for n in names}}
          for v in verdicts if v.verdict != "n/a"]
  return Table(cols, rows, title="rule x dtype (P proved, R refuted, L liberty, B bounded, U unknown, . none)")

def result(verdicts:list[RuleVerdict], known:dict|None=None, show_na:bool=False) -> Result:
  """the per-rule table (n/a rules only with ``show_na``), the rule x dtype grid, the summary lines, and one section per
  refutation (integer and float apart)"""
  known = known or {}
  rows = []
  for v in verdicts:
    if v.verdict == "n/a" and not show_na: continue
    dts = ",".join(f"{k}:{x[0]}" for k, x in (v.dtypes or v.bounded_dtypes).items() if x != "proved") or ("all proved" if v.dtypes else "")
    tag = " (NEW)" if new_refutations(v, known) else " (known)" if v.verdict == "refuted" else ""
    kind = f"{v.verdict}({space_labels(v.bounded_spaces)}{'' if v.bounded_complete else ', capped'})" if v.bounded_verdict == "bounded" else v.verdict
    rows.append({"rule (file:line)": v.rule[9:], "verdict": kind + tag, "int": v.int_verdict, "float": v.float_verdict,
                 "time": v.seconds, "paths": v.paths, "dtypes / why": f"{dts}  {v.why[:90] if v.verdict != 'proved' else ''}",
                 "source": v.source, "counterexample / why": _cex_line(v) if v.verdict == "refuted" else v.why})
  s = summary(verdicts, known)
  lines = [f"{s['integer_rules']} integer rules: proved {s['proved']}, refuted {s['refuted']}, bounded {s['bounded']}, unknown {s['unknown']}; "
           f"decided for all inputs: {100 * s['decided_fraction']:.1f}% of rules, {100 * s['integer_instantiations_decided']:.1f}% of "
           f"{s['integer_instantiations']} rule x dtype instantiations",
           f"{s['float_rules']} float rules (IEEE, float16/bfloat16/float32/float64): proved {s['float_proved']}, refuted {s['float_refuted']}, "
           f"sound only under tinygrad's stated liberty {s['float_liberty']}, bounded {s['float_bounded']}, unknown {s['float_unknown']}; decided: "
           f"{100 * s['float_decided_fraction']:.1f}% of rules, {100 * s['float_instantiations_decided']:.1f}% of {s['float_instantiations']} "
           f"rule x dtype instantiations",
           f"{s['bounded_rules']} rules with no integer or float instance (Invalid gates, memory, ranges, reductions, stacks, weak commits), "
           f"model-checked up to {s['bound']}: bounded {s['bounded_bounded']}, refuted {s['bounded_refuted']}, unknown {s['bounded_unknown']}",
           f"{len(s['no_verdict'])} rules n/a: " + "; ".join(f"{k[9:]} ({w})" for k, w in s["no_verdict_why"].items()),
           f"{len(s['refuted_new'])} refutations new (not on {KNOWN.name})"]
  sections = [Section(f"REFUTED {v.rule}: {v.source}", [_cex_line(v)]) for v in verdicts if v.int_verdict == "refuted"]
  sections += [Section(f"REFUTED under IEEE {v.rule}: {v.source}", [_float_cex_line(d, c) for d, c in v.float_counterexamples.items()])
               for v in verdicts if v.float_verdict in ("refuted", "liberty")]
  sections += [Section(f"REFUTED by bounded model checking {v.rule}: {v.source}", [_bounded_cex_line(v)])
               for v in verdicts if v.bounded_verdict == "refuted"]
  return Result("rules_verify", "uopcheck rules verify: tinygrad's rewrite rules, integer and IEEE float",
                {"summary": s, "rules": [v.as_json() for v in verdicts]}, tables=[Table(COLUMNS, rows), grid(verdicts)], summary=lines,
                sections=sections, outcomes=[outcome(v, known) for v in verdicts if v.verdict != "n/a"])

def new_refutations(v:RuleVerdict, known:dict) -> set[str]:
  """the parts of a rule's verdict (integer, float, bounded) refuted and not on the reviewed list"""
  return {part for part, key in refutation_keys(v).items() if key not in known}

def outcome(v:RuleVerdict, known:dict) -> Outcome:
  """a rule for the CI kinds, at its tinygrad source line: a new refutation fails, a known one or an undecided rule is
  skipped (saying which), a proved one passes"""
  parts = new_refutations(v, known)
  new = ([f"integer refutation: {_cex_line(v)}"] if "integer" in parts else []) + \
        ([f"IEEE float refutation: {'; '.join(_float_cex_line(d, c) for d, c in v.float_counterexamples.items())}"] if "float" in parts else []) + \
        ([f"bounded model checking refutation: {_bounded_cex_line(v)}"] if "bounded" in parts else [])
  if new: status, msg = "fail", "\n".join(new) + f"\nthe rule: {v.source}"
  elif v.verdict == "refuted": status, msg = "skip", "known refutation (fuzz/rules_known.json)"
  elif v.verdict in ("proved", "liberty"): status, msg = "pass", v.verdict
  else: status, msg = "skip", f"not decided ({v.verdict}): {v.why}"
  return Outcome(v.rule, status, msg, *at_source(v.rule), group="rules verify")
