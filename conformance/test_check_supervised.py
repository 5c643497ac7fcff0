"""``uopcheck check`` gives every graph a verdict (uopcheck/check/supervised.py): a tinygrad that raises or segfaults on
one graph costs that graph a CRASH row -- confirmed by plain tinygrad in a fresh process -- and the rest are still
checked; the table completes and the exit is 1 (tinygrad's), never 3 (uopcheck's) or a dead process. The tinygrad under
test is a private copy with the bug written in (as ``uopcheck mutate`` makes them), first on PYTHONPATH."""
from __future__ import annotations
import json, os, pathlib, shutil, subprocess, sys
from uopcheck.fuzz.mutate import tinygrad_dir
from uopcheck.check import supervised

ROOT = pathlib.Path(__file__).resolve().parent.parent
OP = "mixin/op.py"
ARGMAX = "  def argmax(self, axis=None, keepdim=False) -> Self:\n"
SOFTMAX = "  def softmax(self, axis=-1, dtype:DTypeLike|None=None) -> Self:\n"

def _broken_tinygrad(tmp:pathlib.Path) -> pathlib.Path:
  """tinygrad whose argmax raises (as a variant's 'invalid shrink' did) and whose softmax segfaults the process"""
  site = tmp / "site"
  shutil.copytree(tinygrad_dir(), site / "tinygrad", ignore=shutil.ignore_patterns("__pycache__"))
  f = site / "tinygrad" / OP
  text = f.read_text()
  assert text.count(ARGMAX) == 1 and text.count(SOFTMAX) == 1
  text = text.replace(ARGMAX, ARGMAX + "    raise RuntimeError('invalid shrink (a broken tinygrad variant)')\n")
  text = text.replace(SOFTMAX, SOFTMAX + "    import os, signal; os.kill(os.getpid(), signal.SIGSEGV)\n")
  f.write_text(text)
  return site

def _check(args:list[str], tmp:pathlib.Path, site:pathlib.Path|None=None) -> tuple[subprocess.CompletedProcess, list[dict]]:
  env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
  if site is not None: env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
  p = subprocess.run([sys.executable, "-m", "uopcheck.cli", "check", *args, "--report", "term", "--json", str(tmp / "rows.json")],
                     capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
  rows = json.loads((tmp / "rows.json").read_text()) if (tmp / "rows.json").exists() else []
  return p, rows

def test_a_tinygrad_that_raises_or_segfaults_gets_crash_rows_and_the_table_completes(tmp_path):
  p, rows = _check(["argmax", "softmax", "matmul"], tmp_path, _broken_tinygrad(tmp_path))
  assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
  by = {r["graph"]: r for r in rows}
  assert list(by) == ["argmax", "softmax", "matmul"]                                   # every graph has its row, in order
  assert by["argmax"]["result"] == "CRASH" and "invalid shrink" in by["argmax"]["error"]
  assert by["argmax"]["confirmed"].startswith("raises: RuntimeError: invalid shrink")  # plain tinygrad raises too
  assert by["softmax"]["result"] == "CRASH" and "SIGSEGV" in by["softmax"]["error"] and by["softmax"]["confirmed"] == "killed by SIGSEGV"
  assert by["matmul"]["result"] == "PASS"                                              # checked after the segfault, in a new worker
  assert "internal error" not in p.stderr and "1/3 graphs agree" in p.stdout

def test_a_candidate_scheduler_that_segfaults_is_the_candidates_crash_row(tmp_path):
  p, rows = _check(["matmul", "argmax", "--scheduler", "conformance/fault_schedulers.py:segfault"], tmp_path)
  assert p.returncode == 1, p.stderr[-2000:]
  assert [r["result"] for r in rows] == ["CRASH", "CRASH"] and all("SIGSEGV" in r["error"] for r in rows), rows
  assert all("candidate scheduler" in r["confirmed"] for r in rows), rows

def test_a_graph_past_its_time_limit_is_a_hang_row(tmp_path):
  p, rows = _check(["matmul", "--scheduler", "conformance/fault_schedulers.py:hang_in_native_code", "--graph-timeout", "15"], tmp_path)
  assert p.returncode == 1 and [r["result"] for r in rows] == ["HANG"], (p.stderr[-1500:], rows)

def test_a_crash_plain_tinygrad_does_not_share_is_uopchecks_for_that_row_only():
  row = supervised._settle(supervised.GraphRow("matmul", "CRASH", "CPU", error="crash: KeyError: injected"), None, True, 300)
  assert row.result == "INTERNAL" and row.confirmed == "returns" and "only under uopcheck's capture" in row.note

SPLIT = "sub_axis = (new_rng * old_sz + replaced_rng) if top else (replaced_rng * amount + new_rng)"

def test_per_kernel_blame_names_the_optimizer_apart_from_the_scheduler(tmp_path):
  """a wrong axis split in the kernel optimizer (codegen/opt/postrange.py shift_to) is codegen's: the same graph agrees
  with NOOPT=1, and the verdict says the optimizer (it once said 'scheduler' for such a bug)"""
  site = tmp_path / "site"
  shutil.copytree(tinygrad_dir(), site / "tinygrad", ignore=shutil.ignore_patterns("__pycache__"))
  f = site / "tinygrad" / "codegen/opt/postrange.py"
  assert f.read_text().count(SPLIT) == 1
  f.write_text(f.read_text().replace(SPLIT, SPLIT.replace("replaced_rng * amount + new_rng", "replaced_rng * (amount - 1) + new_rng")))
  env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "CACHELEVEL": "0", "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
  p = subprocess.run([sys.executable, "-m", "uopcheck.cli", "check", "embedding", "--per-kernel", "--report", "term"], capture_output=True,
                     text=True, cwd=ROOT, env=env, timeout=600)
  verdict = next(ln for ln in p.stdout.splitlines() if ln.startswith("verdict:"))
  assert p.returncode == 1 and "the kernel optimizer, codegen/opt" in verdict, p.stdout[-2000:] + p.stderr[-1000:]
