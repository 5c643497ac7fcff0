"""Run by test_amd_emulated in a fresh process: the captured gfx950 grad-norm kernel (``data/gfx950_grad_norm_kernel.ll``,
LLVM IR that tinygrad's AMD renderer wrote) compiled for ``sys.argv[1]`` (an AMD mock target) and run over 12 buffers of
1M float32 ones -- far larger than any index it forms -- with one workgroup of 16 threads. Prints one JSON line with the
value it stores (sqrt of the 62,016 ones it sums). On gfx950 the emulator dies before printing (README, "The production
path in emulation")."""
from __future__ import annotations
import json, pathlib, sys
from typing import cast
import numpy as np

KERNEL = pathlib.Path(__file__).resolve().parent / "data" / "gfx950_grad_norm_kernel.ll"
NAME = "r_16_4_11008_11008_11008_4096_2048_2048_4096_64_64_16512_11"
N_BUFFERS, BUFFER_ELEMENTS = 12, 1 << 20

if __name__ == "__main__":
  from uopcheck.settings import apply_environment
  apply_environment()
  from uopcheck.fast.devices import open_device
  dev = open_device(sys.argv[1], hcq2=False)
  from tinygrad import Tensor
  from tinygrad.device import Buffer, Device, TinyELF
  from tinygrad.dtype import dtypes
  d = Device[dev]
  lib = d.compiler.compile(KERNEL.read_text())
  prg = d.runtime(TinyELF(lib, NAME, d.renderer.target, tuple((f"data{i}", i, dtypes.uint64, ()) for i in range(N_BUFFERS))))
  bufs = [Tensor(np.full(BUFFER_ELEMENTS, 0.0 if i == 0 else 1.0, np.float32), device=dev).realize() for i in range(N_BUFFERS)]
  raw = [cast(Buffer, b.uop.buffer) for b in bufs]   # one device: never a MultiBuffer
  prg(*[r._buf for r in raw], global_size=(1, 1, 1), local_size=(16, 1, 1), wait=True)
  print(json.dumps({"device": dev, "stored": float(bufs[0].numpy()[0])}))
