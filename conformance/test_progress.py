"""Progress in a log is plain lines at an interval, never one endless \\r line; on a terminal it is rewritten in place."""
import io
from uopcheck.progress import StatusLine, bar

class _Tty(io.StringIO):
  def isatty(self): return True

def test_a_log_gets_plain_lines_never_carriage_returns():
  out = io.StringIO()
  assert list(bar(range(5), "rules", unit="rules", stream=out, every_s=0)) == list(range(5))
  text = out.getvalue()
  assert "\r" not in text and text.splitlines()[-1].startswith("rules: 5/5 rules"), text
  out2 = io.StringIO()
  s = StatusLine(out2, every_s=3600)
  for k in range(100): s.update(f"checked {k}")
  s.close("checked 100")
  assert out2.getvalue().splitlines() == ["checked 0", "checked 100"]   # the first line, then the last: not 100 lines

def test_a_terminal_gets_one_line_rewritten_in_place():
  out = _Tty()
  s = StatusLine(out, every_s=3600)
  for k in range(3): s.update(f"checked {k}")
  s.close()
  assert out.getvalue() == "\rchecked 0\rchecked 1\rchecked 2\rchecked 2\n"
