"""Importing uopcheck changes nothing in tinygrad or the environment; its hooks come with the first capture and go back."""
import os, subprocess, sys

CODE = r'''
import os, sys
env = dict(os.environ)
import tinygrad.schedule as s, tinygrad.engine.realize as r, tinygrad.engine.jit as j
orig = (s.pm_schedule, r.lower_and_compile, j.jit_lower)
import uopcheck, uopcheck.cli, uopcheck.fast, uopcheck.fast.jit_capture, uopcheck.check.harness, uopcheck.check.kernel
import uopcheck.fuzz.graph, uopcheck.fuzz.symbolic, uopcheck.training.gate
assert dict(os.environ) == env, sorted(set(os.environ.items()) ^ set(env.items()))
assert (s.pm_schedule, r.lower_and_compile, j.jit_lower) == orig, "a uopcheck import replaced a tinygrad function"
from uopcheck.fast.runner import hooks_installed, uninstall_hooks
from tinygrad import Tensor
res = uopcheck.fast.run(Tensor([1.0, 2.0]) + 1)
assert hooks_installed() and len(res.kernels) >= 1, res.kernels
uninstall_hooks()
assert (s.pm_schedule, r.lower_and_compile) == orig[:2]
from uopcheck.settings import apply_environment
apply_environment()
assert os.environ["HCQ2"] == "1"
print("ok")
'''

def test_import_changes_nothing_and_hooks_are_explicit():
  env = {k: v for k, v in os.environ.items() if k not in ("HCQ2", "CC", "UOPCHECK_RULECOV_DIR")}
  r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=300)
  assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]
