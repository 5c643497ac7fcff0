"""A finding is a finding or nothing: >= 2,000 malformed findings (``conformance/malformed_findings.py``: every class of
mutation of the shipped ones) through every reader -- the API and pytest collection (``read_finding`` / ``load_dir`` with
the kind's one strict schema check), ``uopcheck findings promote`` and ``uopcheck findings audit``: none accepted by the
schema check except the forged audit case, which is well-formed and refused by the re-check; none promoted; no
traceback; each file decided within seconds."""
from __future__ import annotations
import collections, json, time
from uopcheck.cli import main
from uopcheck.fuzz.findings_io import read_finding, load_dir, SHIPPED_FINDINGS
from uopcheck.fuzz import graph, symbolic
from uopcheck.spec.errors import SpecError
from conformance.malformed_findings import write_all

def test_malformed_findings_are_refused_by_every_reader(tmp_path, capsys):
  made = write_all(tmp_path / "m")
  assert len(made) >= 2000 and len({c for _, _, c in made}) >= 25
  accepted: collections.Counter = collections.Counter()
  slowest = 0.0
  for path, kind, cls in made:
    st = time.perf_counter()
    try: read_finding(path, graph.validate_finding if kind == "graph" else symbolic.validate_finding)
    except SpecError as e:
      assert "\n" not in str(e) and path.name in str(e), str(e)[:300]   # one line, naming the file
    else: accepted[(kind, cls)] += 1
    slowest = max(slowest, time.perf_counter() - st)
  # well-formed by construction: a bare variable and an unrelated simplified graph with an in-range assignment
  assert set(accepted) <= {("symbolic", "forged audit case")}, accepted
  assert slowest < 10, slowest
  # pytest collection and the campaigns read directories through load_dir: nothing malformed comes back
  for path, kind, cls in made[:: 50]:
    found, problems = load_dir(path.parent, f"{kind}-*.json", graph.validate_finding if kind == "graph" else symbolic.validate_finding)
    assert (found == [] and len(problems) == 1) or cls == "forged audit case", (cls, found, problems)
  # promote: every file refused in one line, nothing copied, exit 2; audit: every file reported, none confirmed, exit 3
  dest = tmp_path / "corpus"
  assert main(["findings", "promote", *[str(p) for p, _, _ in made], "--to", str(dest), "--report", "json", "--report-dir", str(tmp_path / "r")]) == 2
  assert not dest.exists() or not any(dest.iterdir())
  err = capsys.readouterr().err
  assert err.count("not promoted:") == len(made) and "Traceback" not in err
  assert main(["findings", "audit", *sorted({str(p.parent) for p, _, _ in made}), "--report", "json", "--report-dir", str(tmp_path / "a")]) == 3
  import json
  rows = json.loads((tmp_path / "a" / "findings_audit.json").read_text())["findings"]
  assert len(rows) == len(made) and not any(r["verdict"] == "confirmed" for r in rows)
  forged = [r for r in rows if r["verdict"].startswith("FALSE")]
  assert forged and all("not what this tinygrad makes" in r["verdict"] for r in forged), forged[:3]

def test_shipped_findings_pass_the_strict_check_and_re_derive_on_this_tinygrad():
  from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS
  for kind, mod in (("graph", graph), ("symbolic", symbolic)):
    found, problems = load_dir(SHIPPED_FINDINGS, f"{kind}-*.json", mod.validate_finding)
    assert found and not problems, problems
  for p, d in load_dir(SHIPPED_FINDINGS, "symbolic-*.json", symbolic.validate_finding)[0]: assert symbolic.audit(d) is None, p.name

def test_the_store_keeps_the_smaller_finding_per_signature_for_both_fuzzers(tmp_path):
  """one rule, written once (findings_io.save_smaller, through a DirectoryStore of each fuzzer's layout), for graph
  programs (steps) and symbolic expressions (nodes): a larger finding with a stored signature is not kept, a smaller one
  replaces it, and a stored file that cannot be read is replaced by the good one (before, each fuzzer wrote its own copy
  of the rule)"""
  from uopcheck.fuzz.findings_store import DirectoryStore
  g = next(d for p, d in load_dir(SHIPPED_FINDINGS, "graph-*.json", graph.validate_finding)[0] if d["kind"] == "graph")
  s = load_dir(SHIPPED_FINDINGS, "symbolic-*.json", symbolic.validate_finding)[0][0][1]
  grow = {"graph": lambda d: {**d, "program": {**d["program"], "steps": d["program"]["steps"] * 2}},
          "symbolic": lambda d: {**d, "expr": {**d["expr"], "nodes": d["expr"]["nodes"] * 2}}}
  for kind, d, layout in (("graph", g, graph.LAYOUT), ("symbolic", s, symbolic.LAYOUT)):
    store = DirectoryStore(tmp_path, layout)
    big = grow[kind](d)
    path = store.save(big)
    assert path is not None and path.name == f"{kind}-{d['signature']}.json"
    assert store.save(grow[kind](big)) is None                            # larger than the stored one: not kept
    assert store.save(d) == path and json.loads(path.read_text()) == d   # smaller: replaces it
    path.write_text("{ not json")
    assert store.save(big) == path and json.loads(path.read_text()) == big   # an unreadable stored file is replaced
    assert store.signatures() == {d["signature"]: path.name}

def test_the_store_s_three_backends_share_one_interface(tmp_path):
  """fuzz/findings_store.py: the shipped corpus is read-only and its signatures are the known ones; a cluster worker's
  queue store sends each finding, and the client's directory store checks what arrives as data before it saves it (a
  path-like signature or a non-object is refused, never written)"""
  from uopcheck.fuzz.findings_store import ShippedStore, QueueStore
  from uopcheck.fuzz.cluster import _Collector
  shipped = ShippedStore(graph.LAYOUT)
  on_disk = {d["signature"] for _, d in load_dir(SHIPPED_FINDINGS, "graph-*.json", graph.validate_finding)[0]}
  assert set(shipped.signatures()) == on_disk and on_disk
  g = next(d for _, d in shipped.load()[0] if d["kind"] == "graph")
  try:
    shipped.save(g)
    raise AssertionError("the shipped corpus took a write")
  except SpecError as e: assert "read-only" in str(e)
  col = _Collector(str(tmp_path), {}, None)
  queue = QueueStore(lambda m: col.message(json.dumps({**m, "shard": 0})), graph.LAYOUT)
  assert queue.remote and queue.save(g) is None
  assert [p.name for p in tmp_path.glob("*.json")] == [f"graph-{g['signature']}.json"] and col.got["new"] == {g["signature"]}
  for bad in ({**g, "signature": "../../evil00"}, ["not", "a", "finding"], {**g, "program": {"steps": "x"}}):
    queue.save(bad)
  assert len(col.rejected) == 3 and all("malformed finding" in r for r in col.rejected), col.rejected
  assert len(list(tmp_path.rglob("*.json"))) == 1 and not (tmp_path.parent / "evil00.json").exists()

def test_one_table_names_each_fuzzers_findings_for_audit_promote_and_replay(tmp_path):
  """the CLI's audit, promote and replay read fuzz/finding_kinds.py (schema check, re-check, replay verdict per prefix)
  instead of naming each fuzzer itself"""
  import pathlib
  from uopcheck.fuzz.finding_kinds import finding_kinds, finding_kind, finding_files
  kinds = finding_kinds()
  assert set(kinds) == {"symbolic", "graph"}
  assert kinds["graph"].validate is graph.validate_finding and kinds["symbolic"].recheck is symbolic.audit
  assert finding_kind(pathlib.Path("graph-0123456789ab.json")) is kinds["graph"]
  for other in ("internal-0123456789ab.json", "graph-0123456789ab.txt", "notes.json"): assert finding_kind(pathlib.Path(other)) is None
  for name in ("graph-0123456789ab.json", "symbolic-0123456789ab.json", "flaky-0123456789ab.json", "readme.json"): (tmp_path / name).write_text("{}")
  assert [p.name for p in finding_files(tmp_path)] == ["graph-0123456789ab.json", "symbolic-0123456789ab.json"]
  src = (pathlib.Path(__file__).resolve().parents[1] / "uopcheck" / "cli.py").read_text()
  assert "import validate_finding" not in src and ".startswith((\"symbolic-\"" not in src

def test_findings_audit_reads_a_file_named_alone_and_refuses_a_missing_path(tmp_path, capsys):
  """``findings audit FILE`` audits that file (it was read as a directory: 0 findings audited, exit 0, for any file); a path
  that does not exist is a usage error naming it (exit 2), not an empty audit; a file that is not a readable finding is
  bad input (exit 2: it was 3, uopcheck's own failure, which a finding that no longer reproduces still is)"""
  one = sorted(SHIPPED_FINDINGS.glob("symbolic-*.json"))[0]
  assert main(["findings", "audit", str(one), "--report", "json", "--report-dir", str(tmp_path / "a")]) == 0
  rows = json.loads((tmp_path / "a" / "findings_audit.json").read_text())["findings"]
  assert [(r["file"], r["verdict"]) for r in rows] == [(one.name, "confirmed")]
  bad = tmp_path / "symbolic-0123.json"
  bad.write_text("{}")
  assert main(["findings", "audit", str(bad), "--report", "json", "--report-dir", str(tmp_path / "b")]) == 2
  assert main(["findings", "audit", str(bad), str(one), "--report", "json", "--report-dir", str(tmp_path / "b")]) == 2
  capsys.readouterr()
  assert main(["findings", "audit", str(tmp_path / "nowhere"), "--report-dir", str(tmp_path / "c")]) == 2
  err = capsys.readouterr().err
  assert "nowhere" in err and "no such finding file or directory" in err and "Traceback" not in err
