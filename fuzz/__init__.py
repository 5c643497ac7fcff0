"""uopcheck.fuzz: hypothesis fuzzers for tensor graphs and symbolic integer expressions, z3 proofs, campaigns."""
