"""uopcheck.training: a Llama training run whose every kernel is cross-checked on the CPU before it starts."""
