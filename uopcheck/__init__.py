"""uopcheck: the test-and-verification harness for tinygrad's UOp compiler.

Importing any ``uopcheck.*`` module first runs this file. tinygrad reads ``HCQ2`` once, when
``tinygrad.engine.realize`` is imported (``helpers.getenv`` is cached), so the default fast path
(HCQ2 on CPU) must be chosen here, before tinygrad is imported. ``HCQ2=0`` in the environment
selects the plain path for the whole process; ``uopcheck.fast.hcq2_mode`` switches per run.
"""
import os, shutil

os.environ.setdefault("HCQ2", "1")

# tinygrad's CPU backend runs ``$CC`` (default ``clang``). Debian 12's clang 14 rejects ``__bf16`` arithmetic,
# so when the user hasn't chosen a compiler, prefer the newest versioned clang the set-up installed.
if "CC" not in os.environ:
  for _cc in ("clang-20", "clang-19", "clang-18", "clang-17"):
    if shutil.which(_cc):
      os.environ["CC"] = _cc
      break

# a process started under `uopcheck coverage` (or a campaign worker of one) records rule coverage and leaves its data at exit
if os.environ.get("UOPCHECK_RULECOV_DIR"):
  os.environ.setdefault("TRACK_MATCH_STATS", "1")
  os.environ.setdefault("PARALLEL", "0")
  os.environ.setdefault("PRINT_MATCH_STATS", "0")
  from uopcheck import rulecov as _rulecov  # noqa: F401  (registers the exit hook; imports no tinygrad)

__version__ = "0.1.0"
