"""Results are objects, reports are renderers: every renderer shows the same result faithfully (escaping what its medium
needs), every reporting command takes the one ``--report`` option, and the files it asks for are written."""
from __future__ import annotations
from typing import Any
import argparse, html, json, re
import pytest
from uopcheck.cli import main, build_parser
from uopcheck.results import Column, Table, Section, Result, RENDERERS, DEFAULT_KINDS, emit, parse_kinds
from uopcheck.amd import fixtures

def _result() -> Result:
  cols = [Column("name", width=10), Column("n", width=5, align=">"), Column("err", width=8, align=">", fmt=".2g"),
          Column("source", term=False), Column("note")]
  rows = [{"name": "a|b", "n": 3, "err": 0.000123, "source": "x<y", "note": "<script>alert(1)</script>"},
          {"name": "second", "n": 12345, "err": None, "source": "", "note": "ok"}]
  return Result("demo", "demo title", {"rows": rows, "k": [1, 2]},
                tables=[Table(cols, rows, title="the rows", footer=[{"name": "TOTAL", "n": 12348}])],
                preamble=["before"], summary=["2 rows"], sections=[Section("problems", ["first | one"])])

def test_term_aligns_columns_and_hides_wide_ones():
  text = RENDERERS["term"].render(_result())
  lines = text.splitlines()
  head = next(ln for ln in lines if ln.startswith("name"))
  assert head.index("n") + 1 < head.index("err") and "source" not in text and "x<y" not in text   # a file-only column
  row = next(ln for ln in lines if ln.startswith("a|b"))
  assert row[:10] == "a|b".ljust(10) and row[11:16] == "    3" and "0.00012" in row
  assert lines.index(row) < next(i for i, ln in enumerate(lines) if ln.startswith("TOTAL"))
  assert "2 rows" in lines and "problems" in lines and "  first | one" in lines and lines[0] == "before"

def test_json_is_the_results_payload():
  r = _result()
  assert json.loads(RENDERERS["json"].render(r)) == r.data

def test_markdown_escapes_pipes_and_keeps_every_column():
  md = RENDERERS["md"].render(_result())
  assert md.startswith("# demo title") and "## the rows" in md and "## problems" in md
  row = next(ln for ln in md.splitlines() if "a\\|b" in ln)
  assert row.count(" | ") == 4 and "x<y" in row                     # five cells; the pipe in a cell is escaped, not a column
  assert "|---|---:|---:|---|---|" in md and "| TOTAL | 12348 |" in md

def test_html_escapes_and_sorts_by_value():
  doc = RENDERERS["html"].render(_result())
  assert "<script>alert(1)</script>" not in doc and html.escape("<script>alert(1)</script>") in doc and "x&lt;y" in doc
  assert "onclick='srt(this)'" in doc and "data-v='12345'" in doc     # numeric cells sort by value, not text
  assert doc.count("<tfoot>") == 1 and "<h2>problems</h2>" in doc

def test_emit_prints_term_and_writes_the_file_kinds(tmp_path, capsys):
  written = emit(_result(), ["term", "json", "md", "html"], tmp_path)
  assert sorted(p.name for p in written.values()) == ["demo.html", "demo.json", "demo.md"]
  assert "demo title" not in capsys.readouterr().out.splitlines()[0]   # the terminal kind: no title banner, the result's own lines
  assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.html", "demo.json", "demo.md"]

def test_parse_kinds():
  assert parse_kinds("term, json,markdown") == ["term", "json", "md"]
  with pytest.raises(argparse.ArgumentTypeError, match="bogus"): parse_kinds("json,bogus")
  assert parse_kinds("lcov", extra=("lcov",)) == ["lcov"]

def test_every_reporting_command_takes_the_one_report_option():
  from uopcheck.argtypes import command_parsers
  commands = command_parsers(build_parser())
  assert {"fuzz graph", "fuzz symbolic", "check", "rules"} <= set(commands)
  for name, sp in commands.items():
    if name in ("conformance", "completion", "fuzz"): continue   # pytest's arguments; a script printed; the fuzzers' parent
    opts = {o for a in sp._actions for o in a.option_strings}
    assert "--report" in opts, name
    if name not in ("train", "coverage"): assert "--report-dir" in opts, name

@pytest.mark.parametrize("argv,name", [(["spec", "--op", "cdiv"], "spec"),
                                       (["amd", "doctor", "--root", "HEALTHY"], "amd_doctor"),
                                       (["rules", "verify", "--only", "tinygrad/uop/symbolic.py:113", "--workers", "1"], "rules_verify")])
def test_report_kinds_are_the_files_written(argv, name, tmp_path, capsys):
  argv = [str(fixtures.build("healthy", tmp_path / "fx")) if a == "HEALTHY" else a for a in argv]
  assert main([*argv, "--report", "md,html", "--report", "json", "--report-dir", str(tmp_path / "r")]) == 0
  assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [f"{name}.html", f"{name}.json", f"{name}.md"]
  assert capsys.readouterr().out == ""                                  # term was not asked for
  data = json.loads((tmp_path / "r" / f"{name}.json").read_text())
  md = (tmp_path / "r" / f"{name}.md").read_text()
  assert data and md.startswith("# uopcheck") and re.search(r"^\| .+ \|$", md, re.M)   # a Markdown table of the same result
  assert main([*argv, "--report", "term", "--report-dir", str(tmp_path / "t")]) == 0
  assert capsys.readouterr().out.strip() and not (tmp_path / "t").exists()   # terminal only: no files, no directory

def test_default_kinds_and_a_bad_kind(tmp_path, capsys):
  assert main(["spec", "--report-dir", str(tmp_path)]) == 0
  assert sorted(p.suffix for p in tmp_path.iterdir()) == sorted(f".{k}" for k in DEFAULT_KINDS if k != "term")
  assert main(["spec", "--report", "pdf"]) == 2 and "unknown report kind(s) ['pdf']" in capsys.readouterr().err

def test_rule_report_html_shows_source_and_counterexample(tmp_path):
  """the rules verify HTML keeps what its own page had: the rule's source and the counterexample beside the verdict"""
  known = tmp_path / "known.json"
  known.write_text("{}")
  assert main(["rules", "verify", "--only", "tinygrad/uop/symbolic.py:116", "--workers", "1", "--known", str(known), "--report", "html",
               "--report-dir", str(tmp_path / "r")]) == 1
  doc = (tmp_path / "r" / "rules_verify.html").read_text()
  assert "refuted (NEW)" in doc and ("REACHABLE" in doc or "not shown reachable" in doc)
  assert html.escape('(UPat.var("x") // -1, lambda x: -x)') in doc                    # the rule's source line

def test_findings_promote_reports_what_it_promoted(tmp_path, capsys):
  from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS
  f = sorted(SHIPPED_FINDINGS.glob("symbolic-*.json"))[0]
  assert main(["findings", "promote", str(f), "--to", str(tmp_path / "corpus"), "--report", "term,json", "--report-dir", str(tmp_path / "r")]) == 0
  assert (tmp_path / "corpus" / f.name).read_bytes() == f.read_bytes() and f.name in capsys.readouterr().out
  assert json.loads((tmp_path / "r" / "findings_promote.json").read_text())["promoted"][0]["file"] == f.name

def _ci_result() -> Result:
  from uopcheck.results import Outcome
  return Result("ci", "ci", {}, outcomes=[Outcome("tinygrad/uop/symbolic.py:116", "fail", "x//-1, at 6: 0 vs 250\nthe rule: a, b",
                                                  "tinygrad/uop/symbolic.py", 116, "rules verify"),
                                          Outcome("r2", "skip", "known refutation"), Outcome("r3", "pass"),
                                          Outcome("graph-1.json", "error", "uopcheck's own <fault> 100%", "f/graph-1.json")])

def test_junit_counts_and_locates_every_outcome():
  import xml.etree.ElementTree as ET
  suite: Any = ET.fromstring(RENDERERS["junit"].render(_ci_result())).find("testsuite")
  assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {"tests": "4", "failures": "1", "errors": "1", "skipped": "1"}
  cases = {c.get("name"): c for c in suite.findall("testcase")}
  bad = cases["tinygrad/uop/symbolic.py:116"]
  assert (bad.get("file"), bad.get("line"), bad.get("classname")) == ("tinygrad/uop/symbolic.py", "116", "rules verify")
  assert bad.find("failure").get("message") == "x//-1, at 6: 0 vs 250" and "the rule: a, b" in bad.find("failure").text
  assert cases["r2"].find("skipped") is not None and list(cases["r3"]) == [] and cases["graph-1.json"].find("error") is not None

def test_sarif_holds_failures_and_errors_at_their_location():
  runs = json.loads(RENDERERS["sarif"].render(_ci_result()))["runs"]
  res = runs[0]["results"]
  assert [(r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in res] == \
         [("error", "tinygrad/uop/symbolic.py"), ("warning", "f/graph-1.json")]
  assert res[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 116} and "region" not in res[1]["locations"][0]["physicalLocation"]
  assert {r["id"] for r in runs[0]["tool"]["driver"]["rules"]} == {"rules verify", "ci"}

def test_github_annotations_are_escaped_one_per_line(capsys):
  emit(_ci_result(), ["github"], None)
  lines = capsys.readouterr().out.splitlines()
  assert lines == ["::error file=tinygrad/uop/symbolic.py,line=116,title=uopcheck ci%3A tinygrad/uop/symbolic.py%3A116::"
                   "x//-1, at 6: 0 vs 250%0Athe rule: a, b",
                   "::warning file=f/graph-1.json,title=uopcheck ci%3A graph-1.json::uopcheck's own <fault> 100%25"]

def test_rules_verify_ci_kinds_fail_a_new_refutation_and_skip_a_known_one(tmp_path, capsys):
  import xml.etree.ElementTree as ET
  empty = tmp_path / "known.json"
  empty.write_text("{}")
  rule = ["rules", "verify", "--only", "tinygrad/uop/symbolic.py:116", "--workers", "1", "--report", "junit,sarif,github"]
  assert main([*rule, "--known", str(empty), "--report-dir", str(tmp_path / "new")]) == 1
  assert capsys.readouterr().out.startswith("::error file=tinygrad/uop/symbolic.py,line=116,")
  case: Any = ET.parse(tmp_path / "new" / "rules_verify.junit.xml").getroot().find("testsuite/testcase")
  assert case.get("line") == "116" and "REACHABLE" in case.find("failure").text
  assert json.loads((tmp_path / "new" / "rules_verify.sarif").read_text())["runs"][0]["results"][0]["ruleId"] == "rules verify"
  assert main([*rule, "--report-dir", str(tmp_path / "known")]) == 0   # the shipped list knows it: skipped, no annotation
  assert capsys.readouterr().out == ""
  case = ET.parse(tmp_path / "known" / "rules_verify.junit.xml").getroot().find("testsuite/testcase")
  assert case.find("skipped").get("message").startswith("known refutation")
