"""Per-run report directories: every command that writes a report writes it under ``reports/runs/<UTC time>-<command>/``
(never over the last run's, even a partial one), with ``run.json`` (the command line, when, how long, the exit code),
and then points ``reports/latest`` and ``reports/latest-<command>`` at it. ``--report-dir DIR`` writes to DIR instead.
``report`` is how a command hands its ``Result`` to the renderers its ``--report`` option names."""
from __future__ import annotations
import os, pathlib, sys, time
from uopcheck.atomic import atomic_write_json
from uopcheck.results import Result, RENDERERS, DEFAULT_KINDS, emit

BASE = "reports"

def new_run_dir(command:str, base:str|os.PathLike=BASE) -> pathlib.Path:
  root = pathlib.Path(base) / "runs"
  stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
  for n in range(1000):
    d = root / (f"{stamp}-{command}" + (f"-{n}" if n else ""))
    try:
      d.mkdir(parents=True)
      return d
    except FileExistsError: continue
  raise RuntimeError(f"no free run directory under {root}")

def _point(link:pathlib.Path, target:pathlib.Path) -> None:
  """``link`` -> ``target`` (relative), replaced atomically: a reader sees the old run or the new one"""
  tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
  tmp.unlink(missing_ok=True)
  tmp.symlink_to(os.path.relpath(target, link.parent))
  os.replace(tmp, link)

def finish_run(run_dir:pathlib.Path, command:str, argv:list[str], started:float, rc:int, base:str|os.PathLike=BASE) -> None:
  atomic_write_json(run_dir / "run.json", {"command": command, "argv": ["uopcheck", *argv], "started_utc": time.strftime(
    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "seconds": round(time.time() - started, 2), "exit_code": rc, "cwd": os.getcwd()})
  try:
    _point(pathlib.Path(base) / "latest", run_dir)
    _point(pathlib.Path(base) / f"latest-{command}", run_dir)
  except OSError as e: print(f"uopcheck: could not update {base}/latest ({e}); the run is in {run_dir}", file=sys.stderr)

def resolve(args, command:str) -> pathlib.Path:
  """the directory this command writes its reports to: ``--report-dir`` when given, else this run's directory (made on
  the first call: a campaign's live status goes there from its first second, its reports at the end)"""
  if getattr(args, "report_dir", None): return pathlib.Path(args.report_dir)
  if getattr(args, "run_dir", None) is None: args.run_dir, args.run_command = new_run_dir(command), command
  return args.run_dir

def writes_files(args) -> bool:
  """whether this run's ``--report`` kinds write files (``--report term`` alone writes none and makes no run directory)"""
  kinds = list(getattr(args, "report", None) or DEFAULT_KINDS)
  return any(k in RENDERERS and RENDERERS[k].suffix for k in kinds)

def live_status(args, command:str):
  """the run's live status (uopcheck.live) in its run directory, or None when the run writes no files"""
  if not writes_files(args): return None
  from uopcheck.live import LiveStatus
  return LiveStatus(resolve(args, command), command)

def report(args, result:Result, command:str, live:bool=False) -> dict[str, pathlib.Path]:
  """print and write ``result`` as ``--report`` asks (default: terminal and JSON); a file kind goes to this run's directory"""
  kinds = list(getattr(args, "report", None) or DEFAULT_KINDS)
  return emit(result, kinds, resolve(args, command) if writes_files(args) else None, live=live)
