"""uopcheck mutate: every mutant applies to tinygrad 0.14.0 exactly once, only ever to a private copy, its witness shows
it live, and a detector catches it (one mutant end to end here; the whole catalog's score is bench/mutation_score.py)."""
from __future__ import annotations
import hashlib
import pytest
from uopcheck.fuzz import mutate
from uopcheck.fuzz.mutants import MUTANTS, BY_ID
from uopcheck.spec import SpecError

def test_mutant_catalog_applies_and_spans_the_layers():
  assert len(MUTANTS) >= 20 and len({m.id for m in MUTANTS}) == len(MUTANTS)
  assert len({m.layer for m in MUTANTS}) >= 8
  for m in MUTANTS: assert mutate.check_applies(m) > 0 and m.old != m.new

def test_a_mutant_is_applied_to_a_private_copy_only(tmp_path):
  m = BY_ID["reduce-max-identity"]
  installed = mutate.tinygrad_dir() / m.file
  before = hashlib.sha256(installed.read_bytes()).hexdigest()
  site = mutate.make_copy(m, tmp_path)
  assert m.new in (site / "tinygrad" / m.file).read_text() and m.old not in (site / "tinygrad" / m.file).read_text()
  assert hashlib.sha256(installed.read_bytes()).hexdigest() == before
  assert mutate.witness(m, None, tmp_path)[0] is True                  # the witness agrees with numpy on stock tinygrad
  same, which = mutate.witness(m, site, tmp_path)
  assert same is False and which.startswith(str(site))                 # and not under the mutant, which is the copy that ran

def test_a_mutant_whose_text_is_missing_is_refused(tmp_path):
  import dataclasses
  bad = dataclasses.replace(BY_ID["index-flip"], old="this text is not in tinygrad")
  with pytest.raises(SpecError, match="occurs 0 times"): mutate.check_applies(bad)

def test_the_check_detector_kills_the_add_identity_mutant():
  rows = mutate.run(["reduce-add-identity"], ("check",), check_graphs=["matmul_relu_sum", "argmax"], progress=lambda s: None)
  assert rows[0].live == "live" and rows[0].caught_by == "check", rows[0]
  assert "matmul_relu_sum" in rows[0].detectors["check"]               # the failing graph is named
