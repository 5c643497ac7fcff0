"""What the C compiler prints while tinygrad compiles kernels, captured per compile instead of flooding the terminal.

tinygrad's CPU backend runs ``$CC`` with stderr going straight to the terminal -- from this process and from its
compile-worker pool (spawned processes, ``PARALLEL``). On some CPUs clang prints ``warning: invalid feature combination:
+avx10.1-256 ...`` and ``1 warning generated`` for *every* kernel: hundreds of lines inside a results table.

``capture()`` (an explicit call: the CLI and the test suite make it; ``release()`` undoes it) points ``CC`` at a small wrapper that runs the
real compiler and appends what it printed, one block per compile, to a per-run log -- every process that inherits the
environment (tinygrad's compile workers, campaign workers) runs the same wrapper and writes to the same log. ``summary()`` shows each distinct line
once with its count. Under ``DEBUG>=1`` the wrapper also passes each compile's output through as it comes, and a failing
compile always prints it in full (and fails as before)."""
from __future__ import annotations
import atexit, os, pathlib, shlex, shutil, sys, tempfile
from collections import Counter
from dataclasses import dataclass, field

MARK = "--uopcheck-compile-end--"
# the real compiler and the log are written into the script (not read from the environment): a wrapper can never call
# itself through another one's settings
WRAPPER = """#!/bin/sh
t=$(mktemp) || exec {real} "$@"
{real} "$@" 2>"$t"; rc=$?
if [ "$rc" -ne 0 ] || [ "${{DEBUG:-0}}" -ge 1 ] 2>/dev/null; then cat "$t" >&2; fi
printf '%s\\n%s\\n' "$(cat "$t")" '{mark}' >> {log}
rm -f "$t"
exit $rc
"""

@dataclass
class CompilerOutput:
  compiles: int = 0
  noisy: int = 0                                   # compiles that printed anything
  lines: Counter = field(default_factory=Counter)  # each distinct line -> how many times it was printed

  @staticmethod
  def read(log:pathlib.Path) -> CompilerOutput:
    out = CompilerOutput()
    try: text = log.read_text(errors="replace")
    except OSError: return out
    out.compiles = text.count(MARK)
    for block in text.split(MARK + "\n")[:out.compiles]:   # one block per finished compile (a last, unfinished one is left)
      if (ls := [ln.rstrip() for ln in block.splitlines() if ln.strip()]):
        out.noisy += 1
        out.lines.update(ls)
    return out

  def summary(self) -> str:
    """one block, each distinct line once with its count; empty when the compiler printed nothing"""
    if not self.lines: return ""
    head = (f"the C compiler printed {sum(self.lines.values())} lines in {self.noisy} of {self.compiles} compiles ({len(self.lines)} distinct; "
            "DEBUG=1 shows them per compile):")
    return "\n".join([head] + [f"  {n:5d}x  {ln[:200]}" for ln, n in self.lines.most_common()])

def _ours(cc:str|None) -> bool: return cc is not None and cc == os.environ.get("UOPCHECK_CC_WRAPPER")

KEYS = ("CC", "UOPCHECK_CC_WRAPPER", "UOPCHECK_REAL_CC", "UOPCHECK_CC_LOG")
_CAPTURES: list[tuple[dict, pathlib.Path]] = []   # (the environment before, the wrapper's directory), innermost last

def active() -> bool:
  """this environment already runs compiles through a uopcheck wrapper (a parent's capture): its log collects them"""
  return _ours(os.environ.get("CC")) and pathlib.Path(os.environ.get("UOPCHECK_CC_LOG", "")).is_file()

def capture() -> pathlib.Path|None:
  """Wrap ``CC`` for this process and every process it starts; returns the log (None when there is no compiler to wrap).
  A nested capture (a uopcheck CLI started under another one, or ``main()`` called in-process) gets its own log;
  ``release`` undoes the innermost one, and the wrapper's directory is removed at exit at the latest."""
  cc = os.environ.get("CC")
  real = os.environ.get("UOPCHECK_REAL_CC") if _ours(cc) else (cc or "clang")
  if real is None or (path := shutil.which(real)) is None: return None
  d = pathlib.Path(tempfile.mkdtemp(prefix="uopcheck-cc-"))
  _CAPTURES.append(({k: os.environ.get(k) for k in KEYS}, d))
  atexit.register(shutil.rmtree, d, True)
  (log := d / "compiles.log").write_text("")
  (w := d / "cc").write_text(WRAPPER.format(real=shlex.quote(path), log=shlex.quote(str(log)), mark=MARK))
  w.chmod(0o755)
  os.environ.update(CC=str(w), UOPCHECK_CC_WRAPPER=str(w), UOPCHECK_REAL_CC=path, UOPCHECK_CC_LOG=str(log))
  if (helpers := sys.modules.get("tinygrad.helpers")) is not None: helpers.getenv.cache_clear()
  return log

def release() -> None:
  """undo the innermost capture: the environment as it was before it. Its wrapper stays on disk until this process exits
  (atexit removes it): processes started under the capture -- tinygrad's persistent compile workers -- keep its CC, and a
  wrapper removed under them failed every later cold compile with FileNotFoundError (seen in a cold-cache suite run)"""
  if not _CAPTURES: return
  before, _ = _CAPTURES.pop()
  for k, v in before.items():
    if v is None: os.environ.pop(k, None)
    else: os.environ[k] = v
  if (helpers := sys.modules.get("tinygrad.helpers")) is not None: helpers.getenv.cache_clear()

def collected() -> CompilerOutput:
  return CompilerOutput.read(pathlib.Path(log)) if (log := os.environ.get("UOPCHECK_CC_LOG")) else CompilerOutput()

def print_summary(file=None) -> None:
  if (s := collected().summary()): print(s, file=file or sys.stderr)
