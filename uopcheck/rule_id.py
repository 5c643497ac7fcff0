"""One name for a tinygrad rewrite rule everywhere uopcheck names one: ``tinygrad/<path>:<line>`` of its UPat's definition
(``UPat.location``), e.g. ``tinygrad/uop/symbolic.py:165``. ``rules verify`` keys its verdicts by it, ``fuzz/rules_known.json``
(``float:`` before it for a float refutation), a symbolic finding's ``rule``, and rule coverage's ids -- so a finding
names the rule whose verdict ``uopcheck rules verify --only NAME`` decides, and a refuted rule's coverage line is found by
the same name. Plain string work on a path: no tinygrad import."""
from __future__ import annotations

def rule_key_of(file:str, line:int) -> str:
  """the name of the rule defined at ``file`` (any path inside a tinygrad package) and ``line``"""
  return f"tinygrad/{str(file).replace(chr(92), '/').split('tinygrad/')[-1]}:{line}"

def rule_key(p) -> str:
  """the name of the rule whose pattern is ``p`` (a UPat)"""
  f, line = p.location
  return rule_key_of(f, line)
