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
