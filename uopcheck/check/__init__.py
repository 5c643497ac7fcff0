"""The verdict layer, above the reference (``ref``) and the fast path (``fast``), below the fuzzers and the CLI.

``harness``: one case, ref vs fast, compared output by output; ``kernel``: per-kernel checks with the memory model and
blame; ``tolerance``: the one float tolerance for a graph or kernel output; ``profile``: HCQ2 profile consistency;
``catalog``: the real model graphs the cases are built from."""
