"""Movement ops and their compositions (permute, pad, shrink, flip, expand, reshape): ref vs fast, bitwise."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor
from uopcheck.check import harness
from uopcheck.spec import Tolerance

def _base(shape=(3, 4, 5), dtype=np.float32, seed=0):
  r = np.random.default_rng(seed)
  return Tensor((r.standard_normal(shape) * 10).astype(dtype)).realize()

# each chain is a function of a (3,4,5) Tensor using only the six movement ops (plus an op to make a kernel)
CHAINS = {
  "reshape": lambda t: t.reshape(12, 5),
  "reshape_flat": lambda t: t.reshape(60),
  "permute": lambda t: t.permute(2, 0, 1),
  "permute_rev": lambda t: t.permute(2, 1, 0),
  "pad": lambda t: t.pad(((1, 2), (0, 1), (3, 0))),
  "shrink": lambda t: t.shrink(((1, 3), (0, 4), (2, 5))),
  "flip0": lambda t: t.flip(0),
  "flip02": lambda t: t.flip((0, 2)),
  "flip_size2_axis": lambda t: t.shrink(((0, 2), (0, 4), (0, 5))).flip(0),          # boundary sizes: 2 and 1
  "flip_split_axes": lambda t: t.reshape(3, 2, 2, 5).flip((1, 2)).reshape(3, 4, 5),
  "flip_size1_axis": lambda t: t.shrink(((0, 3), (0, 1), (0, 5))).flip((1, 2)),
  "expand": lambda t: t.reshape(3, 1, 4, 5).expand(3, 6, 4, 5),
  "expand_lead": lambda t: t.reshape(1, 3, 4, 5).expand(2, 3, 4, 5),
  "pad_shrink": lambda t: t.pad(((2, 2), (1, 1), (0, 0))).shrink(((1, 6), (0, 5), (1, 4))),
  "shrink_pad": lambda t: t.shrink(((0, 2), (1, 3), (0, 5))).pad(((1, 1), (2, 2), (0, 3))),
  "permute_pad_shrink_flip_expand_reshape": lambda t: t.permute(1, 2, 0).pad(((1, 0), (0, 2), (1, 1))).shrink(((0, 4), (1, 6), (0, 4)))
                                                       .flip((0, 2)).reshape(4, 1, 5, 4).expand(4, 2, 5, 4).reshape(8, 20),
  "flip_permute_reshape": lambda t: t.flip(1).permute(1, 0, 2).reshape(2, 2, 15),
  "reshape_permute_reshape": lambda t: t.reshape(6, 10).permute(1, 0).reshape(5, 12),
  "expand_permute_shrink": lambda t: t.reshape(3, 4, 5, 1).expand(3, 4, 5, 3).permute(3, 0, 2, 1).shrink(((1, 3), (0, 3), (1, 4), (0, 4))),
  "pad_negative_values": lambda t: (t - 100).pad(((0, 1), (1, 0), (2, 2))),
  "slice_step": lambda t: t[::2, 1::2, ::-1],
  "getitem_mixed": lambda t: t[1, :, 2:4],
  "transpose_contig_back": lambda t: t.transpose(0, 2).contiguous().transpose(0, 2),
  "repeat": lambda t: t.repeat(2, 1, 2),
  "cat": lambda t: t.cat(t.flip(0), dim=1),
  "stack": lambda t: Tensor.stack(t, t * 2, dim=1),
  "pad_then_add": lambda t: t.pad(((1, 1), (0, 0), (0, 0))) + 1,
  "broadcast_add": lambda t: t + t[:, :1, :],
  "broadcast_rank": lambda t: t + t[0, 0],
}

@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_movement_chain(name, dtype, conformance_log):
  res = harness.check(lambda: CHAINS[name](_base(dtype=dtype)), f"movement {name} {np.dtype(dtype).name}", tol=Tolerance())
  conformance_log(res)
  assert res.ok, res.reproducer or res.error

@pytest.mark.parametrize("seed", range(6))
def test_random_movement_chain(seed, conformance_log):
  """Random shape-consistent chains of the six movement ops, seeded (reproducible from the seed)."""
  rng = np.random.default_rng(1000 + seed)
  def build():
    t = _base(seed=seed)
    for _ in range(5):
      k = rng.integers(6)
      shp = t.shape
      if k == 0: t = t.permute(*rng.permutation(len(shp)).tolist())
      elif k == 1: t = t.pad(tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in shp))
      elif k == 2: t = t.shrink(tuple((int(a), int(a) + max(1, int(rng.integers(1, s - a + 1)))) for s in shp for a in [rng.integers(0, s)]))
      elif k == 3: t = t.flip(tuple(i for i in range(len(shp)) if rng.random() < 0.5) or (0,))
      elif k == 4 and len(shp) < 5: t = t.reshape(1, *shp).expand(2, *shp)
      else: t = t.reshape(-1) if rng.random() < 0.5 else t.reshape(shp[0], -1)
    return t * 3 + 1
  res = harness.check(build, f"movement random seed={seed}")  # t*3+1 may be contracted to an FMA: graph tolerance
  conformance_log(res)
  assert res.ok, res.reproducer or res.error
