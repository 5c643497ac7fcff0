"""Ctrl-C and child processes: a pool or campaign worker leaves Ctrl-C to its parent, which decides when to stop and keeps
what is already found. A terminal sends SIGINT to the whole process group, so a worker must ignore it from its first
instruction -- setting SIG_IGN in the worker's own code is too late for a Ctrl-C that lands while it is still importing
(seconds, under load), which then kills it mid-start and can hang the pool's teardown. Standard library only."""
from __future__ import annotations
import contextlib, signal, threading
from typing import Iterator

@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
  """SIGINT ignored in this process while the block runs, so a child started inside it (fork or spawn) begins with SIGINT
  ignored: an ignored signal stays ignored across exec, and Python installs no handler over SIG_IGN. A Ctrl-C during the
  block itself is dropped (start children here, nothing long). Off the main thread (no signal handling there) it does
  nothing."""
  if threading.current_thread() is not threading.main_thread():
    yield
    return
  old = signal.signal(signal.SIGINT, signal.SIG_IGN)
  try: yield
  finally: signal.signal(signal.SIGINT, old)
