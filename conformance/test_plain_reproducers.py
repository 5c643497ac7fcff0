"""The tinygrad bugs shipped as plain-tinygrad reproducers (conformance/plain_reproducers.py): each fails, in a fresh
interpreter within its time limit, under every environment it names (strict xfail: a fix shows up as XPASS), and its
control passes (so a reproducer that broke for another reason is not mistaken for a fix). A hang reproducer that returns,
right or wrong, is a real failure (the xfail covers only AssertionError), not an expected one."""
from __future__ import annotations
import pytest
from conformance.plain_reproducers import REPRODUCERS, run_plain

FAILING = [(r, env) for r in REPRODUCERS for env in r.fails_under]

@pytest.mark.parametrize("r,env", FAILING, ids=[f"{r.name}-{'-'.join(f'{k}={v}' for k, v in env.items())}" for r, env in FAILING])
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="known tinygrad 0.14.0 bug; see conformance/plain_reproducers.py")
def test_plain_reproducer_fails(r, env):
  out = run_plain(r, env)
  if r.hangs:
    if not out.timed_out: raise RuntimeError(f"the hang reproducer returned ({out.detail}): it no longer shows this bug as a hang")
    raise AssertionError(f"{out.detail}\n{r.what}\ncause: {r.cause}")
  assert out.right, f"{out.detail}\n{r.what}\ncause: {r.cause}"

CONTROLS = [r for r in REPRODUCERS if r.control_env is not None]

@pytest.mark.parametrize("r", CONTROLS, ids=[r.name for r in CONTROLS])
def test_plain_reproducer_control_is_right(r):
  out = run_plain(r, r.control_env)
  assert out.right and not out.timed_out, out.detail

_API_AFTER_DIRTY_FREE = """
import json
from tinygrad import Tensor, dtypes
Tensor([3000000000, 1], dtype=dtypes.uint32).realize()   # the reproducer's dirty 8-byte free, before uopcheck is imported
from uopcheck.fuzz.graph import check_program
v = check_program({"inputs": [{"shape": [4, 4], "dtype": "float32", "seed": 3, "kind": "normal"}],
                   "steps": [["unary", "relu", 0], ["reduce", "max", 1, [1], False]], "outputs": [2]})
print(json.dumps({"ok": v.ok, "kind": v.kind}))
"""

def test_python_api_check_is_not_hung_by_the_stale_queue_counter():
  # uopcheck's workaround (fast/runner.open_cpu_queues) must hold for a Python-API user too: HCQ2=1 exported, no
  # apply_environment, a dirty 8-byte buffer freed before the first check. Without it: a crash verdict, then a hang.
  import json, os, subprocess, sys
  p = subprocess.run([sys.executable, "-c", _API_AFTER_DIRTY_FREE], env={**os.environ, "HCQ2": "1"}, capture_output=True,
                     text=True, timeout=120)
  assert p.returncode == 0, p.stderr[-2000:]
  assert json.loads(p.stdout.strip().splitlines()[-1]) == {"ok": True, "kind": None}
