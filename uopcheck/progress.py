"""Progress for long work, as a terminal and a log each want it: on a terminal a live line (tqdm, or one status line
rewritten in place); when the stream is not a terminal (CI logs, ``| tee``), plain lines -- one at the start, then one
every ``every_s`` seconds, then the last -- never one endless ``\\r`` line, and never minutes of silence."""
from __future__ import annotations
import sys, time
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")
LOG_EVERY_S = 15.0

def is_terminal(stream) -> bool:
  try: return stream.isatty()
  except (AttributeError, ValueError): return False

class StatusLine:
  """one status line: ``update(text)`` as the work goes, ``close(text)`` at the end"""
  def __init__(self, stream=None, every_s:float=LOG_EVERY_S, enabled:bool=True):
    self.stream, self.every_s, self.enabled = stream or sys.stderr, every_s, enabled
    self.tty, self.last, self.shown = is_terminal(self.stream), -1e9, ""
  def update(self, text:str) -> None:
    if not self.enabled: return
    now = time.monotonic()
    if self.tty: print("\r" + text, end="", file=self.stream, flush=True)
    elif now - self.last >= self.every_s: print(text, file=self.stream, flush=True)
    else: return
    self.last, self.shown = now, text
  def close(self, text:str|None=None) -> None:
    if not self.enabled: return
    text = text if text is not None else self.shown
    if self.tty: print("\r" + text, file=self.stream, flush=True)
    elif text and text != self.shown: print(text, file=self.stream, flush=True)

def bar(items:Iterable[T], desc:str, total:int|None=None, unit:str="it", stream=None, enabled:bool=True, every_s:float=LOG_EVERY_S) -> Iterator[T]:
  """tqdm on a terminal; plain "desc: i/total unit" lines every ``every_s`` seconds elsewhere"""
  stream = stream or sys.stderr
  if total is None and hasattr(items, "__len__"): total = len(items)  # type: ignore[arg-type]
  if not enabled:
    yield from items
    return
  if is_terminal(stream):
    from tqdm import tqdm
    yield from tqdm(items, desc=desc, total=total, unit=unit, file=stream, leave=False)
    return
  line, start = StatusLine(stream, every_s), time.monotonic()
  of = f"/{total}" if total is not None else ""
  i = 0
  for i, x in enumerate(items, 1):
    line.update(f"{desc}: {i - 1}{of} {unit} ({time.monotonic() - start:.0f} s)")
    yield x
  line.close(f"{desc}: {i}{of} {unit} ({time.monotonic() - start:.0f} s)")
