"""pytest conformance/: ref vs fast, op by op, dtype by dtype, real graphs, and spec checks at every stage."""
