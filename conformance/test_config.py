"""``[tool.uopcheck]`` in pyproject.toml: a project's defaults for the options, found from the working directory upwards,
beaten by the command line, and refused in one line (exit 2) when a key or value is wrong."""
from __future__ import annotations
import json
import pytest
from uopcheck.cli import build_parser, configure, main

CONFIG = """[project]
name = "a-tinygrad-fork"
[tool.uopcheck]
report = ["term", "junit"]
[tool.uopcheck.fuzz]
findings = "my-findings"
[tool.uopcheck.fuzz.graph]
workers = 2
case-timeout = 30
[tool.uopcheck.rules]
workers = 1
"""

def test_defaults_come_from_the_nearest_pyproject_and_the_command_line_beats_them(tmp_path):
  (tmp_path / "pyproject.toml").write_text(CONFIG)
  (tmp_path / "sub" / "deeper").mkdir(parents=True)
  p = build_parser()
  assert configure(p, start=str(tmp_path / "sub" / "deeper")) == tmp_path / "pyproject.toml"
  a = p.parse_args(["fuzz", "graph"])
  assert (a.workers, a.findings, a.case_timeout, a.report) == (2, str(tmp_path / "my-findings"), 30.0, ["term", "junit"])
  a = p.parse_args(["fuzz", "graph", "--workers", "3", "--findings", "elsewhere"])
  assert (a.workers, a.findings) == (3, "elsewhere")
  assert p.parse_args(["rules", "verify"]).workers == 1 and p.parse_args(["spec"]).report == ["term", "junit"]
  assert configure(build_parser(), start=str(tmp_path.parent)) is None   # none above: the built-in defaults

def test_a_default_for_one_command_is_not_another_commands_default(tmp_path):
  """argparse shares a parent parser's option objects between the commands made from it: a default set for one command
  (``[tool.uopcheck.fuzz.graph] workers``) became every fuzzer's, and one for ``check`` every command's report directory"""
  (tmp_path / "pyproject.toml").write_text(CONFIG + '[tool.uopcheck.check]\nreport-dir = "check-reports"\n')
  p = build_parser()
  configure(p, start=str(tmp_path))
  a = p.parse_args(["fuzz", "symbolic"])
  assert (a.workers, a.case_timeout, a.findings) == (1, None, str(tmp_path / "my-findings"))   # [tool.uopcheck.fuzz] is both fuzzers'
  assert p.parse_args(["check"]).report_dir == str(tmp_path / "check-reports") and p.parse_args(["spec"]).report_dir is None

def test_a_default_for_one_fuzzer_leaves_the_other_alone(tmp_path, monkeypatch):
  """workers = 2 is fuzz graph's; fuzz symbolic runs with its own default (one campaign in this process, not the
  supervisor's workers), with the findings directory both share"""
  (tmp_path / "pyproject.toml").write_text(CONFIG)
  monkeypatch.chdir(tmp_path)
  assert main(["fuzz", "symbolic", "--minutes", "0.02", "--no-pipeline", "--report", "json", "--report-dir", str(tmp_path / "r"),
               "--db", str(tmp_path / "db")]) in (0, 1)
  assert (tmp_path / "r" / "fuzz_symbolic.junit.xml").exists() and (tmp_path / "my-findings").is_dir()
  assert "workers" not in json.loads((tmp_path / "r" / "fuzz_symbolic.json").read_text())   # a supervised run says how many

@pytest.mark.parametrize("body,says", [
  ("[tool.uopcheck.fuzz]\nworkers = 0\n", "[tool.uopcheck.fuzz] workers: must be above 0, got 0"),
  ("[tool.uopcheck.fuzz.symbolic]\nprofile = \"large\"\n", "[tool.uopcheck.fuzz.symbolic] profile: `uopcheck fuzz symbolic` has no such option"),
  ("[tool.uopcheck.fuzz.grph]\nworkers = 2\n", "[tool.uopcheck.fuzz.grph]: no such command; did you mean 'graph'?"),
  ("[tool.uopcheck.fuzz]\nwrkers = 2\n", "has no such option; did you mean 'workers'?"),
  ("[tool.uopcheck.fuzz]\nprofile = \"huge\"\n", "profile: 'huge' is not one of small, large"),
  ("[tool.uopcheck.fuzz]\nminutes = [1, 2]\n", "minutes: takes one value, got a list"),
  ("[tool.uopcheck.fuz]\nworkers = 1\n", "[tool.uopcheck.fuz]: no such command; did you mean 'fuzz'?"),
  ("[tool.uopcheck]\nreprot = [\"json\"]\n", "no command has this option; did you mean 'report'?"),
  ("[tool.uopcheck]\nreport = [\"pdf\"]\n", "unknown report kind(s) ['pdf']"),
  ("[tool.uopcheck\n", "not valid TOML"),
])
def test_a_bad_key_or_value_is_one_line_naming_the_file_and_exit_2(tmp_path, monkeypatch, capsys, body, says):
  (tmp_path / "pyproject.toml").write_text("# uopcheck\n" + body)
  monkeypatch.chdir(tmp_path)
  assert main(["spec", "--report", "term"]) == 2
  err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
  assert len(err) == 1 and str(tmp_path / "pyproject.toml") in err[0] and says in err[0], err

def _complete(tmp_path, script:str, words:list[str]) -> list[str]:
  import subprocess
  (tmp_path / "c.sh").write_text(script)
  line = " ".join(f"'{w}'" for w in words)
  out = subprocess.run(["bash", "-c", f"source {tmp_path / 'c.sh'}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _uopcheck; "
                        'printf "%s\\n" "${COMPREPLY[@]}"'], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
  return out.split()

def test_bash_completion_is_generated_from_the_parser(tmp_path, capsys):
  assert main(["completion", "bash"]) == 0
  script = capsys.readouterr().out
  assert "complete -o default -F _uopcheck uopcheck" in script
  assert _complete(tmp_path, script, ["uopcheck", "fu"]) == ["fuzz"]
  assert _complete(tmp_path, script, ["uopcheck", "fuzz", ""])[:2] == ["graph", "symbolic"]
  assert _complete(tmp_path, script, ["uopcheck", "fuzz", "graph", "--prof"]) == ["--profile"]
  assert _complete(tmp_path, script, ["uopcheck", "fuzz", "graph", "--profile", ""]) == ["small", "large"]
  assert set(_complete(tmp_path, script, ["uopcheck", "rules", "verify", "--report", ""])) >= {"term", "junit", "sarif", "github"}
  assert "--gate-sample" in _complete(tmp_path, script, ["uopcheck", "train", "--gate-"])
  assert main(["completion", "zsh"]) == 0 and "bashcompinit" in capsys.readouterr().out

def test_completion_follows_the_fuzzers_sub_commands(tmp_path, capsys):
  assert main(["completion", "bash"]) == 0
  script = capsys.readouterr().out
  graph, symbolic = (_complete(tmp_path, script, ["uopcheck", "fuzz", f, "--"]) for f in ("graph", "symbolic"))
  assert "--workers" in graph and "--no-pipeline" not in graph and "--no-pipeline" in symbolic and "--profile" not in symbolic
  assert "--workers" in symbolic and "--cluster" in symbolic   # the supervisor's flags, common to every fuzzer
