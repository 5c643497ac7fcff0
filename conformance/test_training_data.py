"""training/: the Megatron indexed dataset reader and writer, batches, the lr schedule, and the Llama itself
(checked against a numpy Llama written from the paper's definitions, not from tinygrad)."""
from __future__ import annotations
import struct
import numpy as np
import pytest
from tinygrad import Tensor
from uopcheck.training import data
from uopcheck.training.data import DatasetError, IndexedDataset, write_indexed_dataset
from uopcheck.training.model import get_config, Llama, CONFIGS
from uopcheck.training.trainer import TrainConfig, cosine_lr

def _hand_written_idx(prefix, seqs:list[np.ndarray], doc_idx:list[int], code:int, dtype):
  """An index written byte by byte from the format description (independent of the writer under test)."""
  lengths = [len(s) for s in seqs]
  pointers, off = [], 0
  for s in seqs:
    pointers.append(off)
    off += len(s) * np.dtype(dtype).itemsize
  raw = b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, code, len(seqs), len(doc_idx))
  raw += struct.pack(f"<{len(seqs)}i", *lengths) + struct.pack(f"<{len(seqs)}q", *pointers) + struct.pack(f"<{len(doc_idx)}q", *doc_idx)
  (prefix.parent / (prefix.name + ".idx")).write_bytes(raw)
  (prefix.parent / (prefix.name + ".bin")).write_bytes(b"".join(np.asarray(s, dtype).tobytes() for s in seqs))

def test_reader_reads_a_hand_written_megatron_index(tmp_path):
  seqs = [np.array([5, 6, 7]), np.array([1]), np.array([70000, 2, 3, 4])]
  _hand_written_idx(tmp_path / "ds", seqs, [0, 2, 3], code=4, dtype=np.int32)
  ds = IndexedDataset(tmp_path / "ds")
  assert len(ds) == 3 and ds.n_documents == 2 and ds.dtype == np.int32
  assert [list(ds[i]) for i in range(3)] == [[5, 6, 7], [1], [70000, 2, 3, 4]]
  assert [list(s) for s in ds.document(0)] == [[5, 6, 7], [1]]
  assert list(ds.tokens()) == [5, 6, 7, 1, 70000, 2, 3, 4]

def test_writer_output_is_byte_identical_to_the_format(tmp_path):
  docs = [[np.array([1, 2]), np.array([3])], [np.array([4, 5, 6])]]
  write_indexed_dataset(tmp_path / "w", docs, dtype=np.uint16)
  _hand_written_idx(tmp_path / "h", [s for d in docs for s in d], [0, 2, 3], code=8, dtype=np.uint16)
  for ext in (".idx", ".bin"):
    assert (tmp_path / f"w{ext}").read_bytes() == (tmp_path / f"h{ext}").read_bytes(), ext

@pytest.mark.parametrize("damage,rule", [
  (lambda idx, b: idx.write_bytes(b"NOTMEGA!!" + idx.read_bytes()[9:]), "bad magic"),
  (lambda idx, b: idx.write_bytes(idx.read_bytes()[:40]), "truncated"),
  (lambda idx, b: b.write_bytes(b.read_bytes()[:3]), "truncated"),
  (lambda idx, b: idx.write_bytes(idx.read_bytes()[:17] + bytes([42]) + idx.read_bytes()[18:]), "dtype code 42"),
  (lambda idx, b: idx.write_bytes(idx.read_bytes()[:9] + struct.pack("<Q", 7) + idx.read_bytes()[17:]), "version 7"),
  (lambda idx, b: b.unlink(), "missing"),
])
def test_corrupt_dataset_files_get_one_line_errors_naming_file_and_rule(tmp_path, damage, rule):
  write_indexed_dataset(tmp_path / "c", [[np.arange(10)], [np.arange(5)]], dtype=np.uint16)
  idx, b = tmp_path / "c.idx", tmp_path / "c.bin"
  damage(idx, b)
  with pytest.raises(DatasetError) as e: IndexedDataset(tmp_path / "c")
  msg = str(e.value)
  assert rule in msg and "\n" not in msg and (str(idx) in msg or str(b) in msg), msg

def test_writer_refuses_tokens_that_do_not_fit_the_dtype(tmp_path):
  with pytest.raises(DatasetError, match="does not fit"): write_indexed_dataset(tmp_path / "x", [[np.array([70000])]], dtype=np.uint16)

def test_shipped_corpus_is_deterministic_text_through_the_real_reader(tmp_path):
  ds = data.build_shipped_dataset(tmp_path / "corpus", n_documents=8, seed=3)
  assert ds.n_documents == 8 and ds.dtype == np.uint16
  text = data.byte_detokenize(ds[0])
  assert text == data.generate_corpus(8, seed=3)[0] and text.endswith(".")
  assert ds[0][0] == data.BOS and ds[0][-1] == data.EOS
  assert data.generate_corpus(8, seed=3) != data.generate_corpus(8, seed=4)

def test_batches_are_a_pure_function_of_seed_and_step(tmp_path):
  ds = data.build_shipped_dataset(tmp_path / "corpus", n_documents=16)
  a = data.TokenBatches(ds.tokens(), seq_len=16, batch_size=4, grad_accum=2, seed=1)
  b = data.TokenBatches(ds.tokens(), seq_len=16, batch_size=4, grad_accum=2, seed=1)
  assert a.batch(5).shape == (2, 4, 17) and a.batch(5).dtype == np.int32
  assert np.array_equal(a.batch(5), b.batch(5)) and not np.array_equal(a.batch(5), a.batch(6))
  assert not np.array_equal(a.batch(-1), a.batch(1))  # gate batches are not training batches
  # every window is a contiguous slice of the stream
  w = a.batch(3)[0, 0]
  s = ds.tokens()
  assert any(np.array_equal(s[i:i + 17], w) for i in range(s.size - 16))
  syn = data.SyntheticTokens(258, 16, 4, 1, 0)
  assert syn.label == "SYNTHETIC" and syn.batch(0).max() < 258

def test_cosine_schedule_warms_up_peaks_and_decays_to_min_lr():
  cfg = TrainConfig(steps=100, lr=1e-3, min_lr=1e-4, warmup=10)
  lrs = [cosine_lr(s, cfg) for s in range(100)]
  assert lrs[0] == pytest.approx(1e-4) and lrs[9] == pytest.approx(1e-3)
  assert all(a < b for a, b in zip(lrs[:9], lrs[1:10]))
  assert all(a >= b for a, b in zip(lrs[10:], lrs[11:]))
  assert cosine_lr(100, cfg) == pytest.approx(1e-4) and lrs[55] == pytest.approx(0.5 * (1e-3 + 1e-4), rel=1e-6)

def test_configs_reach_the_llama3_8b_shape():
  c = CONFIGS["llama3-8b"]
  assert (c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.ffn_dim, c.vocab_size) == (4096, 32, 32, 8, 14336, 128256)
  assert 7.9e9 < c.n_params() < 8.1e9  # Llama 3 8B: 8.03B parameters
  assert 1.1e9 < CONFIGS["llama3-1b"].n_params() < 1.3e9
  with pytest.raises(ValueError, match="n_kv_heads"): get_config("tiny", n_kv_heads=3)

def _numpy_llama(m:Llama, tokens:np.ndarray) -> np.ndarray:
  cfg = m.cfg
  def W(t):
    return t.numpy().astype(np.float64)
  def rms(x, w): return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + cfg.norm_eps) * w
  def rope(x):  # (B, T, H, D): rotate pairs (2i, 2i+1) by pos * theta^(-2i/D)
    _, T, _, D = x.shape
    ang = np.arange(T)[:, None] * cfg.rope_theta ** (-np.arange(0, D, 2) / D)[None, :]
    c, s = np.cos(ang)[None, :, None, :], np.sin(ang)[None, :, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * c - b * s
    out[..., 1::2] = a * s + b * c
    return out
  x = W(m.tok_embeddings.weight)[tokens]
  B, T = tokens.shape
  hd, rep = cfg.head_dim, cfg.n_heads // cfg.n_kv_heads
  for L in m.layers:
    h = rms(x, W(L.attention_norm.weight))
    q = rope((h @ W(L.attention.wq.weight).T).reshape(B, T, cfg.n_heads, hd))
    k = rope((h @ W(L.attention.wk.weight).T).reshape(B, T, cfg.n_kv_heads, hd))
    v = (h @ W(L.attention.wv.weight).T).reshape(B, T, cfg.n_kv_heads, hd)
    att = np.zeros((B, T, cfg.n_heads, hd))
    for head in range(cfg.n_heads):
      kv = head // rep  # query head h reads kv head h // rep
      sc = np.einsum("btd,bsd->bts", q[:, :, head], k[:, :, kv]) / np.sqrt(hd)
      sc = np.where(np.tril(np.ones((T, T), bool))[None], sc, -np.inf)
      p = np.exp(sc - sc.max(-1, keepdims=True))
      p /= p.sum(-1, keepdims=True)
      att[:, :, head] = np.einsum("bts,bsd->btd", p, v[:, :, kv])
    x = x + att.reshape(B, T, -1) @ W(L.attention.wo.weight).T
    h = rms(x, W(L.ffn_norm.weight))
    g = h @ W(L.feed_forward.w1.weight).T
    x = x + ((g / (1 + np.exp(-g))) * (h @ W(L.feed_forward.w3.weight).T)) @ W(L.feed_forward.w2.weight).T
  x = rms(x, W(m.norm.weight))
  return x @ (W(m.tok_embeddings.weight) if cfg.tie_embeddings else W(m.output.weight)).T

@pytest.mark.parametrize("tie", [True, False])
def test_llama_forward_matches_a_numpy_llama(tie):
  Tensor.manual_seed(1)
  m = Llama(get_config("tiny", n_layers=2, seq_len=12, tie_embeddings=tie), std=0.2)
  tokens = np.random.default_rng(0).integers(0, 258, size=(2, 12))
  got = m(Tensor(tokens.astype(np.int32))).numpy()
  want = _numpy_llama(m, tokens)
  assert got.shape == (2, 12, 258)
  np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
  # causal: changing the last token changes no earlier position's logits
  t2 = tokens.copy()
  t2[:, -1] = (t2[:, -1] + 1) % 258
  got2 = m(Tensor(t2.astype(np.int32))).numpy()
  np.testing.assert_allclose(got2[:, :-1], got[:, :-1], rtol=1e-5, atol=1e-5)
  assert not np.allclose(got2[:, -1], got[:, -1])

def test_mi350x_launch_script_is_valid_bash_and_a_valid_uopcheck_train_command():
  """No MI350X here: check the script parses as bash and its `uopcheck train` line parses with the real CLI."""
  import pathlib, shlex, subprocess
  from uopcheck.cli import build_parser
  script = pathlib.Path(__file__).resolve().parents[1] / "training" / "mi350x.sh"
  assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
  text = script.read_text().replace("\\\n", " ")
  line = next(l for l in text.splitlines() if l.strip().startswith("exec uopcheck train"))
  argv = shlex.split(line.replace('"$DATA"', "/data/c4/prefix").replace('"$OUT"', "out").replace('"$@"', ""))[2:]
  args = build_parser().parse_args(argv)
  assert (args.config, args.device, args.devices, args.data, args.validate) == ("llama3-8b", "AMD", 8, "/data/c4/prefix", True)
  assert args.batch_size % args.devices == 0 and "HCQ2=1" in text and "BEAM" in text
  # the gate checks the run's own step (issue #28): no reduced sequence length or batch, no one-device stand-in
  assert args.gate_seq_len is None and args.gate_batch_size is None and not args.gate_full_reference
  assert args.gate_freivalds > 0   # and every lane of each matmul by Freivalds' projection, beside the sampled lanes
  assert "uopcheck amd doctor" in text
