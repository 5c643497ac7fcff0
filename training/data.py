"""Training data: the Megatron-LM indexed dataset format (``PREFIX.bin`` + ``PREFIX.idx``), a writer, a shipped corpus.

The MLPerf Llama 3.1 benchmark's C4 files use this format (Megatron ``MMapIndexedDataset``):
  .idx: b"MMIDIDX\\x00\\x00" | u64 version=1 | u8 dtype code | u64 sequence count N | u64 document count D |
        i32 sequence lengths[N] | i64 sequence byte offsets into .bin[N] | i64 document indices[D]
  .bin: the token arrays back to back, in the dtype of the code (1 u8, 2 i8, 3 i16, 4 i32, 5 i64, 6 f64, 7 f32, 8 u16).
The writer builds a small dataset from text this module generates (a seeded grammar about compilers, byte-level
tokens + BOS/EOS), so tests read real files through the real reader. ``SyntheticTokens`` is the labelled fallback."""
from __future__ import annotations
import pathlib, struct
import numpy as np

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
DTYPE_CODES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32, 8: np.uint16}
BOS, EOS = 256, 257   # byte-level tokenizer: tokens 0..255 are bytes

class DatasetError(ValueError):
  """A dataset file that breaks the format: the message names the file and the rule."""

def _code_of(dtype) -> int:
  for code, dt in DTYPE_CODES.items():
    if np.dtype(dt) == np.dtype(dtype): return code
  raise DatasetError(f"dtype {np.dtype(dtype)} has no Megatron indexed-dataset code (allowed: {[np.dtype(d).name for d in DTYPE_CODES.values()]})")

def write_indexed_dataset(prefix:str|pathlib.Path, documents:list[list[np.ndarray]], dtype=np.uint16) -> tuple[pathlib.Path, pathlib.Path]:
  """Write ``documents`` (each a list of token sequences) as PREFIX.bin/PREFIX.idx; returns both paths."""
  prefix = pathlib.Path(prefix)
  prefix.parent.mkdir(parents=True, exist_ok=True)
  seqs = [np.asarray(s) for doc in documents for s in doc]
  info = np.iinfo(dtype) if np.issubdtype(np.dtype(dtype), np.integer) else None
  for s in seqs:
    if info is not None and s.size and (s.min() < info.min or s.max() > info.max):
      raise DatasetError(f"{prefix}.bin: token {int(s.max())} does not fit the dataset dtype {np.dtype(dtype).name}")
  lengths = np.array([s.size for s in seqs], dtype=np.int32)
  pointers = np.concatenate([[0],
                             np.cumsum(lengths.astype(np.int64) * np.dtype(dtype).itemsize)[:-1]]).astype(np.int64) if seqs else np.zeros(0, np.int64)
  doc_idx = np.concatenate([[0], np.cumsum([len(d) for d in documents])]).astype(np.int64)
  bin_path, idx_path = prefix.with_name(prefix.name + ".bin"), prefix.with_name(prefix.name + ".idx")
  with open(bin_path, "wb") as f:
    for s in seqs: f.write(s.astype(dtype).tobytes())
  with open(idx_path, "wb") as f:
    f.write(MAGIC + struct.pack("<Q", VERSION) + struct.pack("<B", _code_of(dtype)))
    f.write(struct.pack("<Q", len(seqs)) + struct.pack("<Q", len(doc_idx)))
    f.write(lengths.tobytes() + pointers.tobytes() + doc_idx.tobytes())
  return bin_path, idx_path

class IndexedDataset:
  """Read PREFIX.bin/PREFIX.idx (memory-mapped). ``ds[i]`` is sequence i; ``ds.document(j)`` the sequences of document j."""
  def __init__(self, prefix:str|pathlib.Path):
    p = pathlib.Path(prefix)
    if p.suffix in (".bin", ".idx"): p = p.with_suffix("")
    self.prefix, self.idx_path, self.bin_path = p, p.with_name(p.name + ".idx"), p.with_name(p.name + ".bin")
    for f in (self.idx_path, self.bin_path):
      if not f.is_file(): raise DatasetError(f"{f}: missing (a Megatron indexed dataset is PREFIX.bin + PREFIX.idx)")
    raw = self.idx_path.read_bytes()
    head = 9 + 8 + 1 + 8 + 8
    if len(raw) < head: raise DatasetError(f"{self.idx_path}: {len(raw)} bytes, shorter than the {head}-byte header")
    if raw[:9] != MAGIC: raise DatasetError(f"{self.idx_path}: bad magic {raw[:9]!r} (expected {MAGIC!r}: not a Megatron MMIDIDX index)")
    (version,) = struct.unpack_from("<Q", raw, 9)
    if version != VERSION: raise DatasetError(f"{self.idx_path}: index version {version}, this reader knows version {VERSION}")
    code = raw[17]
    if code not in DTYPE_CODES: raise DatasetError(f"{self.idx_path}: dtype code {code} is not one of {sorted(DTYPE_CODES)}")
    self.dtype = np.dtype(DTYPE_CODES[code])
    n, d = struct.unpack_from("<QQ", raw, 18)
    need = head + 4 * n + 8 * n + 8 * d
    if len(raw) < need:
      raise DatasetError(f"{self.idx_path}: truncated: {n} sequences and {d} document indices need {need} bytes, file has {len(raw)}")
    self.lengths = np.frombuffer(raw, np.int32, n, head)
    self.pointers = np.frombuffer(raw, np.int64, n, head + 4 * n)
    self.doc_idx = np.frombuffer(raw, np.int64, d, head + 12 * n)
    nbytes = self.bin_path.stat().st_size
    end = int(self.pointers[-1]) + int(self.lengths[-1]) * self.dtype.itemsize if n else 0
    if n and end > nbytes:
      raise DatasetError(f"{self.bin_path}: truncated: the index points to byte {end}, "
                         f"the file has {nbytes}")
    if d and (self.doc_idx[0] != 0 or self.doc_idx[-1] != n or np.any(np.diff(self.doc_idx) < 0)):
      raise DatasetError(f"{self.idx_path}: document indices must rise from 0 to the sequence count {n}")
    self.bin = np.memmap(self.bin_path, dtype=self.dtype, mode="r") if nbytes else np.zeros(0, self.dtype)

  def __len__(self) -> int: return len(self.lengths)

  def __getitem__(self, i:int) -> np.ndarray:
    if not -len(self) <= i < len(self): raise IndexError(f"sequence {i} of {len(self)} in {self.bin_path}")
    start = int(self.pointers[i]) // self.dtype.itemsize
    return np.asarray(self.bin[start:start + int(self.lengths[i])])

  @property
  def n_documents(self) -> int: return max(len(self.doc_idx) - 1, 0)

  def document(self, j:int) -> list[np.ndarray]: return [self[i] for i in range(int(self.doc_idx[j]), int(self.doc_idx[j + 1]))]

  def tokens(self) -> np.ndarray:
    """All sequences back to back (the stream windows are cut from)."""
    return np.asarray(self.bin[:int(self.lengths.sum())]).astype(np.int64) if len(self) else np.zeros(0, np.int64)

# ** the shipped corpus: text this module generates **

_SUBJECTS = ["the scheduler", "the reference interpreter", "a rewrite rule", "the kernel", "the optimizer", "the runtime", "the fuzzer",
             "every buffer", "the gate", "a reduction", "the codegen pass", "the symbolic simplifier"]
_VERBS = ["checks", "rewrites", "fuses", "splits", "replays", "compares", "lowers", "schedules", "proves", "stores"]
_OBJECTS = ["each range", "the loss", "two kernels", "the graph", "a float tensor", "the gradient norm", "an index expression",
            "the weights", "every step", "the program"]
_TAILS = ["before the run starts", "on the device", "on the cpu", "with z3", "one kernel at a time", "in float32", "under the jit", ""]

def generate_corpus(n_documents:int=64, seed:int=0) -> list[str]:
  """Deterministic English-like documents about compilers (what a tiny model can learn in a few dozen steps)."""
  rng = np.random.default_rng(seed)
  docs = []
  for _ in range(n_documents):
    sents = []
    for _ in range(int(rng.integers(3, 8))):
      words = [_SUBJECTS[rng.integers(len(_SUBJECTS))], _VERBS[rng.integers(len(_VERBS))], _OBJECTS[rng.integers(len(_OBJECTS))],
               _TAILS[rng.integers(len(_TAILS))]]
      sents.append(" ".join(w for w in words if w) + ".")
    docs.append(" ".join(sents))
  return docs

def byte_tokenize(text:str) -> np.ndarray: return np.array([BOS, *text.encode("utf-8"), EOS], dtype=np.int64)

def byte_detokenize(tokens) -> str: return bytes(int(t) for t in tokens if 0 <= int(t) < 256).decode("utf-8", errors="replace")

def build_shipped_dataset(prefix:str|pathlib.Path, n_documents:int=256, seed:int=0) -> IndexedDataset:
  """Write the generated corpus (one sequence per sentence-run document) as a Megatron dataset and open it."""
  docs = [[byte_tokenize(t)] for t in generate_corpus(n_documents, seed)]
  write_indexed_dataset(prefix, docs, dtype=np.uint16)
  return IndexedDataset(prefix)

# ** batches **

class TokenBatches:
  """Windows of seq_len+1 tokens cut at seeded offsets from a token stream; batch ``step`` is a pure function of
  (seed, step), so a resumed run sees the batches an uninterrupted run would have."""
  label = "megatron"
  def __init__(self, stream:np.ndarray, seq_len:int, batch_size:int, grad_accum:int=1, seed:int=0, source:str=""):
    if stream.size < seq_len + 2: raise DatasetError(f"{source or 'token stream'}: {stream.size} tokens, fewer than one window of {seq_len + 1}")
    self.stream, self.seq_len, self.batch_size, self.grad_accum, self.seed, self.source = stream, seq_len, batch_size, grad_accum, seed, source

  def batch(self, step:int) -> np.ndarray:
    rng = np.random.default_rng([self.seed, step & 0xFFFFFFFF, int(step < 0)])
    starts = rng.integers(0, self.stream.size - self.seq_len - 1, size=(self.grad_accum, self.batch_size))
    return self.stream[starts[..., None] + np.arange(self.seq_len + 1)].astype(np.int32)

class SyntheticTokens(TokenBatches):
  """SYNTHETIC fallback (no dataset): counting sequences with a random start and stride, mod the vocabulary --
  learnable, so a loss curve still means something, but not text."""
  label = "SYNTHETIC"
  def __init__(self, vocab_size:int, seq_len:int, batch_size:int, grad_accum:int=1, seed:int=0):
    self.vocab_size, self.seq_len, self.batch_size, self.grad_accum = vocab_size, seq_len, batch_size, grad_accum
    self.seed, self.source = seed, "synthetic"

  def batch(self, step:int) -> np.ndarray:
    rng = np.random.default_rng([self.seed, step & 0xFFFFFFFF, int(step < 0)])
    start = rng.integers(0, self.vocab_size, size=(self.grad_accum, self.batch_size, 1))
    stride = rng.integers(1, 4, size=(self.grad_accum, self.batch_size, 1))
    return ((start + stride * np.arange(self.seq_len + 1)) % self.vocab_size).astype(np.int32)
