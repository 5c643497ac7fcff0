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

_interrupted = threading.Event()

@contextlib.contextmanager
def sticky_sigint() -> Iterator[None]:
  """Ctrl-C raises KeyboardInterrupt as usual while the block runs, and is also remembered: one that lands while Python
  runs a ``__del__`` (z3's ``Context.__del__`` during garbage collection) is printed as "Exception ignored" and lost
  there, and a campaign would run on to its deadline (seen once in CI: ``fuzz symbolic`` ignored a Ctrl-C for over 60 s).
  Long loops call ``raise_if_interrupted()`` between cases. An exception that escapes the block after a Ctrl-C landed is
  that Ctrl-C: ctypes wraps a KeyboardInterrupt raised inside a C call's error check (z3's) as ``ArgumentError: argument
  1: KeyboardInterrupt``, which CI once saw reported as a uopcheck internal error (exit 3, not 130). Off the main thread
  it does nothing."""
  if threading.current_thread() is not threading.main_thread():
    yield
    return
  _interrupted.clear()
  def remember(signum, frame):
    _interrupted.set()
    raise KeyboardInterrupt
  old = signal.signal(signal.SIGINT, remember)
  try: yield
  except Exception as e:
    if _interrupted.is_set(): raise KeyboardInterrupt from e
    raise
  finally:
    signal.signal(signal.SIGINT, old)
    _interrupted.clear()

def raise_if_interrupted() -> None:
  """KeyboardInterrupt if a Ctrl-C landed inside ``sticky_sigint()`` (even one a ``__del__`` swallowed)"""
  if _interrupted.is_set(): raise KeyboardInterrupt
