"""Freivalds' check of contraction kernels (ref/freivalds.py), alone and as the gate's third check (training/gate.py).

It must (a) pass the device's product whenever every lane is within the per-lane tolerance -- at the edge of it, whatever
the signs --, (b) catch a wrong lane that the sampled reference does not evaluate, and a systematic index bug, (c) say why
it does not apply (and then leave the verdict to the sampled lanes) rather than guess, and (d) never build the M*N*K
product. Each kernel here is tinygrad's own AST for the expression, scheduled by tinygrad."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor, Device, dtypes
from tinygrad.uop.ops import UOp
from uopcheck import fast
from uopcheck.check.kernel import check_kernel_step
from uopcheck.check.tolerance import tolerance_for
from uopcheck.spec.compare import compare
from uopcheck.fast.stepper import Step
from uopcheck.ref.kernel_interp import KernelInterpreter, BufferState
from uopcheck.ref.freivalds import check_contractions
from uopcheck.training.gate import check_step_kernel

M, K, N = 48, 40, 56

def _operands(seed:int=0) -> tuple[np.ndarray, np.ndarray]:
  r = np.random.default_rng(seed)
  return r.standard_normal((M, K)).astype(np.float32), r.standard_normal((K, N)).astype(np.float32)

def _kernel(build) -> UOp:
  """the last kernel tinygrad schedules for ``build()`` (the contraction, for the expressions here)"""
  return fast.run(build(), check_spec=False).kernels[-1].ast

def _bufs(ast:UOp, *inputs:np.ndarray) -> dict[int, BufferState]:
  """slot 0 the output (zeros), then the inputs in slot order"""
  out = int(max(p.max_numel() for p in KernelInterpreter(ast).params().values()))
  return {0: BufferState.of(np.zeros(out, np.float32)), **{i + 1: BufferState.of(x) for i, x in enumerate(inputs)}}

def _matmul(positive:bool=False) -> tuple[UOp, dict[int, BufferState], np.ndarray]:
  """a 48x40 @ 40x56 float32 matmul kernel, its arguments, and the reference's product; ``positive``: |a|, |b| (then the
  magnitude bound of a lane is the lane itself: the bound has no slack from cancelling terms)"""
  a, b = _operands()
  if positive: a, b = np.abs(a), np.abs(b)
  ast = _kernel(lambda: Tensor(a) @ Tensor(b))
  bufs = _bufs(ast, a, b)
  return ast, bufs, KernelInterpreter(ast).run(bufs)[0].value   # the reference's own product

def _check(ast:UOp, bufs, device:np.ndarray, seed:int=0, trials:int=2):
  return check_contractions(ast, bufs, {0: device}, tolerance_for(ast, dtypes.float32), seed, trials)

def test_the_reference_product_passes_and_every_lane_is_covered_without_the_product():
  ast, bufs, ref = _matmul()
  v = _check(ast, bufs, ref)
  assert v.applies and v.ok and v.lanes == M * N and v.projections == 2, v
  assert v.max_excess < 0.01, v.max_excess

@pytest.mark.parametrize("signs", ["plus", "alternating", "random"])
def test_no_false_failure_with_every_lane_at_the_edge_of_its_tolerance(signs, monkeypatch):
  """the all-lanes criterion is |device - ref| <= atol + rtol*|ref|: a device at 0.98 of that on every lane passes every
  projection -- with r all ones too, where same-sign errors add up over the whole row and nothing cancels"""
  from uopcheck.ref import freivalds
  ast, bufs, ref = _matmul(positive=True)
  if signs == "plus": monkeypatch.setattr(freivalds, "random_signs", lambda rng, shape: np.ones(shape))
  tol = tolerance_for(ast, dtypes.float32)
  s = {"plus": np.ones(ref.size), "alternating": (-1.0) ** np.arange(ref.size),
       "random": np.random.default_rng(3).choice([-1.0, 1.0], ref.size)}[signs]
  edge = (ref.astype(np.float64) + 0.98 * s * (tol.atol + tol.rtol * np.abs(ref.astype(np.float64)))).astype(np.float32)
  assert compare(ref, edge, dtypes.float32, tol).ok   # every lane within its tolerance (float32 rounding included)
  for seed in range(8):
    v = _check(ast, bufs, edge, seed)
    assert v.applies and v.ok, (seed, v)

def test_one_wrong_interior_lane_the_sampled_lanes_miss_is_caught():
  ast, bufs, ref = _matmul()
  sampled = KernelInterpreter(ast, sample=(3, 7))
  sampled.run(bufs)
  miss = next(i for i in range(M * N) if not sampled.written[0][i] and 0 < i // N < M - 1 and 0 < i % N < N - 1)
  bad = ref.copy()
  bad[miss] += 0.05   # the lane's value is ~6 (a 40-term dot product of unit normals): under 1% off
  v = _check(ast, bufs, bad)
  assert v.applies and not v.ok, v
  assert "buffer 0" in v.why and "Freivalds projection" in v.why, v.why

def test_a_systematic_index_bug_two_columns_swapped_is_caught():
  ast, bufs, ref = _matmul()
  bad = ref.reshape(M, N).copy()
  bad[:, [3, 4]] = bad[:, [4, 3]]
  assert not _check(ast, bufs, bad.reshape(-1)).ok
  assert not _check(ast, bufs, np.roll(ref, 1)).ok   # every lane shifted by one element

def test_a_device_lane_that_is_not_finite_fails_where_every_term_is_finite():
  ast, bufs, ref = _matmul()
  bad = ref.copy()
  bad[M * N // 2] = np.inf
  v = _check(ast, bufs, bad)
  assert v.applies and not v.ok and "inf" in v.why, v

@pytest.mark.parametrize("name, build", [
  ("bias", lambda a, b, c: Tensor(a) @ Tensor(b) + Tensor(c)),                 # ADD(LOAD, contraction)
  ("scaled", lambda a, b, c: (Tensor(a) @ Tensor(b)) * 0.5),                  # MUL(contraction, CONST)
  ("difference", lambda a, b, c: Tensor(c) - Tensor(a) @ Tensor(b)),          # SUB(LOAD, contraction)
  ("batched", lambda a, b, c: Tensor(a).reshape(4, 12, K) @ Tensor(b)),       # a batch axis both factors read
])
def test_linear_forms_around_a_contraction_apply_and_catch_a_wrong_lane(name, build):
  a, b = _operands(1)
  c = np.random.default_rng(2).standard_normal((M, N)).astype(np.float32)
  ast = _kernel(lambda: build(a, b, c))
  inputs = {p.arg.slot: p for p in KernelInterpreter(ast).params().values()}
  by_size = {M * K: a, K * N: b, M * N: c}
  bufs = {0: BufferState.of(np.zeros(M * N, np.float32)), **{s: BufferState.of(by_size[int(p.max_numel())]) for s, p in inputs.items() if s}}
  ref = KernelInterpreter(ast).run(bufs)[0].value
  v = _check(ast, bufs, ref)
  assert v.applies and v.ok and v.lanes == M * N, (name, v)
  bad = ref.copy()
  bad[M * N // 2 + 7] += 1.0
  assert not _check(ast, bufs, bad).ok, name

@pytest.mark.parametrize("build, why", [
  (lambda a, b: (Tensor(a) @ Tensor(b)).relu(), "not linear"),
  (lambda a, b: (Tensor(a) + 1).exp(), "no float contraction"),
])
def test_a_kernel_it_does_not_fit_is_not_applicable_and_says_why(build, why):
  a, b = _operands()
  ast = _kernel(lambda: build(a, b))
  params = KernelInterpreter(ast).params()
  bufs = {s: BufferState.of(np.zeros(int(p.max_numel()), np.float32) if s == 0 else (a if p.max_numel() == M * K else b))
          for s, p in params.items()}
  v = check_contractions(ast, bufs, {0: np.zeros(int(params[0].max_numel()), np.float32)}, tolerance_for(ast, dtypes.float32), 0)
  assert not v.applies and why in v.why, v

def test_the_gate_s_kernel_check_adds_freivalds_to_the_sampled_lanes():
  """check_step_kernel with a sampled reference: a wrong interior lane passes the sampled lanes; with Freivalds on (the
  gate's default) the kernel fails, the detail names Freivalds, and every output lane counts as checked"""
  ast, bufs, ref = _matmul()
  a, b = bufs[1].value, bufs[2].value
  sampled = KernelInterpreter(ast, sample=(3, 7))
  sampled.run(bufs)
  miss = next(i for i in range(M * N) if not sampled.written[0][i] and 0 < i // N < M - 1)
  bad = ref.copy()
  bad[miss] += 1.0
  args = [UOp.new_buffer(Device.DEFAULT, n, dtypes.float32) for n in (M * N, M * K, K * N)]
  step = Step(0, ast.call(*args), [np.zeros(M * N, np.float32).tobytes(), a.tobytes(), b.tobytes()],
              [bad.tobytes(), a.tobytes(), b.tobytes()], 0.0, "matmul")
  assert check_kernel_step(step, {}, sample=(3, 7))[0].ok   # the sampled lanes alone miss it
  off = check_step_kernel(step, {}, (3, 7), cpu=False, freivalds=0)
  assert off.ref_ok and off.freivalds_lanes == 0
  on = check_step_kernel(step, {}, (3, 7), cpu=False, freivalds=2)
  assert not on.ref_ok and on.lanes_ok and not on.freivalds_ok and on.detail.startswith("Freivalds"), on
  assert on.ref_lanes == on.freivalds_lanes == M * N
  good = Step(0, step.call, step.before, [ref.tobytes(), a.tobytes(), b.tobytes()], 0.0, "matmul")
  assert check_step_kernel(good, {}, (3, 7), cpu=False, freivalds=2).ref_ok

def test_an_out_of_bounds_lane_is_the_kernel_s_fault_never_a_silent_not_applicable():
  """every lane is evaluated, so a lane the samples never reach can index out of bounds: that is KernelFault (the gate
  blames the kernel AST), not a verdict that the check does not apply"""
  from uopcheck.spec.errors import KernelFault
  ast, bufs, ref = _matmul()
  short = {**bufs, 2: BufferState.of(bufs[2].value[:-N])}   # B one row short: the reduction's last k reads past it
  with pytest.raises(KernelFault, match="out-of-bounds"): _check(ast, short, ref)

def test_a_contraction_rounded_to_half_and_stored_as_float_is_bounded_at_half_s_rounding():
  """(a.half() @ b.half()).float(): half products summed in float32 (REDUCE(ADD, CAST(MUL)): a contraction here too),
  rounded to half on the way to a float32 store; the bound must count those roundings at half's eps (2**-10), not the
  stored float32's (it once counted each rounding at the store's eps)"""
  a, b = _operands(4)
  ast = _kernel(lambda: (Tensor(a).half() @ Tensor(b).half()).float())
  params = KernelInterpreter(ast).params()
  bufs = {s: BufferState.of(np.zeros(M * N, np.float32) if s == 0 else (a if p.max_numel() == M * K else b).astype(np.float16))
          for s, p in params.items()}
  ref = KernelInterpreter(ast).run(bufs)[0].value
  assert ref.dtype == np.float32 and np.array_equal(ref, ref.astype(np.float16).astype(np.float32))   # float32 holding half values
  for seed in range(4):
    v = _check(ast, bufs, ref, seed)
    assert v.applies and v.ok, (seed, v)
  bad = ref.copy()
  bad[M * N // 3] += 20.0   # at half's rounding a row's bound is ~3 (0.2% of its ~1400 magnitude): a lane must be further off
  assert not _check(ast, bufs, bad).ok

def test_a_sampled_gate_checks_every_lane_of_a_kernel_whose_full_run_costs_no_more_than_its_inputs():
  """sampling saves only where a full run spans a product of ranges: an elementwise kernel is checked on every lane even
  with a sampled reference (a wrong interior lane the samples miss is caught), a matmul stays sampled"""
  from uopcheck.training.gate import full_is_cheap
  a, _ = _operands()
  c = np.random.default_rng(5).standard_normal((M, K)).astype(np.float32)
  ast = _kernel(lambda: Tensor(a) * 2 + Tensor(c))
  bufs = _bufs(ast, a, c)
  ref = KernelInterpreter(ast).run(bufs)[0].value
  sampled = KernelInterpreter(ast, sample=(3, 7))
  sampled.run(bufs)
  miss = next(i for i in range(M * K) if not sampled.written[0][i])
  bad = ref.copy()
  bad[miss] += 1.0
  args = [UOp.new_buffer(Device.DEFAULT, M * K, dtypes.float32) for _ in range(3)]
  step = Step(0, ast.call(*args), [np.zeros(M * K, np.float32).tobytes(), bufs[1].value.tobytes(), bufs[2].value.tobytes()],
              [bad.tobytes(), bufs[1].value.tobytes(), bufs[2].value.tobytes()], 0.0, "elementwise")
  assert full_is_cheap(ast) and check_kernel_step(step, {}, sample=(3, 7))[0].ok   # the samples alone miss it
  v = check_step_kernel(step, {}, (3, 7), cpu=False)
  assert not v.ref_ok and v.lanes_ok is False and v.ref_lanes == M * K, v
  mm, _, _ = _matmul()
  assert not full_is_cheap(mm)   # M.N.K = 40x its largest buffer
