"""The census of a run's step (training/census.py): the step TinyJit captures, counted on tinygrad's NULL device without
running it, must be the step the gate checks -- the same launches, distinct kernel ASTs, copies and output elements as
the gate's own run of that step on the CPU -- since the gate's cost at 8B is extrapolated from it."""
from __future__ import annotations
import json
import numpy as np
import pytest
from uopcheck.spec.errors import SpecError
from uopcheck.training.census import Census, GateRates, KernelCount, census_in_subprocess, gate_cost, take_census
from uopcheck.training.gate import CPUGate
from uopcheck.training.model import get_config
from uopcheck.training.trainer import Trainer, TrainConfig

@pytest.mark.slow
def test_census_on_null_counts_the_data_parallel_step_the_gate_checks(tmp_path):
  c = census_in_subprocess("tiny", devices=2, batch_size=4, seq_len=16, n_layers=1, sample_k=4, timeout=600)
  tr = Trainer(get_config("tiny", n_layers=1, seq_len=16), TrainConfig(batch_size=4), devices=("CPU:0", "CPU:1"))
  tokens = np.random.default_rng(0).integers(0, 258, size=(1, 4, 17))
  res = CPUGate(tr, tmp_path, sample=(4, 0), step_reference="off").run([tokens], 1e-3)
  assert res.ok, res.table()
  kernels, copies = [r for r in res.rows if r.kind == "kernel"], [r for r in res.rows if r.kind == "copy"]
  assert copies and c.copies == sum(r.instances for r in copies) > 0
  assert (c.launches, len(c.kernels), c.kernel_launches) == (res.calls, len(kernels), sum(r.instances for r in kernels))
  assert c.total("out_elements") + c.copy_elements == res.lanes
  # two devices: each holds its planned buffers; the state is counted once, as the host snapshots it
  assert len(c.device_bytes) == 2 and all(b > c.state_bytes // 2 for b in c.device_bytes.values())
  assert c.state_bytes == sum(a.nbytes for a in tr.snapshot())
  for k in c.kernels:
    assert 0 < k.sampled_work <= k.full_work and (k.sampled_work == k.full_work or not k.cheap), k
    assert k.flops >= 0 and k.out_elements > 0
  assert any(k.contraction and not k.cheap and k.sampled_work < k.full_work for k in c.kernels)   # the matmuls are sampled
  # the JSON form round-trips; a file that is not a census is refused in one line
  assert Census.from_json(json.loads(json.dumps(c.to_json()))) == c
  with pytest.raises(ValueError, match="not a step census"): Census.from_json({"format": "uopcheck-kernel-reproducer/2"})
  with pytest.raises(ValueError, match="malformed step census"): Census.from_json({**c.to_json(), "kernels": [{"name": "x", "bogus": 1}]})

def test_census_needs_the_null_device():
  with pytest.raises(SpecError, match="NULL device"): take_census("tiny", n_layers=1, seq_len=16)

def test_gate_cost_is_the_census_work_at_the_measured_rates():
  def census(launches:int) -> Census:
    c = Census("x", 1, 1, 1, 8, 1, 10, 8, state_bytes=100, largest_launch_bytes=7)
    c.kernels = [KernelCount("mm", launches=launches, flops=1000, sampled_work=50, full_work=500, contraction=True, operand_elements=30),
                 KernelCount("add", launches=2 * launches, flops=10, sampled_work=10, full_work=10, cheap=True, operand_elements=20)]
    return c
  here, there = census(1), census(100)
  r = GateRates.measure(here, {"(in checks) CPU re-run": 2 * 1.02, "(in checks) reference": 2 * 0.7, "(in checks) Freivalds": 2 * 0.3}, steps=2)
  cost = gate_cost(there, r)
  assert cost["cpu_s"] == pytest.approx(102.0) and cost["ref_s"] == pytest.approx(70.0)
  assert cost["freivalds_s"] == pytest.approx(30.0)   # the contraction's operands only: a cheap kernel is checked lane by lane
  assert gate_cost(there, r, cpu_check="distinct")["cpu_s"] == pytest.approx(1.01)   # each kernel AST once: 1010 FLOP
  assert cost["host_bytes"] == 4 * 100 + 3 * 7
