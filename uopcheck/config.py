"""``[tool.uopcheck]`` in ``pyproject.toml``: a project's defaults for uopcheck's options, so a team writes its findings
directory, worker count or report kinds once (as ``[tool.pytest.ini_options]`` or ``[tool.ruff]`` do). The file is the
first ``pyproject.toml`` with a ``[tool.uopcheck]`` table found from the working directory upwards.

Keys at the top of the table apply to every command that has that option (``report = ["term", "junit"]``); a
``[tool.uopcheck.<command>]`` table applies to one command and its sub-commands (``[tool.uopcheck.fuzz] minutes = 10``
for both fuzzers, ``[tool.uopcheck.fuzz.graph] workers = 2`` for one). A key is an option's
long name (``case-timeout`` or ``case_timeout``); a relative directory is relative to the file. The command line beats
the file. Every value goes through the option's
own parser, so a bad one is the same one-line exit 2 as on the command line, naming the file and the key; an unknown key
or command is refused with a did-you-mean. ``report`` kinds given on the command line are added to the file's (the option
is repeatable). Standard library only."""
from __future__ import annotations
import argparse, difflib, os, pathlib, tomllib
from uopcheck.argtypes import directory

class ConfigError(Exception):
  """a ``[tool.uopcheck]`` table that cannot be applied: one line naming the file and the key"""

def discover(start:str|os.PathLike|None=None) -> tuple[pathlib.Path, dict]|None:
  """the first pyproject.toml with a [tool.uopcheck] table, from ``start`` (the working directory) upwards, and the table"""
  here = pathlib.Path(start or os.getcwd()).resolve()
  for d in (here, *here.parents):
    p = d / "pyproject.toml"
    try: has = p.is_file() and "uopcheck" in p.read_text()
    except OSError: has = False
    if has and (table := load(p)): return p, table
  return None

def load(path:pathlib.Path) -> dict:
  try: doc = tomllib.loads(path.read_text())
  except (OSError, tomllib.TOMLDecodeError) as e: raise ConfigError(f"{path}: not valid TOML: {e}") from None
  tool = doc.get("tool", {})
  table = tool.get("uopcheck", {}) if isinstance(tool, dict) else {}
  if not isinstance(table, dict): raise ConfigError(f"{path}: [tool.uopcheck] must be a table")
  return table

def _actions(parser:argparse.ArgumentParser) -> dict[str, argparse.Action]:
  return {a.dest: a for a in parser._actions if a.option_strings and a.dest not in ("help", "version")}

def _value(path:pathlib.Path, where:str, action:argparse.Action, raw):
  """a TOML value through the option's own parser (its type, its choices); a list for a repeatable or many-valued option"""
  name = f"{path}: [{where}] {action.option_strings[-1].lstrip('-')}"
  if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
    if not isinstance(raw, bool): raise ConfigError(f"{name}: must be true or false, got {raw!r}")
    return raw
  items = raw if isinstance(raw, list) else [raw]
  if not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in items):
    raise ConfigError(f"{name}: must be a string or number (or a list of them), got {raw!r}")
  out = []
  for x in items:
    if action.type is directory and not pathlib.Path(str(x)).is_absolute(): x = str(path.parent / str(x))   # as ruff: from the file
    try: v = action.type(str(x)) if callable(action.type) else x
    except (argparse.ArgumentTypeError, ValueError, TypeError) as e: raise ConfigError(f"{name}: {e}") from None
    if action.choices is not None and v not in action.choices:
      raise ConfigError(f"{name}: {v!r} is not one of {', '.join(map(str, action.choices))}")
    out.append(v)
  if isinstance(action, argparse._ExtendAction): return [k for v in out for k in (v if isinstance(v, list) else [v])]
  if action.nargs in ("*", "+") or isinstance(action, argparse._AppendAction): return out
  if isinstance(raw, list): raise ConfigError(f"{name}: takes one value, got a list")
  return out[0]

def apply(path:pathlib.Path, table:dict, commands:dict[str, argparse.ArgumentParser], at:str="") -> None:
  """set the defaults of ``commands`` (each command's path, "check" or "fuzz graph" -> its parser) from the table at
  ``at`` ("" for [tool.uopcheck], "fuzz" for [tool.uopcheck.fuzz]): a sub-table is a (sub-)command, a key an option of
  every command under ``at`` that has it"""
  def key_of(k:str) -> str: return k.replace("-", "_")
  where = "tool.uopcheck" + "".join(f".{w}" for w in at.split())
  under = {c: sp for c, sp in commands.items() if not at or c == at or c.startswith(at + " ")}
  for k, raw in table.items():
    if isinstance(raw, dict):   # [tool.uopcheck.<command>] or [tool.uopcheck.<command>.<sub-command>]
      sub = f"{at} {k}".strip()
      if sub not in commands:
        close = difflib.get_close_matches(k, [c.split()[-1] for c in commands if c.rpartition(" ")[0] == at], n=1)
        raise ConfigError(f"{path}: [{where}.{k}]: no such command" + (f"; did you mean {close[0]!r}?" if close else ""))
      apply(path, raw, commands, sub)
      continue
    having = {c: _actions(sp)[key_of(k)] for c, sp in under.items() if key_of(k) in _actions(sp)}
    if not having:
      every = sorted({a.option_strings[-1].lstrip("-") for sp in under.values() for a in _actions(sp).values()})
      close = difflib.get_close_matches(k, every, n=1)
      whose = f"`uopcheck {at}` has no such option" if at else "no command has this option"
      raise ConfigError(f"{path}: [{where}] {k}: {whose}" + (f"; did you mean {close[0]!r}?" if close else ""))
    for c, action in having.items(): commands[c].set_defaults(**{key_of(k): _value(path, where, action, raw)})
