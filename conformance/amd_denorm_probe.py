"""Run by test_amd_emulated in a fresh process: one float32 and one float64 kernel on ``sys.argv[1]`` (an AMD mock target)
reading a subnormal, and the FLOAT_DENORM_MODE fields of each compiled kernel's descriptor (COMPUTE_PGM_RSRC1 bits 16-19:
3 = subnormals kept on input and output). Prints one JSON line."""
from __future__ import annotations
import json, struct, sys
import numpy as np

def denorm_modes(elf:bytes) -> list[tuple[int, int]]:
  """(FLOAT_DENORM_MODE_32, FLOAT_DENORM_MODE_16_64) of every kernel descriptor (``*.kd`` symbol) in an AMD code object"""
  shoff, = struct.unpack_from("<Q", elf, 0x28)
  shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
  shs = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
  symtab = next(sh for sh in shs if sh[1] == 2)   # SHT_SYMTAB
  strtab, out = shs[symtab[6]], []
  for off in range(0, symtab[5], 24):
    st_name, _, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", elf, symtab[4] + off)
    if elf[strtab[4] + st_name:].split(b"\0")[0].endswith(b".kd"):
      sec = shs[st_shndx]
      rsrc1, = struct.unpack_from("<I", elf, sec[4] + st_value - sec[3] + 48)
      out.append(((rsrc1 >> 16) & 3, (rsrc1 >> 18) & 3))
  return out

if __name__ == "__main__":
  from uopcheck.settings import apply_environment
  apply_environment()
  from tinygrad import Tensor, dtypes
  from tinygrad.uop.ops import Ops
  from uopcheck import fast
  from uopcheck.fast.devices import default_device
  with default_device(sys.argv[1], hcq2=False) as dev:
    f32 = Tensor(np.array([1e-45, 1.0, 0.0, 2.0], dtype=np.float32)).cast(dtypes.bool)
    f64 = Tensor(np.array([4.9e-324, 1.0, 0.0, 2.0], dtype=np.float64)).cast(dtypes.bool)
    r = fast.run([f32, f64], device=dev, hcq2=False)
  modes = [m for k in r.kernels for m in denorm_modes(bytes(next(s.arg for s in k.program.src if s.op is Ops.BINARY)))]
  print(json.dumps({"f32_subnormal_is_true": bool(r.outputs[0][0]), "f64_subnormal_is_true": bool(r.outputs[1][0]), "modes": modes}))
