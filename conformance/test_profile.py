"""HCQ2 profiling on CPU-HCQ2: a consistent profile (uopcheck/check/profile.py), and DEBUG=2 timing still printed per kernel."""
from __future__ import annotations
import contextlib, io, re
import pytest
from tinygrad.helpers import Context
from uopcheck import fast
from uopcheck.check import catalog
from uopcheck.check.profile import check_profile

@pytest.mark.parametrize("name", ["softmax", "attention", "llama_block"])
def test_profile_is_consistent_on_cpu_hcq2(name):
  rep = check_profile(catalog.REAL_GRAPHS[name])
  assert rep.kernels >= 2 and len(rep.entries) == rep.kernels
  assert rep.ok, rep.problems
  assert all(e >= s for _, _, s, e in rep.entries) and sum(e - s for _, _, s, e in rep.entries) > 0

def test_profile_debug2_timing_still_works():
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf), Context(DEBUG=2):
    res = fast.run(catalog.softmax(), check_spec=False)
  lines = [l for l in buf.getvalue().splitlines() if " tm " in l]
  names = {re.sub(r"\x1b\[[0-9;]*m", "", k.name) for k in res.kernels}
  assert len(lines) >= len(res.kernels), buf.getvalue()[-2000:]
  assert all(re.search(r"tm\s+[\d.]+(us|ms|s)", re.sub(r"\x1b\[[0-9;]*m", "", l)) for l in lines)
  assert names <= {n for n in names if any(n in re.sub(r"\x1b\[[0-9;]*m", "", l) for l in lines)}

@pytest.mark.amd_hw
def test_profile_on_amd_hardware():
  import os
  if not os.path.exists("/dev/kfd"): pytest.skip("needs an AMD GPU (/dev/kfd): hardware profile check")
  rep = check_profile(lambda: catalog.softmax(), device="AMD")
  assert rep.ok, rep.problems
