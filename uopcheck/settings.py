"""Process-wide settings uopcheck chooses for tinygrad, applied by an explicit call -- the CLI's ``main`` and the test
suite's conftest make it -- never by importing a uopcheck module (a library user's environment is theirs).

- ``HCQ2=1`` unless set: the HCQ2 runtime is the fast path uopcheck checks by default (``fast.hcq2_mode`` switches it
  per run, whatever the environment says).
- ``CC``: Debian's clang 14 rejects ``__bf16`` arithmetic, so when the user has not chosen a compiler, the newest
  versioned clang the set-up installed."""
from __future__ import annotations
import os, shutil, sys

CLANGS = ("clang-21", "clang-20", "clang-19", "clang-18", "clang-17")

def apply_environment() -> None:
  os.environ.setdefault("HCQ2", "1")
  if "CC" not in os.environ and (cc := next((c for c in CLANGS if shutil.which(c)), None)) is not None: os.environ["CC"] = cc
  if (helpers := sys.modules.get("tinygrad.helpers")) is not None: helpers.getenv.cache_clear()   # tinygrad caches getenv
