"""The ``uopcheck`` command line: one entry point, one subcommand per job.

  uopcheck check [NAME ...] [--per-kernel] [--scheduler pkg.mod:fn] [--no-hcq2] [--json F]
                                                                               ref vs fast on real graphs, as a table
  uopcheck spec [--op NAME]                                                    the op table
  uopcheck conformance [-- PYTEST ARGS]                                        pytest conformance/ (from a checkout)
  uopcheck fuzz symbolic|graph --minutes N [--seed S] [--findings DIR]          fuzz campaigns that save reproducers
  uopcheck compare-schedulers A B [--corpus DIR] [--fuzz N]                     correctness and cost of two schedulers
  uopcheck mutate [ID ...] [--detectors check,graph,rules,conformance]         kill table of tinygrad mutants
  uopcheck findings promote FILE ... | audit DIR|FILE ...                      re-derive findings; promote into the shipped corpus
  uopcheck replay FILE|DIR ...                                                 re-run findings: still failing / fixed per file
  uopcheck rules verify [--only KEY ...] [--workers N]                         decide every rewrite rule (integer, IEEE float, bounded)
  uopcheck amd doctor|env [--root DIR] [--json]                                MI350X bring-up checks
  uopcheck train --config tiny --steps 50 --validate                           Llama run behind the CPU gate (--replay FILE)

Exit codes, for every command: 0 nothing new, 1 new findings (they beat 3), 2 usage or input error, 3 uopcheck-internal
error, 130 interrupted; train only: 4 the loss went non-finite, 5 a nondeterministic device fault in the gate.
"""
from __future__ import annotations
import argparse, os, pathlib, subprocess, sys, time
from uopcheck.settings import tinygrad_import_problem
if (_why := tinygrad_import_problem()) is not None:   # before the imports below bring tinygrad in: one line, exit 2
  print(f"uopcheck: {_why}", file=sys.stderr)
  sys.exit(2)
from uopcheck.fuzz.findings_io import exit_code, DEFAULT_FINDINGS, EXIT_USAGE, EXIT_CLEAN, EXIT_INTERNAL, FindingsUnwritable
from uopcheck.atomic import atomic_write_json
from uopcheck.argtypes import positive, directory, command_parsers
from uopcheck import config
from uopcheck.spec.errors import SpecError
from uopcheck.runs import finish_run, report
from uopcheck.results import Column, Table, Section, Result, Outcome, RENDERERS, DEFAULT_KINDS, parse_kinds
from uopcheck.results.render import TERM

def _cmd_check(args) -> int:
  from uopcheck.check import catalog
  names = args.names or list(catalog.REAL_GRAPHS)
  unknown = [n for n in names if n not in catalog.REAL_GRAPHS]
  if unknown:
    print(f"uopcheck: unknown graph(s) {unknown}; known: {', '.join(catalog.REAL_GRAPHS)}", file=sys.stderr)
    return 2
  from uopcheck.fast import hcq2_active
  if args.scheduler:   # a scheduler that cannot load is a usage error here too (exit 2, as in fuzz), before any worker starts
    from uopcheck.fast.runner import load_scheduler
    load_scheduler(args.scheduler)
  if not args.per_kernel:
    # the path the device opens with: the mock GPU runs the plain one (fast.devices.open_device)
    args.hcq2 = not args.no_hcq2 and not args.device.startswith("MOCK+") and hcq2_active()
    return _check_graphs(args, names)
  from uopcheck.fast.devices import default_device
  with default_device(args.device, hcq2=False if args.no_hcq2 else None):
    args.hcq2 = hcq2_active()
    return _per_kernel(args, names)

def _check_graphs(args, names:list[str]) -> int:
  """every graph checked in a supervised worker (uopcheck.check.supervised): a tinygrad exception, segfault or hang is
  that graph's row, confirmed in plain tinygrad, and the table always completes"""
  from dataclasses import asdict
  from uopcheck.check import supervised
  table = Table(CHECK_COLUMNS)
  live = "term" in args.report
  if live: print(TERM.head(table), flush=True)
  def on_row(r:supervised.GraphRow) -> None:
    table.rows.append({"graph": r.graph, "result": r.result, "kernels": r.kernels, "ref ms": r.ref_s * 1e3, "fast ms": r.fast_s * 1e3,
                       "max abs err": r.max_abs_err, "notes": r.note})
    if live: print(TERM.row(table, table.rows[-1]), flush=True)   # each graph's line as soon as it is checked
  try: got = supervised.check_graphs(names, args.device, args.hcq2, args.scheduler, args.graph_timeout, on_row)
  except supervised.UsageError as e: raise SpecError(str(e)) from None
  rows = [{k: v for k, v in {**asdict(r), "ok": r.ok}.items() if k not in ("reproducer", "extra")} for r in got]
  reproducers = [ln for r in got for ln in r.reproducer.splitlines()]
  failed, internal = sum(r.tinygrads for r in got), sum(r.result == "INTERNAL" for r in got)
  res = Result("check", "uopcheck check: ref vs fast on real model graphs", rows, tables=[table],
               summary=[f"{sum(r.ok for r in got)}/{len(names)} graphs agree (ref vs fast on {args.device}, "
                        f"{'HCQ2' if args.hcq2 else 'plain'} path, scheduler={args.scheduler or 'tinygrad rangeify'})"] +
                       ([f"{failed} tinygrad finding(s): FAIL = wrong values, CRASH/HANG = confirmed by plain tinygrad in a fresh process"]
                        if failed else []) +
                       ([f"{internal} uopcheck-internal row(s): uopcheck's own reference, builder or capture failed there"] if internal else []),
               sections=[Section("reproducers", reproducers)] if reproducers else [],
               outcomes=[Outcome(r.graph, "pass" if r.ok else "error" if r.result == "INTERNAL" else "fail", f"{r.result}: {r.note}",
                                 group="check") for r in got])
  report(args, res, "check", live=live)
  if args.json: atomic_write_json(pathlib.Path(args.json), rows)
  return exit_code(new=failed, internal=internal)

CHECK_COLUMNS = [Column("graph", width=24), Column("result", width=6), Column("kernels", width=7, align=">"),
                 Column("ref ms", width=9, align=">", fmt=".2f"), Column("fast ms", width=9, align=">", fmt=".1f"),
                 Column("max abs err", width=12, align=">", fmt=".3g"), Column("notes")]

def _per_kernel(args, names) -> int:
  from uopcheck.check import catalog
  from uopcheck.check.kernel import check_per_kernel, PerKernelResult
  failed = internal = 0
  results, verdicts, checked = [], [], []
  for n in names:
    try: r = check_per_kernel(catalog.REAL_GRAPHS[n], n, hcq2=args.hcq2, scheduler=args.scheduler)
    except SpecError: raise
    except Exception as e:   # uopcheck's own blame failed on this graph: its row says so, the other graphs are still checked
      r = PerKernelResult(n, hcq2=args.hcq2, blame="uopcheck-internal", message=f"the per-kernel check failed: {type(e).__name__}: {e}"[:300])
    results.append(x := r.result(args.scheduler))
    checked.append(r)
    verdicts.append(f"{x.title}: verdict: {r.verdict()}")
    if "term" in args.report: print(f"== {x.title}\n{TERM.render(x)}\n", flush=True)
    failed += not r.ok
    internal += r.blame in ("reference", "uopcheck-internal")
  res = Result("check", "uopcheck check --per-kernel: each kernel and stage, ref vs fast", [x.data for x in results],
               tables=[Table(t.columns, t.rows, title=x.title) for x in results for t in x.tables], summary=verdicts,
               outcomes=[Outcome(x.title, "pass" if r.ok else "error" if r.blame in ("reference", "uopcheck-internal") else "fail",
                                 r.verdict(), group="check --per-kernel") for r, x in zip(checked, results)])
  report(args, res, "check", live=True)
  return exit_code(new=failed - internal, internal=internal)

def _cmd_spec(args) -> int:
  from uopcheck.spec import OP_TABLE
  ops = [o for o in OP_TABLE if args.op is None or o.name == args.op.upper()]
  if not ops:
    print(f"uopcheck: no op named {args.op!r}", file=sys.stderr)
    return 2
  data = {op.name: {"stages": sorted(st.value for st in OP_TABLE[op].stages), "typing": OP_TABLE[op].typing, "semantics": OP_TABLE[op].semantics,
                    "out_of_scope": OP_TABLE[op].out_of_scope, "arity": OP_TABLE[op].arity, "domain": OP_TABLE[op].domain,
                    "tolerance": OP_TABLE[op].tolerance, "fuzz": sorted(OP_TABLE[op].fuzz)} for op in ops}
  rows = [{"op": k, "stages": "[" + (",".join(d["stages"]) or "-") + "]",
           "semantics": "OUT OF SCOPE: " + d["out_of_scope"] if d["out_of_scope"] else d["semantics"]} for k, d in data.items()]
  cols = [Column("op", width=20), Column("stages", width=24), Column("semantics")]
  report(args, Result("spec", "uopcheck spec: the op table", data, tables=[Table(cols, rows)],
                      summary=[f"typing: {data[ops[0].name]['typing']}"] if args.op else []), "spec")
  return 0

def _cmd_conformance(args) -> int:
  if not pathlib.Path("conformance").is_dir():
    print("uopcheck: run this from a uopcheck checkout (conformance/ not found here)", file=sys.stderr)
    return 2
  return subprocess.call([sys.executable, "-m", "pytest", "conformance", *args.pytest_args])

def _cmd_fuzz(args) -> int:
  from uopcheck.fuzz.fuzzers import fuzzer
  from uopcheck.fuzz.supervisor import main
  if args.hypothesis_profile: os.environ["UOPCHECK_HYPOTHESIS_PROFILE"] = args.hypothesis_profile   # campaign workers inherit it
  fz = fuzzer(args.fuzz_cmd)
  return fz.main(args) if fz.main is not None else main(fz, args)

def _cmd_rules(args) -> int:
  from uopcheck.fuzz import rule_verify, rule_report
  try: known = rule_report.load_known(args.known) if args.known else rule_report.load_known()
  except ValueError as e:
    print(f"uopcheck: {e}", file=sys.stderr)
    return EXIT_USAGE
  try: verdicts, partial = rule_verify.verify_all(args.only or None, workers=args.workers), None
  except rule_verify.RulesInterrupted as e: verdicts, partial = e.done, e
  res = rule_report.result(verdicts, known, show_na=args.show_na)
  if partial is not None:   # an interrupt is never a verdict: the report holds only rules decided before it, and says so
    res.data["partial"] = {"interrupted": True, "rules_done": len(partial.done), "rules_total": partial.total}
    res.summary.insert(0, f"PARTIAL: interrupted (Ctrl-C) after {len(partial.done)} of {partial.total} rules; the rest were not decided")
  report(args, res, "rules-verify")
  return 130 if partial is not None else exit_code(new=len(res.data["summary"]["refuted_new"]))

def _finding_check(f:pathlib.Path):
  """(the finding read through its kind's one strict schema check, its kind: re-check and replay) for a finding file;
  SpecError if it is none of the kinds (fuzz/finding_kinds.py)"""
  from uopcheck.fuzz.findings_io import read_finding
  from uopcheck.fuzz.finding_kinds import finding_kind, file_patterns
  from uopcheck.spec import SpecError
  if (kind := finding_kind(f)) is None: raise SpecError(f"{f}: not a finding file ({file_patterns()})")
  d = read_finding(f, kind.validate)
  if f.name != f"{kind.prefix}-{d['signature']}.json":
    raise SpecError(f"{f.name}: the file name does not carry its signature {d['signature']}")
  return d, kind

def _finding_paths(path:pathlib.Path) -> list[pathlib.Path]:
  """the finding files ``findings audit`` and ``replay`` read at one argument: a directory's, or one file given by name
  (audit read it as a directory and audited nothing, exit 0); a path that is neither is a usage error naming it, before
  any finding is run (replay reported it as one refused file among the verdicts)"""
  from uopcheck.spec import SpecError
  from uopcheck.fuzz.finding_kinds import finding_files
  if path.is_dir(): return finding_files(path)
  if path.is_file(): return [path]
  raise SpecError(f"{path}: no such finding file or directory")

def _cmd_findings(args) -> int:
  """``promote``: copy reviewed findings into the shipped corpus (the suite replays it), each read through the strict schema
  check and re-derived on this tinygrad (``recheck``: the same failure, the same signature); a file that is refused is
  named in one line, the rest of the batch goes on, exit 2. ``audit``: every finding file in directories (symbolic and
  graph) re-checked from scratch; every file is reported, exit 3 if one is false (no longer reproduces), else 2 if one is unreadable."""
  import shutil
  from uopcheck.fuzz.findings_io import SHIPPED_FINDINGS
  from uopcheck.spec import SpecError
  from uopcheck.progress import bar
  def verdict(f:pathlib.Path) -> str:
    try: d, kind = _finding_check(f)
    except SpecError as e: return f"REFUSED: {e}"
    why = kind.recheck(d)
    return "confirmed" if why is None else f"FALSE: {why}"
  if args.findings_cmd == "audit":
    files = [f for path in args.files for f in _finding_paths(pathlib.Path(path))]
    rows = [{"directory": str(f.parent), "file": f.name, "verdict": verdict(f)} for f in bar(files, "audit", unit="findings")]
    false = sum(r["verdict"] != "confirmed" for r in rows)
    unreadable = sum(r["verdict"].startswith("REFUSED") for r in rows)
    report(args, Result("findings_audit", "uopcheck findings audit", {"findings": rows, "false": false},
                        tables=[Table([Column("file", width=40), Column("verdict")], rows)],
                        summary=[f"{len(rows)} findings audited in {', '.join(args.files)} (symbolic and graph)", f"false or unreadable: {false}"],
                        outcomes=[Outcome(r["file"], "pass" if r["verdict"] == "confirmed" else "error", r["verdict"],
                                          str(pathlib.Path(r["directory"]) / r["file"]), group="findings audit") for r in rows]),
           "findings-audit")
    # a finding that does not reproduce is uopcheck's failure (3); a file that is not a readable finding is bad input (2)
    return EXIT_INTERNAL if false > unreadable else EXIT_USAGE if unreadable else EXIT_CLEAN
  dest = pathlib.Path(args.to) if args.to else SHIPPED_FINDINGS
  rows, refused = [], []
  for f in map(pathlib.Path, args.files):
    v = verdict(f)
    if v != "confirmed":
      refused.append(f"{f}: {v}")
      print(f"uopcheck: not promoted: {f}: {v}", file=sys.stderr)
      continue
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(f, dest / f.name)
    rows.append({"file": f.name, "to": str(dest), "confirmed": "re-derived on this tinygrad (same failure, same signature)"})
  report(args, Result("findings_promote", "uopcheck findings promote", {"promoted": rows, "refused": refused},
                      tables=[Table([Column("file", width=32), Column("to", width=40), Column("confirmed")], rows)],
                      summary=[f"{len(rows)} promoted, {len(refused)} refused"], sections=[Section("refused", refused)] if refused else []),
         "findings-promote")
  return EXIT_USAGE if refused else 0

def replay_verdict(f:pathlib.Path) -> str:
  """one finding file re-run on the installed tinygrad: "still failing", "fixed", "changed: ..." (it fails another way),
  "skipped: ..." or "refused: ..." (not a readable finding)"""
  from uopcheck.spec import SpecError
  try: d, kind = _finding_check(f)
  except SpecError as e: return f"refused: {e}"
  return kind.replay(d)

REPLAY_STATUS = {"still failing": "fail", "changed": "fail", "fixed": "pass", "skipped": "skip", "refused": "error"}

def _cmd_replay(args) -> int:
  """``uopcheck replay FILE|DIR ...``: every finding re-run exactly as recorded (TinyJit calls, devices, Variables), a verdict
  per file -- the ``--lf`` of campaigns. Exit 0 when all are fixed, 1 when one still fails (or fails another way), 2 when
  a file is not a readable finding."""
  from uopcheck.progress import bar
  files = [f for path in args.paths for f in _finding_paths(pathlib.Path(path))]
  rows = [{"file": str(f), "verdict": replay_verdict(f)} for f in bar(files, "replay", unit="findings")]
  def count(k):
    return sum(r["verdict"].startswith(k) for r in rows)
  report(args, Result("replay", "uopcheck replay", {"findings": rows}, tables=[Table([Column("file", width=56), Column("verdict")], rows)],
                      summary=[f"{len(rows)} findings: still failing {count('still')}, fixed {count('fixed')}, changed {count('changed')}, "
                               f"skipped {count('skipped')}, refused {count('refused')}"],
                      outcomes=[Outcome(r["file"], REPLAY_STATUS[r["verdict"].split(":")[0]], r["verdict"], r["file"], group="replay")
                                for r in rows]), "replay")
  return EXIT_USAGE if count("refused") else 1 if count("still") or count("changed") else 0

def _cmd_coverage(args) -> int:
  import pathlib
  from uopcheck import rulecov
  cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
  if not cmd:
    print("uopcheck coverage: give a command after --, e.g. uopcheck coverage -- pytest conformance -k movement", file=sys.stderr)
    return 2
  d = pathlib.Path(args.dir)
  for f in rulecov.data_files(d): f.unlink()
  env = {**os.environ, "TRACK_MATCH_STATS": "1", "PRINT_MATCH_STATS": "0", "UOPCHECK_RULECOV_DIR": str(d.resolve())}
  env.setdefault("PARALLEL", "0")  # compile workers run with TRACK_MATCH_STATS=0: their rules would be lost (see rulecov.enable)
  rc = subprocess.call(cmd, env=env)
  rep = rulecov.report(rulecov.combine(d), args.matchers.split(",") if args.matchers else None)
  rulecov.write_reports(rep, args.report, d, "uopcheck coverage -- " + " ".join(args.cmd))
  if args.fail_under is not None:
    n, fired = sum(m["rules"] for m in rep["matchers"].values()), sum(m["fired"] for m in rep["matchers"].values())
    pct = 100 * fired / max(n, 1)
    if pct < args.fail_under:
      print(f"uopcheck coverage: {pct:.1f}% of {n} rules fired, under --fail-under {args.fail_under:g}%", file=sys.stderr)
      return rc or 1
  return rc

def _cmd_compare(args) -> int:
  from uopcheck.spec import SpecError
  if args.a == args.b: raise SpecError(f"compare-schedulers: A and B are both {args.a!r}")
  from uopcheck import compare
  return compare.main(args)

def _cmd_mutate(args) -> int:
  from uopcheck.fuzz import mutate
  if args.detectors == "none": args.detectors = ""
  return mutate.main(args)

def _cmd_amd(args) -> int:
  from uopcheck.amd import cli as amd_cli
  return amd_cli.main(args)

def _cmd_train(args) -> int:
  from uopcheck.training import run
  return run.train(args)

def report_options(run_dir:bool=True) -> _Parser:
  """``--report`` and ``--report-dir``, the same on every command that reports (a parent parser); ``train`` writes into
  its own ``--out`` and takes ``--report`` only"""
  r = _Parser(add_help=False)
  r.add_argument("--report", type=parse_kinds, action="extend", default=None, metavar="KINDS",
                 help=f"comma separated, repeatable: {', '.join(RENDERERS)} (default {','.join(DEFAULT_KINDS)}); files go to the run directory")
  if run_dir: r.add_argument("--report-dir", type=directory, default=None,
                             help="where the reports go (default: a new reports/runs/<time>-<command>/, linked as reports/latest)")
  return r

def _version() -> str:
  from importlib.metadata import version, PackageNotFoundError
  def of(pkg:str) -> str:
    try: return version(pkg)
    except PackageNotFoundError: return "not installed"
  return f"uopcheck {of('uopcheck')} (tinygrad {of('tinygrad')}, z3 {of('z3-solver')}, hypothesis {of('hypothesis')})"

class _Parser(argparse.ArgumentParser):
  """argparse with a did-you-mean for a misspelled command or choice (Python 3.12's suggest_on_error, here on 3.11 too)"""
  def error(self, message:str):
    import difflib, re
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m and (close := difflib.get_close_matches(m.group(1), re.findall(r"'([^']*)'", m.group(2)), n=1)):
      message += f"; did you mean {close[0]!r}?"
    super().error(message)

EXAMPLES = {
  "check": ["uopcheck check", "uopcheck check softmax --no-hcq2", "uopcheck check --per-kernel llama_block",
            "uopcheck check --scheduler mypkg.rangeify2:get_kernel_graph"],
  "spec": ["uopcheck spec", "uopcheck spec --op CDIV"],
  "conformance": ["uopcheck conformance -- -k alu"],
  "fuzz graph": ["uopcheck fuzz graph --minutes 2 --workers 2", "uopcheck fuzz graph --minutes 10 --profile large",
                 "uopcheck fuzz graph --minutes 10 --scheduler ../shared/candidates/rangeify2.py:get_kernel_graph",
                 "uopcheck fuzz graph --minutes 10 --device MOCK+AMD::gfx950", "uopcheck fuzz graph --minutes 5 --report term,junit,github"],
  "fuzz symbolic": ["uopcheck fuzz symbolic --minutes 5", "uopcheck fuzz symbolic --minutes 5 --seed 3 --reading wrap",
                    "uopcheck fuzz symbolic --harvest"],
  "rules": ["uopcheck rules verify", "uopcheck rules verify --only symbolic.py:116", "uopcheck rules verify --report term,junit,github"],
  "compare-schedulers": ["uopcheck compare-schedulers rangeify ../shared/candidates/rangeify2.py:get_kernel_graph --fuzz 20"],
  "mutate": ["uopcheck mutate --list", "uopcheck mutate reduce-max-identity --detectors check,graph"],
  "replay": ["uopcheck replay .uopcheck/findings fuzz/findings"],
  "findings": ["uopcheck findings audit .uopcheck/findings fuzz/findings", "uopcheck findings promote .uopcheck/findings/graph-0123abcd4567.json"],
  "coverage": ["uopcheck coverage --report term,html -- uopcheck fuzz graph --minutes 2",
               "uopcheck coverage --fail-under 40 -- pytest conformance -k movement"],
  "amd": ["uopcheck amd doctor", "uopcheck amd env"],
  "train": ["uopcheck train --config tiny --steps 50 --validate", "uopcheck train --config small --validate --gate-only"],
  "completion": ['eval "$(uopcheck completion bash)"'],
}
EXIT_CODES = ("exit codes: 0 nothing new; 1 new findings, refuted rules or a failing gate; 2 usage or input error; 3 a uopcheck-internal "
              "error (new findings beat it); 130 interrupted (Ctrl-C: a partial report)")

def fuzz_options() -> _Parser:
  """what every campaign takes: the budget, seeds, findings and database, and the supervisor's workers (a parent parser,
  made anew for each fuzzer: argparse shares a parent's option objects, so a project default for one fuzzer in
  ``[tool.uopcheck.fuzz.graph]`` would otherwise become every fuzzer's)"""
  c = _Parser(add_help=False)
  c.add_argument("--minutes", type=positive(float), default=5.0, help="time budget of the campaign (default 5)")
  c.add_argument("--seed", type=int, default=None, help="seed of the drawn cases (default: hypothesis draws freshly, replaying its "
                 "example database first; every finding is saved as a self-contained reproducer either way)")
  c.add_argument("--hypothesis-profile", choices=["dev", "ci", "nightly"], default=None, help="how hard each finding is shrunk: "
                 "dev 0.25x, ci 1x, nightly 4x the shrink budget (default: UOPCHECK_HYPOTHESIS_PROFILE, else ci)")
  c.add_argument("--findings", type=directory, default=DEFAULT_FINDINGS, help="directory for new reproducers (outside the tracked "
                 "tree; `uopcheck findings promote` moves a reviewed one into the shipped corpus)")
  c.add_argument("--db", default=".hypothesis/uopcheck", help="hypothesis example database: a directory, or redis://HOST:6379/0 "
                 "to share it between the workers of a cluster")
  c.add_argument("--workers", type=positive(int), default=1, help="worker processes (with --cluster local: Dask workers)")
  c.add_argument("--cluster", default=None, metavar="ADDRESS", help="run the workers on a Dask cluster: 'local' starts an embedded "
                 "LocalCluster of --workers processes, tls://HOST:8786 joins a running scheduler; the client writes every finding")
  c.add_argument("--shard-minutes", type=positive(float), default=None, help="with --cluster: minutes one Dask task fuzzes before the "
                 "next is submitted (default 5)")
  c.add_argument("--case-timeout", type=positive(float), default=None,
                 help="seconds one case may run before its worker is killed and the case re-run in a fresh process (a hang finding "
                 "if it hangs again; default: graph 60, 300 with --profile large; symbolic 60)")
  return c

def _epilog(command:str) -> str:
  """a command's --help ends with its examples and the exit codes every command shares"""
  lines = ["examples:", *(f"  {x}" for x in EXAMPLES.get(command, []))] if command in EXAMPLES else []
  return "\n".join(lines + ([""] if lines else []) + [EXIT_CODES + (" (train: also 4 the loss went non-finite, 5 a "
                                                                  "nondeterministic device fault)" if command == "train" else "")])

def build_parser() -> argparse.ArgumentParser:
  from uopcheck.fuzz.fuzzers import MODULES as FUZZERS, fuzzer
  p = _Parser(prog="uopcheck", description="Test and verify tinygrad's UOp compiler: ref interpreter vs the real fast path.")
  p.add_argument("--version", action="version", version=_version(), help="uopcheck's version and the tinygrad it checks")
  sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
  c = sub.add_parser("check", parents=[report_options()], help="ref vs fast on real model graphs, printed as a table")
  c.add_argument("names", nargs="*", help="graphs from uopcheck.check.catalog (default: all)")
  c.add_argument("--scheduler", default=None, help="candidate scheduler as package.module:get_kernel_graph")
  c.add_argument("--no-hcq2", action="store_true", help="use the plain runtime path instead of HCQ2")
  c.add_argument("--json", default=None, help="also write the table as JSON to this file")
  c.add_argument("--per-kernel", action="store_true", help="check every kernel on its own and blame the stage that disagrees")
  c.add_argument("--graph-timeout", type=positive(float), default=900.0, help="seconds one graph may take before it is a HANG row (default 900)")
  c.add_argument("--device", default=None, help="where the fast path runs (default: DEV from the environment, else CPU): CPU, AMD, "
                 "MOCK+AMD, MOCK+AMD::gfx950, NV, CUDA; one that cannot run here is a one-line error")
  c.set_defaults(fn=_cmd_check)
  s = sub.add_parser("spec", parents=[report_options()], help="print the op table")
  s.add_argument("--op", default=None, help="one op's entry (e.g. CDIV), in full; default: the table of every op")
  s.set_defaults(fn=_cmd_spec)
  k = sub.add_parser("conformance", help="run pytest conformance/")
  k.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed to pytest (after --)")
  k.set_defaults(fn=_cmd_conformance)
  f = sub.add_parser("fuzz", help=f"fuzz campaigns, one per registered fuzzer: {', '.join(sorted(FUZZERS))}",
                     description=f"Fuzz campaigns, one per registered fuzzer (fuzz/fuzzers.py): "
                                 f"{', '.join(f'uopcheck fuzz {n} --help' for n in sorted(FUZZERS))}.")
  fsub = f.add_subparsers(dest="fuzz_cmd", required=True, parser_class=_Parser, metavar="{" + ",".join(sorted(FUZZERS)) + "}")
  for name in sorted(FUZZERS):   # each registered fuzzer adds its own flags (fuzz/fuzzers.py)
    fz = fuzzer(name)
    fp = fsub.add_parser(name, parents=[report_options(), fuzz_options()], help=fz.help, description=f"uopcheck fuzz {name}: {fz.help}.",
                         epilog=_epilog(f"fuzz {name}"), formatter_class=argparse.RawDescriptionHelpFormatter)
    fz.add_arguments(fp)
    fp.set_defaults(fn=_cmd_fuzz)
  r = sub.add_parser("rules", parents=[report_options()], help="rewrite rules: decide each rule of symbolic/divandmod/weak (integer and "
                     "IEEE float for all inputs; memory and graph rules over a stated finite space)")
  r.add_argument("rules_cmd", choices=["verify"], help="verify: decide each rewrite rule (integer, IEEE float, bounded)")
  r.add_argument("--only", nargs="*", help="rules whose file:line or matcher name contains one of these")
  r.add_argument("--workers", type=positive(int), default=2, help="processes (default 2); the table does not depend on it")
  r.add_argument("--known", help="reviewed refutations (default: the shipped fuzz/rules_known.json)")
  r.add_argument("--show-na", action="store_true", help="also list the rules with no verdict (n/a: no value semantics)")
  r.set_defaults(fn=_cmd_rules)
  cs = sub.add_parser("compare-schedulers", parents=[report_options()],
                      help="two schedulers side by side: correctness, kernels, bytes, ops, compile and run time")
  cs.add_argument("a", help="scheduler A: 'rangeify' (tinygrad's own), package.module:fn or file.py:fn")
  cs.add_argument("b", help="scheduler B, written like A")
  cs.add_argument("--graphs", nargs="*", default=None, help="real graphs from uopcheck.check.catalog (default: all; give none for no real graphs)")
  cs.add_argument("--corpus", default=None, help="a directory of graph-*.json fuzz findings to run as cases")
  cs.add_argument("--fuzz", type=int, default=0, help="also this many graph-fuzz programs drawn from --seed")
  cs.add_argument("--seed", type=int, default=0, help="seed of the drawn programs")
  cs.add_argument("--profile", choices=["small", "large"], default="small", help="size of the drawn programs")
  cs.add_argument("--quiet", action="store_true", help="no per-case progress lines")
  cs.add_argument("--device", default=None, help="where the cases run (default: DEV from the environment, else CPU): CPU, MOCK+AMD, "
                  "MOCK+AMD::gfx950, AMD, NV, CUDA")
  cs.set_defaults(fn=_cmd_compare)
  mu = sub.add_parser("mutate", parents=[report_options()],
                      help="score the detectors: apply each mutant of tinygrad to a private copy and see which detector catches it")
  mu.add_argument("ids", nargs="*", help="mutant ids (default: the whole catalog; see --list)")
  mu.add_argument("--list", action="store_true", help="list the mutant catalog with the line each one edits")
  mu.add_argument("--detectors", default="check,graph,rules,conformance",
                  help="comma-separated, run in this order (also: gate, gate-full -- the training gate); 'none' for witnesses only")
  mu.add_argument("--all-detectors", action="store_true", help="run every detector on every mutant (default: stop at the first that catches it)")
  mu.add_argument("--graph-minutes", type=positive(float), default=1.0, help="length of the graph-fuzz campaign per mutant")
  mu.add_argument("--workers", type=positive(int), default=1, help="graph-fuzz workers per mutant")
  mu.add_argument("--seed", type=int, default=0, help="graph-fuzz seed")
  mu.set_defaults(fn=_cmd_mutate)
  rp = sub.add_parser("replay", parents=[report_options()], help="re-run findings exactly as recorded: still failing / fixed per file")
  rp.add_argument("paths", nargs="+", help="finding files (symbolic-*.json, graph-*.json) or directories of them")
  rp.set_defaults(fn=_cmd_replay)
  fd = sub.add_parser("findings", parents=[report_options()], help="manage findings: promote reviewed ones into the shipped corpus the suite replays")
  fd.add_argument("findings_cmd", choices=["promote", "audit"], help="promote FILE...: into the shipped corpus; audit DIR|FILE...: re-check")
  fd.add_argument("files", nargs="+", help="promote: finding files (symbolic-*.json, graph-*.json); audit: directories or finding files")
  fd.add_argument("--to", type=directory, default=None, help="corpus directory (default: the shipped fuzz/findings/)")
  fd.set_defaults(fn=_cmd_findings)
  cv = sub.add_parser("coverage", help="rule coverage of a command: uopcheck coverage -- CMD ...")
  cv.add_argument("--dir", type=directory, default="reports/rulecov", help="where the data files and reports go (default reports/rulecov)")
  cv.add_argument("--matchers", default=None, help="comma-separated substrings of matcher names (default: all)")
  cv.add_argument("--report", type=lambda t: parse_kinds(t, extra=("lcov",)), action="extend", default=None, metavar="KINDS",
                  help="comma separated: term, json, md, html (coverage.py-like index with annotated sources), lcov (default term)")
  cv.add_argument("--fail-under", type=float, default=None, metavar="PERCENT",
                  help="exit 1 when the rules fired are under PERCENT of the rules (as coverage.py's --fail-under), after the reports")
  cv.add_argument("cmd", nargs=argparse.REMAINDER, help="the command to run under coverage (after --)")
  cv.set_defaults(fn=_cmd_coverage)
  a = sub.add_parser("amd", parents=[report_options()], help="MI350X bring-up: doctor and env")
  a.add_argument("amd_cmd", choices=["doctor", "env"], help="doctor: the bring-up checks; env: the exports for a launch script")
  a.add_argument("--root", default="/", help="filesystem root to inspect (a fixture tree in tests)")
  a.add_argument("--json", action="store_true", help="machine-readable output")
  a.set_defaults(fn=_cmd_amd)
  from uopcheck.training.run import add_arguments as train_arguments  # imports no tinygrad
  t = sub.add_parser("train", parents=[report_options(run_dir=False)],
                     help="Llama training run; --validate checks every kernel of the JIT-captured step first")
  train_arguments(t)
  t.set_defaults(fn=_cmd_train)
  sc = sub.add_parser("completion", help="print a shell completion script: eval \"$(uopcheck completion bash)\" in ~/.bashrc")
  sc.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete in")
  sc.set_defaults(fn=lambda args: _cmd_completion(args, p))
  for name, sp in sub.choices.items():   # each command's --help ends with its examples and the exit codes
    if sp.epilog is None: sp.epilog, sp.formatter_class = _epilog(name), argparse.RawDescriptionHelpFormatter
  return p

def _cmd_completion(args, parser:argparse.ArgumentParser) -> int:
  from uopcheck.completion import SHELLS
  print(SHELLS[args.shell](parser), end="")
  return EXIT_CLEAN

def unknown_arguments(parser:argparse.ArgumentParser, args, extra:list[str]) -> str:
  """one line for arguments the chosen command does not take: an option of another command (``fuzz symbolic
  --scheduler``) says whose it is -- given where it does not apply, it would otherwise be ignored silently"""
  path = " ".join(x for x in (args.cmd, getattr(args, "fuzz_cmd", None)) if x)
  flags = sorted({x.split("=")[0] for x in extra if x.startswith("--")})
  owners = {f: [c for c, sp in command_parsers(parser).items() if any(f in a.option_strings for a in sp._actions)] for f in flags}
  if not flags or not all(owners.values()): return f"{path}: unrecognized arguments: {' '.join(extra)}"
  near = sorted({o for f in flags for o in owners[f] if o.split()[0] == path.split()[0]}) or sorted({o for f in flags for o in owners[f]})
  return f"{path}: {', '.join(flags)} {'is' if len(flags) == 1 else 'are'} for {', '.join(near)} only"

def device_from_environment(given:str|None) -> str:
  """``--device`` when given; else tinygrad's ``DEV`` from the environment, obeyed -- and refused in one line when it is not
  a device uopcheck runs on (it was overridden by CPU silently); else CPU"""
  if given is not None: return given
  if not (env := os.environ.get("DEV", "")): return "CPU"
  from uopcheck.spec.admission import check_device
  return check_device(env, f"DEV={env} (from the environment, the default of --device): ")

def configure(parser:argparse.ArgumentParser, start:str|None=None) -> pathlib.Path|None:
  """the defaults of ``[tool.uopcheck]`` (uopcheck/config.py) applied to every command's options; the file, or None"""
  found = config.discover(start)
  if found is None: return None
  config.apply(found[0], found[1], command_parsers(parser))
  return found[0]

def main(argv:list[str]|None=None) -> int:
  """Exit codes, the same for every command: 0 nothing new; 1 new findings (or refuted rules, or a failing gate);
  2 usage or input error; 3 a uopcheck-internal error (its own reference failed, or an unexpected exception)."""
  from uopcheck.settings import apply_environment
  apply_environment()
  parser = build_parser()
  try: configure(parser)
  except config.ConfigError as e:
    print(f"uopcheck: {e}", file=sys.stderr)
    return EXIT_USAGE
  try: args, extra = parser.parse_known_args(argv)
  except SystemExit as e: return EXIT_USAGE if e.code else EXIT_CLEAN  # argparse: --help is 0, a usage error 2
  if extra:
    print(f"uopcheck: {unknown_arguments(parser, args, extra)}", file=sys.stderr)
    return EXIT_USAGE
  if "device" in vars(args) and args.cmd != "train":   # train leaves its default to tinygrad, which reads DEV itself
    try: args.device = device_from_environment(args.device)
    except SpecError as e:
      print(f"uopcheck: {e}", file=sys.stderr)
      return EXIT_USAGE
  if getattr(args, "report", False) is None: args.report = ["term"] if args.cmd == "coverage" else list(DEFAULT_KINDS)
  from uopcheck import compiler_output
  compiler_output.capture()   # the C compiler's per-kernel warnings: counted, shown once at the end
  started, rc = time.time(), EXIT_INTERNAL
  try:
    rc = args.fn(args)
    return rc
  except KeyboardInterrupt:
    rc = 130
    return rc
  except FindingsUnwritable as e:   # a campaign that cannot keep what it finds stops at once
    print(f"uopcheck: {e}", file=sys.stderr)
    rc = EXIT_INTERNAL
    return rc
  except Exception as e:
    from uopcheck.training.data import DatasetError
    from uopcheck.training.checkpoint import CheckpointError
    if isinstance(e, (SpecError, DatasetError, CheckpointError)):
      print(f"uopcheck: {e}", file=sys.stderr)
      rc = EXIT_USAGE
      return rc
    import traceback
    traceback.print_exc()
    print(f"uopcheck: internal error (a bug in uopcheck, not a tinygrad finding): {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
    return EXIT_INTERNAL
  finally:
    compiler_output.print_summary()
    compiler_output.release()
    if (run_dir := getattr(args, "run_dir", None)) is None: pass
    elif rc == EXIT_USAGE and not any(run_dir.iterdir()): run_dir.rmdir()   # refused its input before writing anything: no run
    else:   # a command that wrote its reports to a new run directory
      finish_run(run_dir, args.run_command, list(argv if argv is not None else sys.argv[1:]), started, rc)
      print(f"reports: {run_dir} (reports/latest)", file=sys.stderr)

if __name__ == "__main__": sys.exit(main())
