"""Schedulers that fail the way broken compilers do, for testing the graph campaign's supervision (loaded by file path,
``conformance/fault_schedulers.py:NAME``, in the campaign's worker processes). Each wraps tinygrad's rangeify."""
from __future__ import annotations
import os, signal, time

def _stock(function):
  from tinygrad.schedule.rangeify import get_kernel_graph
  return get_kernel_graph(function)

def hang_in_python(function):
  """Never returns, in Python."""
  while True: time.sleep(0.05)

def hang_in_native_code(function):
  """Never returns and ignores signals that can be blocked (as a compiled kernel stuck in a loop)."""
  signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1})
  while True: time.sleep(0.05)

def segfault(function):
  """Kills the worker process, as a kernel writing out of bounds does."""
  os.kill(os.getpid(), signal.SIGSEGV)
  return _stock(function)

def slow_stock(function):
  """Stock rangeify, half a second late: cases last long enough for a test to act on a worker mid-case."""
  time.sleep(0.5)
  return _stock(function)
