"""Atomic file writes, the one way uopcheck writes a file a kill must never leave half-written (findings, reports,
coverage data, checkpoints): a temporary file beside the target, renamed over it only once it is complete.
Standard library only, so every layer may use it (the rule-coverage plugin loads before tinygrad)."""
from __future__ import annotations
import contextlib, glob, json, os, pathlib, tempfile
from typing import Iterator

def _umask() -> int:
  """the process umask: read from /proc where it can be (setting it to read it is not thread-safe), else set and restored"""
  try:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
      if line.startswith("Umask:"): return int(line.split()[1], 8)
  except (OSError, ValueError): pass
  mask = os.umask(0)
  os.umask(mask)
  return mask

@contextlib.contextmanager
def replacing(path:str|os.PathLike) -> Iterator[pathlib.Path]:
  """a temporary path beside ``path`` to write; renamed over ``path`` when the block ends, removed if it raises. The file
  gets the mode an ordinary ``open()`` would give it (0666 less the umask: 0644 usually), not mkstemp's 0600 -- a CI
  artefact step running as another user must be able to read a report."""
  p = pathlib.Path(path)
  p.parent.mkdir(parents=True, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
  os.close(fd)
  try:
    yield pathlib.Path(tmp)
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, p)
  finally:
    if os.path.exists(tmp): os.unlink(tmp)

def remove_orphans(path:str|os.PathLike) -> list[pathlib.Path]:
  """remove the temporary files ``replacing(path)`` leaves when its process is killed mid-write (SIGKILL runs no
  ``finally``); call it only once the writer is known dead, as another writer's temporary file is its work in progress"""
  p = pathlib.Path(path)
  gone = sorted(p.parent.glob(f".{glob.escape(p.name)}.*.tmp"))
  for t in gone: t.unlink(missing_ok=True)
  return gone

def atomic_write(path:str|os.PathLike, data:str|bytes) -> pathlib.Path:
  with replacing(path) as tmp:
    if isinstance(data, bytes): tmp.write_bytes(data)
    else: tmp.write_text(data)
  return pathlib.Path(path)

def atomic_write_json(path:str|os.PathLike, obj, indent:int|None=1) -> pathlib.Path:
  return atomic_write(path, json.dumps(obj, indent=indent))
