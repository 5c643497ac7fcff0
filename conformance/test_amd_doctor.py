"""``uopcheck amd doctor`` against fixture trees: the right verdict and the exact fix for each failure mode,
a plain "no AMD GPU" on this machine, and ``amd env`` derived from what doctor found."""
from __future__ import annotations
import json, os, subprocess, sys
import pytest
from uopcheck.amd import doctor, fixtures

@pytest.mark.parametrize("mode", [m for m in fixtures.FAILURE_MODES if m != "healthy"])
def test_amd_doctor_names_each_failure_mode_and_its_fix(mode, tmp_path):
  rep = doctor.run(fixtures.build(mode, tmp_path), env={})
  check, phrase = fixtures.EXPECTED[mode]
  failing = {c.name: c for c in rep.checks if c.status == "fail"}
  assert check in failing, rep.table()
  assert phrase in failing[check].fix or phrase in rep.table(), failing[check]
  assert rep.verdict == ("no-amd-gpu" if mode == "no_gpu" else "not-ready") and rep.exit_code != 0

def test_amd_doctor_healthy_box_is_ready(tmp_path):
  rep = doctor.run(fixtures.build("healthy", tmp_path), env={})
  assert rep.verdict == "ready" and rep.exit_code == 0, rep.table()
  assert {c.status for c in rep.checks} == {"pass"}

def test_amd_doctor_knows_tinygrad_pci_ids():
  ids = doctor.tinygrad_known_pci_ids()
  assert 0x75a0 in ids and 0x75b0 not in ids  # tinygrad 0.14.0 lists MI350X's 0x75a0 but not 0x75b0

def test_amd_doctor_json_and_env(tmp_path):
  root = fixtures.build("rocm_nondefault_comgr33", tmp_path)
  out = subprocess.run([sys.executable, "-m", "uopcheck.cli", "amd", "doctor", "--root", str(root), "--json"], capture_output=True, text=True)
  assert out.returncode == 1
  d = json.loads(out.stdout)
  assert d["verdict"] == "not-ready" and any(c["name"] == "rocm root" and c["status"] == "fail" for c in d["checks"])
  env = subprocess.run([sys.executable, "-m", "uopcheck.cli", "amd", "env", "--root", str(fixtures.build("healthy", tmp_path))],
                       capture_output=True, text=True).stdout
  assert "export DEV=AMD" in env and "export HCQ2=1" in env and "export ROCM_PATH=/opt/rocm" in env and "COMGR_PATH=" in env and "CC=clang-20" in env

@pytest.mark.skipif(os.path.exists("/dev/kfd"), reason="this machine has an AMD GPU")
def test_amd_doctor_on_this_machine_says_no_amd_gpu():
  out = subprocess.run([sys.executable, "-m", "uopcheck.cli", "amd", "doctor"], capture_output=True, text=True)
  assert out.returncode == 2 and "NO AMD GPU" in out.stdout

@pytest.mark.amd_hw
@pytest.mark.skipif(not os.path.exists("/dev/kfd"), reason="needs an AMD GPU (/dev/kfd): the real box's doctor run")
def test_amd_doctor_on_hardware_is_ready():
  assert doctor.run("/").verdict == "ready"

def test_amd_doctor_finds_tinygrad_extra_on_pythonpath_and_exports_it(tmp_path):
  root = fixtures.build("no_tinygrad_extra", tmp_path)
  (root / "src/tg/extra/hcq2").mkdir(parents=True)
  (root / "src/tg/extra/hcq2/ops_amd2.py").write_text("")
  rep = doctor.run(root, env={"PYTHONPATH": "/src/tg"})
  assert rep.verdict == "ready" and rep.env["PYTHONPATH"] == "/src/tg", rep.table()
