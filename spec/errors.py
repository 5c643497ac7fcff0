"""The one error type of uopcheck's spec: a UOp (or file) broke a named rule."""
from __future__ import annotations
from typing import Any


from uopcheck.settings import MAX_MESSAGE

class SpecError(Exception):
  """Raised for bad input: an unknown op, a malformed graph, or a spec violation.

  The message is one line: the op, its dtype and shape (when known), and the rule it broke."""
  def __init__(self, rule:str, op:Any=None, dtype:Any=None, shape:Any=None, detail:str=""):
    self.rule, self.op, self.dtype, self.shape, self.detail = rule, op, dtype, shape, detail
    parts = [f"{op}" if op is not None else None, f"dtype={dtype}" if dtype is not None else None,
             f"shape={shape}" if shape is not None else None]
    where = " ".join(p for p in parts if p)
    msg = " ".join(f"{where + ': ' if where else ''}{rule}{' — ' + detail if detail else ''}".split())  # always one line
    super().__init__(msg if len(msg) <= MAX_MESSAGE else msg[:MAX_MESSAGE - 3] + "...")

  @classmethod
  def at(cls, u:Any, rule:str, detail:str="") -> "SpecError":
    """A SpecError naming the UOp ``u`` (op, dtype, and shape when it has one)."""
    try: shape = u._shape
    except Exception: shape = "?"
    return cls(rule, getattr(u, "op", u), getattr(u, "dtype", None), shape, detail)


class KernelFault(SpecError):
  """The kernel AST itself is undefined where it ran: an INDEX out of its buffer's bounds, or lanes that write different
  values to one element (a race). A verdict about the program tinygrad made -- its scheduler or codegen -- never a limit
  of uopcheck's reference (those stay plain SpecErrors: uopcheck-internal)."""

def first_line(e:BaseException) -> str:
  """an exception as one short line: its type and the first line of its message (a crash verdict's text)"""
  return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"
