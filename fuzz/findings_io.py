"""Findings on disk, shared by the fuzzers: where they live, atomic writes (temp file + rename, so a kill never leaves
half a file), loading a directory of reproducers (a corrupt file is skipped with one line naming it, the rest still
load), signatures, and opening hypothesis' example database with a one-line error when its path is unusable.

Two directories matter: a campaign writes *new* findings under ``DEFAULT_FINDINGS`` (outside the tracked tree), and
the reviewed corpus the suite replays is ``SHIPPED_FINDINGS``; a finding moves there only by ``uopcheck findings
promote``. A finding whose signature is in the shipped corpus is *known*, not new."""
from __future__ import annotations
import hashlib, json, os, pathlib, re, tempfile
from typing import Any, Callable
from uopcheck.spec.errors import SpecError
from uopcheck.atomic import atomic_write_json  # noqa: F401  (the fuzzers write findings through it)

DEFAULT_FINDINGS = ".uopcheck/findings"
SHIPPED_FINDINGS = pathlib.Path(__file__).resolve().parent / "findings"
from uopcheck.settings import MAX_FINDING_BYTES

# exit codes every command shares, so a CI job can gate on them
EXIT_CLEAN, EXIT_NEW, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_DIVERGED = 4   # train: the loss went non-finite (the checkpoint stays at the last good save)
EXIT_FAULT = 5      # the training gate: a nondeterministic device fault (a failing kernel wrote other bytes when re-run)
EXIT_UNWRITABLE = 75   # a campaign worker's own exit status: it stopped because the findings directory cannot be written

class FindingsUnwritable(BaseException):
  """the findings directory cannot be written (full disk, read-only, gone): the campaign stops at once, exit 3. A
  BaseException, as hypothesis takes any Exception raised in a case for that case failing, and would shrink it."""

def write_or_stop(path:str|os.PathLike, obj:Any) -> pathlib.Path:
  """a campaign's file in its findings directory (pending failure, running case, finding), or FindingsUnwritable"""
  try: return atomic_write_json(path, obj)
  except OSError as e: raise FindingsUnwritable(f"cannot write {path}: {e.strerror or e}") from None

PROBE_BYTES = 1 << 16   # a finding is at most MAX_FINDING_BYTES; a directory that cannot take this much is full

def probe_writable(directory:str|os.PathLike) -> None:
  """before a campaign starts: the findings directory exists (or is made) and takes a file, synced to disk; else
  FindingsUnwritable naming the directory and the cause"""
  d = pathlib.Path(directory)
  try:
    if d.exists() and not d.is_dir(): raise NotADirectoryError(20, "not a directory")
    d.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".probe-", suffix=".tmp")
    try:
      with os.fdopen(fd, "wb") as f:   # a buffered write: a short write is retried, and raises ENOSPC (os.write would not)
        f.write(b"\0" * PROBE_BYTES)
        f.flush()
        os.fsync(f.fileno())
    finally: os.unlink(tmp)
  except OSError as e: raise FindingsUnwritable(f"cannot write findings in {d}: {e.strerror or e}") from None

def exit_code(new:int=0, internal:int=0) -> int:
  """1 for new findings (each one is confirmed on its own, so uopcheck failing on *other* cases does not make it less
  true: a CI reads "bugs found", and the report lists the uopcheck-internal failures beside them), else 3 when uopcheck
  itself failed, else 0."""
  return EXIT_NEW if new else EXIT_INTERNAL if internal else EXIT_CLEAN

def digest(text:str) -> str: return hashlib.sha256(text.encode()).hexdigest()[:12]

# what a schema check raises on a malformed record (beside SpecError and RecursionError, each said in one line)
MALFORMED = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, MemoryError)

def read_finding(path:pathlib.Path, validate:Callable[[dict], None]) -> dict:
  """One finding file, parsed as JSON data and validated; any problem is a one-line SpecError naming the file."""
  try:
    if path.stat().st_size > MAX_FINDING_BYTES: raise ValueError(f"larger than {MAX_FINDING_BYTES} bytes")
    d = json.loads(path.read_text())
    if not isinstance(d, dict): raise ValueError("not a JSON object")
    validate(d)
  except SpecError as e: raise SpecError(f"{path.name}: corrupt finding file: {str(e).splitlines()[0][:300]}") from None
  except RecursionError: raise SpecError(f"{path.name}: corrupt finding file: nested too deeply") from None
  except (OSError, *MALFORMED) as e:
    raise SpecError(f"{path.name}: corrupt finding file: {type(e).__name__}: {e}".splitlines()[0][:300]) from None
  return d

def load_dir(directory:str|os.PathLike, pattern:str, validate:Callable[[dict], None]) -> tuple[list[tuple[pathlib.Path, dict]], list[str]]:
  """(every good finding matching ``pattern``, one line per corrupt file): a bad file never hides the others."""
  out: list[tuple[pathlib.Path, dict]] = []
  problems: list[str] = []
  d = pathlib.Path(directory)
  if not d.is_dir(): return out, problems
  for path in sorted(d.glob(pattern)):
    try: out.append((path, read_finding(path, validate)))
    except SpecError as e: problems.append(str(e))
  return out, problems

def save_smaller(out:pathlib.Path, d:dict, size:Callable[[dict], int]) -> pathlib.Path|None:
  """The findings store's one rule for a signature met again: ``d`` is written to ``out`` (atomically) unless the finding
  stored there is no larger by ``size`` (program steps, expression nodes); a stored file that cannot be read or sized is
  replaced by the good one. None when nothing was written."""
  def sizes(x:dict) -> None: size(x)   # what the store wrote is read back as valid if it can be sized
  if out.exists():
    try: old = read_finding(out, sizes)
    except SpecError: old = None
    if old is not None and size(old) <= size(d): return None
  return write_or_stop(out, d)

REDIS_KEY_PREFIX = b"uopcheck-hypothesis:"

def open_example_db(db_dir:str|None) -> Any:
  """hypothesis' example database: a ``redis://host:port[/n]`` URL is a RedisExampleDatabase every worker of a cluster
  shares (HypoFuzz's way), anything else a DirectoryBasedExampleDatabase at that path (a shared filesystem shares it too);
  None: no database. An unusable path or an unreachable Redis is a one-line SpecError."""
  if not db_dir: return None
  if db_dir.startswith(("redis://", "rediss://", "unix://")):
    shown = re.sub(r"//[^@/]*@", "//***@", db_dir)   # never print a password (redis://:PASSWORD@host)
    try:
      import redis
      from hypothesis.extra.redis import RedisExampleDatabase
      client = redis.Redis.from_url(db_dir)
      client.ping()
    except ImportError as e:
      raise SpecError(f"{shown}: a Redis example database needs the 'redis' package (pip install uopcheck[cluster]): {e}") from None
    except Exception as e: raise SpecError(f"{shown}: the Redis example database is unreachable ({type(e).__name__}: {e})") from None
    return RedisExampleDatabase(client, key_prefix=REDIS_KEY_PREFIX)
  from hypothesis.database import DirectoryBasedExampleDatabase
  p = pathlib.Path(db_dir)
  if p.exists() and not p.is_dir(): raise SpecError(f"{p}: the hypothesis example database path is a file, not a directory")
  try:
    p.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(dir=p)
    os.close(fd)
    os.unlink(probe)
  except OSError as e: raise SpecError(f"{p}: the hypothesis example database is not writable ({e.strerror or e})") from None
  return DirectoryBasedExampleDatabase(str(p))
