"""Atomic file writes, the one way uopcheck writes a file a kill must never leave half-written (findings, reports,
coverage data, checkpoints): a temporary file beside the target, renamed over it only once it is complete.
Standard library only, so every layer may use it (the rule-coverage plugin loads before tinygrad)."""
from __future__ import annotations
import contextlib, json, os, pathlib, tempfile
from typing import Iterator

@contextlib.contextmanager
def replacing(path:str|os.PathLike) -> Iterator[pathlib.Path]:
  """a temporary path beside ``path`` to write; renamed over ``path`` when the block ends, removed if it raises"""
  p = pathlib.Path(path)
  p.parent.mkdir(parents=True, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
  os.close(fd)
  try:
    yield pathlib.Path(tmp)
    os.replace(tmp, p)
  finally:
    if os.path.exists(tmp): os.unlink(tmp)

def atomic_write(path:str|os.PathLike, data:str|bytes) -> pathlib.Path:
  with replacing(path) as tmp:
    if isinstance(data, bytes): tmp.write_bytes(data)
    else: tmp.write_text(data)
  return pathlib.Path(path)

def atomic_write_json(path:str|os.PathLike, obj, indent:int|None=1) -> pathlib.Path:
  return atomic_write(path, json.dumps(obj, indent=indent))
