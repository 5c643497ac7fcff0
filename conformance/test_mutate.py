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

def test_the_catalog_has_mutants_only_the_amd_path_can_see():
  amd = [m for m in MUTANTS if m.device.startswith("MOCK+AMD")]
  assert len(amd) >= 3 and len({m.layer for m in amd}) >= 3       # renderer, tensor cores, runtime: three AMD-only layers

@pytest.mark.amd_emulated
def test_an_amd_only_mutant_is_blind_on_cpu_and_killed_on_emulated_mi350x():
  from uopcheck.fast.devices import mock_gpu_source, llvm22_library
  import os
  if mock_gpu_source() is None:
    pytest.skip("tinygrad's mock GPU (test/mockgpu) not found: set TINYGRAD_SRC or put ../shared/tinygrad-src beside the checkout")
  if llvm22_library() is None and not os.environ.get("LLVM_PATH"): pytest.skip("gfx950 needs libllvm22 (make amdllvm) or LLVM_PATH")
  rows = mutate.run(["amd-mfma-operands-swapped"], ("check",), check_graphs=["matmul_half"], progress=lambda s: None)
  r = rows[0]
  assert r.live == "live" and r.cpu_path == "blind" and r.device == "MOCK+AMD::gfx950", r     # wrong on the AMD path, right on the CPU
  assert r.caught_by == "check" and "matmul_half" in r.detectors["check"], r
