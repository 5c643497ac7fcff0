"""A process stopped mid-write, for the tests of how a campaign stops its workers: it enters an atomic write and stays
in it until it is stopped (the window in which a kill leaves a temporary file behind)."""
import signal, sys, time
from uopcheck.atomic import replacing
from uopcheck.fuzz.supervisor import current_file, unwind_on_sigterm

def write_forever(findings_dir:str, wid:int, handle_sigterm:bool) -> None:
  if handle_sigterm: unwind_on_sigterm()
  else: signal.signal(signal.SIGTERM, signal.SIG_IGN)   # a worker deaf to SIGTERM (busy in C): only SIGKILL stops it
  with replacing(current_file(findings_dir, wid)) as tmp:
    tmp.write_text('{"program": {"half')
    while True: time.sleep(0.05)
  sys.exit(0)
