"""argparse types every command shares, so a bad argument is one line naming it and the rule, exit 2, before any work
starts: a positive number (a budget or count of 0 would do nothing and exit 0) and a directory to write into; and the
walk over a parser's commands that the config, the completion script and the unknown-argument message share. Standard
library only (``train``'s options use them too)."""
from __future__ import annotations
import argparse, pathlib

def positive(kind:type, zero:bool=False):
  """An argparse type: a number of ``kind`` above zero (a budget or a count of 0 or less would do nothing and exit 0);
  ``zero=True``: 0 or more (a count where 0 means off)."""
  def parse(text:str):
    try: v = kind(text)
    except ValueError: raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (v >= 0 if zero else v > 0): raise argparse.ArgumentTypeError(f"must be {'0 or more' if zero else 'above 0'}, got {text}")
    return v
  parse.__name__ = f"{'non-negative' if zero else 'positive'} {kind.__name__}"
  return parse

def directory(text:str) -> str:
  """An argparse type: a directory to write into -- an existing one, or a path to make; an existing file is refused
  (before any work starts, instead of a traceback once the first file is written)"""
  if not text: raise argparse.ArgumentTypeError("an empty path")
  p = pathlib.Path(text)
  if p.exists() and not p.is_dir(): raise argparse.ArgumentTypeError(f"{text} is a file, not a directory")
  for parent in p.parents:
    if parent.exists():
      if not parent.is_dir(): raise argparse.ArgumentTypeError(f"{text}: {parent} is a file, not a directory")
      break
  return text

def command_parsers(parser:argparse.ArgumentParser, path:str="") -> dict[str, argparse.ArgumentParser]:
  """every command and sub-command by its path ("check", "fuzz", "fuzz graph") -> its parser"""
  out = {}
  for a in parser._actions:
    if isinstance(a, argparse._SubParsersAction):
      for name, sp in a.choices.items():
        out[f"{path} {name}".strip()] = sp
        out.update(command_parsers(sp, f"{path} {name}".strip()))
  return out
