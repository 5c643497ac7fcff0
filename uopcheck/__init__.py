"""uopcheck: the test-and-verification harness for tinygrad's UOp compiler.

Importing uopcheck changes nothing in tinygrad or the environment: the settings it prefers (``HCQ2=1``, a clang that
builds bfloat16) are applied by ``uopcheck.settings.apply_environment()``, which the CLI and the test suite call, and
the capture hooks are installed by the first capture (``uopcheck.fast.runner.install_hooks``). The one exception is
opt-in by environment: a process started under ``uopcheck coverage`` (``UOPCHECK_RULECOV_DIR`` set) records rule
coverage from its first import.
"""
import os

# a process started under `uopcheck coverage` (or a campaign worker of one) records rule coverage and leaves its data at exit
if os.environ.get("UOPCHECK_RULECOV_DIR"):
  os.environ.setdefault("TRACK_MATCH_STATS", "1")
  os.environ.setdefault("PARALLEL", "0")
  os.environ.setdefault("PRINT_MATCH_STATS", "0")
  from uopcheck.rulecov.data import record_at_exit
  record_at_exit()   # imports no tinygrad

__version__ = "0.1.0"
