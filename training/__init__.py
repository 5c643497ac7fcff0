"""uopcheck.training: a Llama training run whose every kernel is cross-checked on the CPU before it starts.

  model.py       Llama (RMSNorm, RoPE, GQA, SwiGLU), configs tiny .. llama3-8b
  trainer.py     AdamW + global-norm clipping, cosine schedule with warmup, gradient accumulation, TinyJit step, data parallel
  data.py        Megatron indexed dataset (.bin/.idx) reader and writer, the shipped generated corpus, batches
  gate.py        the CPU gate over the JIT-captured step (device vs CPU vs reference), reproducers
  checkpoint.py  save/resume; logger.py wandb (offline by default), metrics.jsonl, loss-curve PNG
  run.py         `uopcheck train`; mi350x.sh the 8x MI350X launch"""
