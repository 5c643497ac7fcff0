"""uopcheck: the test-and-verification harness for tinygrad's UOp compiler.

Importing any ``uopcheck.*`` module first runs this file. tinygrad reads ``HCQ2`` once, when
``tinygrad.engine.realize`` is imported (``helpers.getenv`` is cached), so the default fast path
(HCQ2 on CPU) must be chosen here, before tinygrad is imported. ``HCQ2=0`` in the environment
selects the plain path for the whole process; ``uopcheck.fast.hcq2_mode`` switches per run.
"""
import os

os.environ.setdefault("HCQ2", "1")

__version__ = "0.1.0"
