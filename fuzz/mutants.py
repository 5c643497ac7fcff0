"""The mutant catalog for ``uopcheck mutate``: small, deliberate bugs in tinygrad 0.14.0, one per entry, across layers.

Each mutant replaces one exact piece of text (``old``, which must occur exactly once) in one file of the installed
tinygrad package -- applied to a private copy, never to the installed one -- and carries a *witness*: a few lines of
tinygrad that compute ``got`` beside a numpy ``want``, so that a run shows whether the mutant is live (changes what a
program computes) before any detector is asked to find it. Witnesses are uopcheck's own code, run in a subprocess."""
from __future__ import annotations
from dataclasses import dataclass

@dataclass(frozen=True)
class Mutant:
  id: str
  layer: str
  file: str          # relative to the tinygrad package directory
  old: str
  new: str
  witness: str       # sets ``got`` (from tinygrad) and ``want`` (numpy)
  what: str
  device: str = ""   # "" = the CPU path; else the --device it runs on (e.g. MOCK+AMD::gfx950)

MUTANTS: list[Mutant] = [
  # ** C renderer **
  Mutant("render-cmplt-le", "C renderer", "renderer/cstyle.py", 'Ops.CMPLT: lambda a,b,dtype: f"({a}<{b})"',
         'Ops.CMPLT: lambda a,b,dtype: f"({a}<={b})"',
         "x = np.array([1., 2., 3.], np.float32); y = np.array([2., 2., 2.], np.float32)\ngot = (Tensor(x) < Tensor(y)).numpy(); want = x < y",
         "CMPLT rendered as <="),
  Mutant("render-where-swap", "C renderer", "renderer/cstyle.py", 'Ops.WHERE: lambda a,b,c,dtype: f"({a}?{b}:{c})"',
         'Ops.WHERE: lambda a,b,c,dtype: f"({a}?{c}:{b})"',
         "c = np.array([True, False, True]); a = np.array([1., 2., 3.], np.float32); b = -a\n"
         "got = Tensor(c).where(Tensor(a), Tensor(b)).numpy(); want = np.where(c, a, b)", "WHERE branches swapped"),
  Mutant("render-cmpne-gt", "C renderer", "renderer/cstyle.py", 'Ops.CMPNE: lambda a,b,dtype: f"({a}!={b})"',
         'Ops.CMPNE: lambda a,b,dtype: f"({a}>{b})"',
         "x = np.array([1, 5, 3], np.int32); y = np.array([2, 2, 3], np.int32)\ngot = (Tensor(x) != Tensor(y)).numpy(); want = x != y",
         "CMPNE rendered as >"),
  Mutant("render-and-as-or", "C renderer", "renderer/cstyle.py", 'Ops.AND: lambda a,b,dtype: f"({a}&{b})"', 'Ops.AND: lambda a,b,dtype: f"({a}|{b})"',
         "x = np.array([12, 5, 3], np.int32); y = np.array([10, 4, 1], np.int32)\ngot = (Tensor(x) & Tensor(y)).numpy(); want = x & y",
           "AND rendered as |"),
  # ** decompositions **
  Mutant("decomp-pow2-mod-mask", "decompositions", "codegen/decomp/op.py", "lambda x,c: x & (c.val-1) if c.val in powers_of_two else None",
         "lambda x,c: x & (c.val) if c.val in powers_of_two else None",
         "x = np.array([5, -3, 7, 12], np.int32)\ngot = (Tensor(x) % 4).numpy(); want = x % 4", "x % 2**k lowered to x & 2**k"),
  Mutant("decomp-floormod-sign", "decompositions", "codegen/decomp/op.py", "  return r + (r.ne(0) & (a<0).ne(b<0)).where(b, b.const_like(0))",
         "  return r - (r.ne(0) & (a<0).ne(b<0)).where(b, b.const_like(0))",
         "x = np.array([-7, -1, 5, -9], np.int32)\ngot = (Tensor(x) % 3).numpy(); want = x % 3", "floor mod of a negative: correction subtracted"),
  Mutant("decomp-cdiv-pow2-bias", "decompositions", "codegen/decomp/op.py",
         "lambda x,c: (x+(l.const_like(l.vmin) if (l:=(x<0)).vmin==l.vmax else l).where(c-1, 0)) >> v",
         "lambda x,c: (x+(l.const_like(l.vmin) if (l:=(x<0)).vmin==l.vmax else l).where(c, 0)) >> v",
         "x = np.array([-7, -8, 7, -1], np.int32)\ngot = Tensor(x).div(4, rounding_mode='trunc').numpy(); want = np.trunc(x / 4).astype(np.int32)",
         "signed truncating division by 2**k: bias c instead of c-1"),
  Mutant("decomp-exp2-coefficient", "decompositions", "codegen/decomp/transcendental.py", "0.2402264476e+0, 0.6931471825e+0, 1.0]",
         "0.2402264476e+0, 0.7931471825e+0, 1.0]",
         "x = np.array([0.3, 1.7, -2.2], np.float32)\ngot = Tensor(x).exp2().numpy(); want = np.exp2(x)",
           "float32 exp2 polynomial: ln2 term off by 0.1"),
  # ** vmin/vmax **
  Mutant("vminmax-add-vmax", "vmin/vmax", "uop/ops.py", "      if self.op is Ops.ADD: return s0_vmin+s1_vmin, s0_vmax+s1_vmax",
         "      if self.op is Ops.ADD: return s0_vmin+s1_vmin, s0_vmax+s1_vmax-1",
         "x = np.arange(10)\ngot = ((Tensor.arange(10) + Tensor.arange(10)) < 18).numpy(); want = (x + x) < 18", "ADD's upper bound one too small"),
  # ** symbolic rules **
  Mutant("symbolic-div-neg1", "symbolic rules", "uop/symbolic.py", '(UPat.var("x") // -1, lambda x: -x), # x//-1 -> -x',
         '(UPat.var("x") // -1, lambda x: x), # x//-1 -> -x',
         "x = np.array([3, -4, 5], np.int32)\ngot = (Tensor(x) // -1).numpy(); want = x // -1", "x//-1 -> x"),
  Mutant("symbolic-neg-sum", "symbolic rules", "uop/symbolic.py", '(-1 * (UPat.var("x") + UPat.var("y")), lambda x,y: (-x)+(-y)),',
         '(-1 * (UPat.var("x") + UPat.var("y")), lambda x,y: (-x)+y),',
         "a = np.array([1, 2, 3], np.int32); b = np.array([4, 5, 6], np.int32)\ngot = (-(Tensor(a) + Tensor(b))).numpy(); want = -(a + b)",
         "-(x+y) -> -x+y"),
  Mutant("symbolic-reduce-const-mul", "symbolic rules", "uop/symbolic.py", "lambda x,c,r: r.replace(src=(x,)+r.src[1:])*c.val),",
         "lambda x,c,r: r.replace(src=(x,)+r.src[1:])*(c.val+1)),",
         "x = np.arange(8, dtype=np.float32)\ngot = (Tensor(x) * 3).sum().numpy(); want = (x * 3).sum()", "sum(x*c) -> sum(x)*(c+1)"),
  Mutant("symbolic-mul-one", "symbolic rules", "uop/symbolic.py", '(UPat.var("x") * 1, lambda x: x),    # x*1 -> x',
         '(UPat.var("x") * 2, lambda x: x),    # x*1 -> x',
         "x = np.array([1, 2, 3], np.int32)\ngot = (Tensor(x) * 2).numpy(); want = x * 2", "x*2 -> x"),
  Mutant("symbolic-lt-self", "symbolic rules", "uop/symbolic.py",
         '(UPat.var("x") < UPat.var("x"), lambda x: x.const_like(False, dtypes.bool)), # x < x -> False',
         '(UPat.var("x") < UPat.var("x"), lambda x: x.const_like(True, dtypes.bool)), # x < x -> False',
         "x = np.array([1., 2., 3.], np.float32)\nt = Tensor(x)\ngot = (t < t).numpy(); want = x < x", "x < x -> True"),
  # ** divandmod rules **
  Mutant("divmod-nested-div", "divandmod rules", "uop/divandmod.py", "lambda x,c,a,d: (x+a*c)//(c*d) if d.vmin>0 else None",
         "lambda x,c,a,d: (x+a)//(c*d) if d.vmin>0 else None",
         "x = np.arange(-20, 40, dtype=np.int32)\ngot = ((Tensor(x) // 3 + 2) // 5).numpy(); want = (x // 3 + 2) // 5",
           "(x//c+a)//d -> (x+a)//(c*d)"),
  # ** indexing **
  Mutant("index-pad-bound", "indexing", "schedule/indexing.py", "(r >= off) & (r < (sh+off))", "(r >= off) & (r <= (sh+off))",
         "x = np.arange(1, 9, dtype=np.float32).reshape(2, 4)\ngot = (Tensor(x).pad((None, (0, 1))) + 0).numpy(); want = np.pad(x, ((0, 0), (0, 1)))",
         "pad validity: < became <="),
  Mutant("index-shrink-offset", "indexing", "schedule/indexing.py", "rngs = tuple(a if off == 0 else a+off for a,(off,_) in zip(rngs, arg))",
         "rngs = tuple(a if off <= 1 else a+off for a,(off,_) in zip(rngs, arg))",
         "x = np.arange(8, dtype=np.float32)\ngot = (Tensor(x)[1:5] + 0).numpy(); want = x[1:5]", "shrink by an offset of 1 reads from 0"),
  Mutant("index-flip", "indexing", "schedule/indexing.py",
         "case Ops.FLIP:    rngs = tuple(((s-1)-a) if f else a for a,s,f in zip(rngs, in_shape, arg))",
         "case Ops.FLIP:    rngs = tuple(((s-1)-a) if f and s > 2 else a for a,s,f in zip(rngs, in_shape, arg))",
         "x = np.arange(6, dtype=np.float32).reshape(3, 2)\ngot = (Tensor(x).flip(1) + 0).numpy(); want = x[:, ::-1]",
           "flip of an axis of size <= 2 dropped"),
  # ** expander / devectorizer **
  Mutant("expander-horizontal-reduce", "expander/devectorizer", "codegen/__init__.py",
         "  return functools.reduce(lambda x,y: x.alu(r.arg[0], y), vals)",
         "  return functools.reduce(lambda x,y: x.alu(r.arg[0], y), vals[:-1] or vals)",
         "x = np.arange(12, dtype=np.float32).reshape(3, 4)\ngot = Tensor(x).sum(1).numpy(); want = x.sum(1)",
           "an unrolled reduction drops its last element"),
  # ** reduce identities **
  Mutant("reduce-max-identity", "reduce identities", "uop/ops.py", "{Ops.ADD:0, Ops.MUL:1, Ops.MAX:dt.min}[op]",
         "{Ops.ADD:0, Ops.MUL:1, Ops.MAX:0}[op]",
         "x = -np.arange(1, 300, dtype=np.float32)\ngot = Tensor(x).max().numpy(); want = x.max()",
           "MAX reduction starts from 0, not the dtype minimum"),
  Mutant("reduce-add-identity", "reduce identities", "uop/ops.py", "{Ops.ADD:0, Ops.MUL:1, Ops.MAX:dt.min}[op]",
         "{Ops.ADD:1, Ops.MUL:1, Ops.MAX:dt.min}[op]",
         "x = np.arange(300, dtype=np.float32)\ngot = Tensor(x).sum().numpy(); want = x.sum()", "ADD reduction starts from 1"),
  # ** runtime **
  Mutant("runtime-as-buffer-offset", "runtime", "runtime/ops_cpu.py", "def _as_buffer(self, src) -> memoryview: return to_mv(src.va_addr, src.size)",
         "def _as_buffer(self, src) -> memoryview: return to_mv(src.va_addr + 4, src.size)",
         "x = np.arange(1, 17, dtype=np.float32)\ngot = (Tensor(x) + 0).numpy(); want = x", "the host view of a device buffer starts 4 bytes late"),
  Mutant("runtime-copyout-short", "runtime", "runtime/ops_cpu.py", "ctypes.memmove(from_mv(dest), int(src.va_addr), len(dest))",
         "ctypes.memmove(from_mv(dest), int(src.va_addr), max(0, len(dest)-1))",
         "x = np.arange(1, 5, dtype=np.float32)\ngot = (Tensor(x) * 2).numpy(); want = x * 2", "a device->host copy drops its last byte"),
  # ** the AMD path only (on tinygrad's mock GPU): the AMD LLVM renderer, MFMA tensor cores, the SDMA copy queue **
  Mutant("amd-llvm-log2-exp2-swap", "AMD LLVM renderer", "renderer/llvmir.py",
         'llvm_intrinsics = {Ops.SQRT: "sqrt", Ops.LOG2: "log2", Ops.EXP2: "exp2"}',
         'llvm_intrinsics = {Ops.SQRT: "sqrt", Ops.LOG2: "exp2", Ops.EXP2: "log2"}',
         "x = np.array([0.3, 1.7, 4.0], np.float32)\ngot = Tensor(x).exp2().numpy(); want = np.exp2(x)",
         "the AMD LLVM renderer calls llvm.log2 for EXP2 and llvm.exp2 for LOG2", device="MOCK+AMD::gfx950"),
  Mutant("amd-mfma-operands-swapped", "AMD tensor cores", "renderer/llvmir.py",
         '    scaled = K == 128\n    args = [f"{ldt(w.dtype, w.max_numel())} {ctx[w]}" for w in wmma.src]',
         '    scaled = K == 128\n    args = [f"{ldt(w.dtype, w.max_numel())} {ctx[w]}" for w in (wmma.src[1], wmma.src[0], *wmma.src[2:])]',
         "a = ((np.arange(64*64) % 7 - 3) / 8).astype(np.float16).reshape(64, 64)\n"
         "b = ((np.arange(64*64) * 3 % 5 - 2) / 8).astype(np.float16).reshape(64, 64)\n"
         "got = (Tensor(a) @ Tensor(b)).numpy(); want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)",
         "CDNA MFMA call gets its A and B operands swapped (MI350X tensor cores)", device="MOCK+AMD::gfx950"),
  Mutant("amd-sdma-copy-short", "AMD runtime (SDMA)", "runtime/ops_amd.py",
         "self.sdma.SDMA_PKT_COPY_LINEAR_COUNT_COUNT(step_copy_size - 1)", "self.sdma.SDMA_PKT_COPY_LINEAR_COUNT_COUNT(step_copy_size - 2)",
         "x = np.arange(1, 17, dtype=np.float32)\ngot = (Tensor(x) * 2).numpy(); want = x * 2",
         "an SDMA linear copy moves one byte too few", device="MOCK+AMD::gfx950"),
]

BY_ID = {m.id: m for m in MUTANTS}
