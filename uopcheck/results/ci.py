"""The CI report kinds of a ``Result``, from its ``outcomes``: JUnit XML (every CI shows it as test results), SARIF 2.1.0
(GitHub code scanning and other viewers: a failure at its file and line) and GitHub workflow commands (``::error
file=...,line=...::`` lines that GitHub Actions turns into annotations on the diff; printed, as Actions reads them from
the log). A new finding or refuted rule is a failure; a known one or an undecided rule is skipped; uopcheck's own
failure is an error, kept apart. Standard library only."""
from __future__ import annotations
import json, xml.etree.ElementTree as ET
from uopcheck.results.model import Result, Outcome

class JUnitRenderer:
  name, suffix = "junit", "junit.xml"
  def render(self, result:Result) -> str:
    out = result.outcomes
    def count(s):
      return str(sum(o.status == s for o in out))
    suites = ET.Element("testsuites", name="uopcheck")
    suite = ET.SubElement(suites, "testsuite", name=result.name, tests=str(len(out)), failures=count("fail"), errors=count("error"),
                          skipped=count("skip"))
    for o in out:
      attrs = {"name": o.name, "classname": o.group or result.name, **({"file": o.file} if o.file else {}),
               **({"line": str(o.line)} if o.line else {})}
      case = ET.SubElement(suite, "testcase", attrs)
      tag = {"fail": "failure", "error": "error", "skip": "skipped"}.get(o.status)
      if tag is not None:
        el = ET.SubElement(case, tag, message=o.message.splitlines()[0][:500] if o.message else o.status)
        if tag != "skipped": el.text = o.message
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)

def _location(o:Outcome) -> list[dict]:
  if not o.file: return []
  phys: dict = {"artifactLocation": {"uri": o.file}}
  if o.line: phys["region"] = {"startLine": o.line}
  return [{"physicalLocation": phys}]

class SarifRenderer:
  """failures as ``error`` results, uopcheck-internal errors as ``warning`` (not tinygrad's), each at its location"""
  name, suffix = "sarif", "sarif"
  def render(self, result:Result) -> str:
    shown = [o for o in result.outcomes if o.status in ("fail", "error")]
    rules = sorted({o.group or result.name for o in shown})
    return json.dumps({"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
                       "runs": [{"tool": {"driver": {"name": "uopcheck", "rules": [{"id": r} for r in rules]}},
                                 "results": [{"ruleId": o.group or result.name, "level": "error" if o.status == "fail" else "warning",
                                              "message": {"text": f"{o.name}: {o.message}" if o.message else o.name},
                                              "locations": _location(o)} for o in shown]}]}, indent=1)

def _escape(text:str, prop:bool=False) -> str:
  """GitHub's workflow-command escaping (data: %, CR, LF; a property also : and ,)"""
  text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
  return text.replace(":", "%3A").replace(",", "%2C") if prop else text

class GithubRenderer:
  """one ``::error`` per failure and one ``::warning`` per uopcheck-internal error, printed"""
  name, suffix = "github", ""
  def render(self, result:Result) -> str:
    lines = []
    for o in result.outcomes:
      if o.status not in ("fail", "error"): continue
      props = ([f"file={_escape(o.file, True)}"] if o.file else []) + ([f"line={o.line}"] if o.line and o.file else []) + \
              [f"title={_escape(f'uopcheck {result.name}: {o.name}', True)}"]
      lines.append(f"::{'error' if o.status == 'fail' else 'warning'} {','.join(props)}::{_escape(o.message or o.name)}")
    return "\n".join(lines)
