"""Process-wide settings uopcheck chooses for tinygrad, applied by an explicit call -- the CLI's ``main`` and the test
suite's conftest make it -- never by importing a uopcheck module (a library user's environment is theirs).

- ``HCQ2=1`` unless set: the HCQ2 runtime is the fast path uopcheck checks by default (``fast.hcq2_mode`` switches it
  per run, whatever the environment says). If tinygrad's realize was imported before this call (importing the CLI
  does), it is given the HCQ2 compile/link functions it imports only when HCQ2 is set at its import.
- ``CC``: Debian's clang 14 rejects ``__bf16`` arithmetic, so when the user has not chosen a compiler, the newest
  versioned clang the set-up installed."""
from __future__ import annotations
import os, re, shutil, sys

CLANGS = ("clang-21", "clang-20", "clang-19", "clang-18", "clang-17")

def apply_environment() -> None:
  os.environ.setdefault("HCQ2", "1")
  if "CC" not in os.environ and (cc := next((c for c in CLANGS if shutil.which(c)), None)) is not None: os.environ["CC"] = cc
  if (helpers := sys.modules.get("tinygrad.helpers")) is not None: helpers.getenv.cache_clear()   # tinygrad caches getenv
  if (realize := sys.modules.get("tinygrad.engine.realize")) is not None and os.environ["HCQ2"] not in ("", "0"): give_hcq2_functions(realize)

def tinygrad_import_problem() -> str|None:
  """tinygrad parses its integer settings (DEBUG, BEAM, HCQ2, ...) from the environment when it is imported and stops
  with a bare ValueError on one that is not a number: import it, and name the variable in one line (None: it imports)"""
  try: import tinygrad  # noqa: F401
  except ValueError as e:
    if (m := re.fullmatch(r"invalid literal for int\(\) with base 10: '(.*)'", str(e), re.S)) is None: raise
    names = sorted(k for k, v in os.environ.items() if v == m.group(1)) or ["a variable"]
    return (f"environment: {' or '.join(f'{k}={m.group(1)!r}' for k in names)} is not an integer, and tinygrad reads it as one "
            "when it is imported: unset it or give a number")
  return None

def give_hcq2_functions(realize) -> None:
  """tinygrad's realize.py imports its HCQ2 compile/link functions at import time only when HCQ2 is set then: imported
  before HCQ2 was switched on, run_linear would reach hcq_compile without it (NameError) -- give it the same names"""
  if hasattr(realize, "hcq_compile"): return
  from tinygrad.runtime.support import hcq2
  realize.hcq_compile, realize.hcq_link, realize.HCQ_RUNTIME_DEV = hcq2.hcq_compile, hcq2.hcq_link, hcq2.HCQ_RUNTIME_DEV

# ** every limit, budget and timeout uopcheck runs under, named once (the modules below import them from here) **

# campaigns (fuzz/campaign.py): property calls spent shrinking one failure, per fuzzer
SYMBOLIC_SHRINK_BUDGET = 200
GRAPH_SHRINK_BUDGET = 150          # graph cases are slower: fewer shrink steps
SHRINK_RESERVE_FRACTION = 0.2      # the end of a campaign's budget in which no new case starts (shrinking and signing go on)
SHRINK_RESERVE_MAX_S = 120.0       # ... at most this long
CASE_TIMEOUT_S = 60.0              # one graph case (build, reference, compile, run, compare) past this is a hang
LARGE_CASE_TIMEOUT_S = 300.0       # the same for --profile large: a 40-step program over 2M elements is slow, not hung, at 60 s
KILL_GRACE_S = 5.0                 # how long past the deadline a worker may take to stop by itself before it is killed
RECHECK_STARTUP_S = 15.0           # a lost case's re-run in a fresh process (fuzz/lost_case.py): the case timeout plus this to start up
CLUSTER_SHARD_MINUTES = 5.0        # --cluster: a Dask task fuzzes this long, then the client submits the next (a lost one costs less)
# rules verify (fuzz/rule_verify.py): z3's deterministic resource counter, never a wall-clock timeout
PATH_BUDGET = 24                   # paths explored per instance
PLAN_BUDGET = 256                   # distinct instances (op/dtype/operand alternatives) per rule and dtype
PLAN_SCAN = 2000                   # plans built per rule and dtype looking for them (past it the space counts as capped)
RLIMIT = 10_000_000                # z3 resource units per feasibility query
PROOF_RLIMIT = 20_000_000          # ... per refinement proof (64-bit division needs this much)
MAX_QUERIES = 2400                 # z3 queries per rule, all dtypes together (most take milliseconds)
RULE_RLIMIT = 60_000_000           # z3 resource units per rule, all dtypes together
# ... and each instance first gets a scouting look of at most this much (charged to its rule's budget)
SCOUT_QUERIES = 8
SCOUT_RLIMIT = 500_000
# ... times this for the named rules: each needs it to be decided at every dtype (measured: 10x refutes both at the
# unsigned dtypes and long, 48 s and 34 s on one core), and a budget named per rule keeps the table reproducible
RULE_BUDGET_SCALE = {"tinygrad/uop/symbolic.py:278": 10, "tinygrad/uop/divandmod.py:103": 10,
                     "tinygrad/uop/symbolic.py:140": 10,   # (x&mask)//c: int, long, uint16, uint32 decided at 10x (102 s on one core)
                     "tinygrad/uop/symbolic.py:257": 4}    # vmin == vmax folding: x//y takes 13-17M units per sized dtype
# ... and this many paths per instance for the named rules: vmin == vmax folding of x//y runs 37 paths of tinygrad's range
# analysis at weakint, int8 and int64 (x%y: 23), each proved in well under a second with exact Int symbols
RULE_PATH_BUDGET = {"tinygrad/uop/symbolic.py:257": 64}
# ... the float instances (fuzz/float_verify.py): IEEE proofs, each free constant at probe values
FLOAT_PROOF_RLIMIT = 20_000_000    # z3 resource units per IEEE refinement proof
FLOAT_RULE_RLIMIT = 400_000_000    # ... per rule, its four float dtypes together (a proved query is charged a quarter)
FLOAT_PROBE_COMBOS = 48            # probe combinations of a rule's free float constants tried per instance
# the training gate (training/gate.py): a kernel that fails is re-run this many times from its recorded inputs on fresh
# buffers; the same wrong bytes every time is a compiler/runtime bug, anything else a nondeterministic device fault
GATE_RERUNS = 3
# the gate's step-level (tensor) reference runs in numpy on the host: with --gate-step-reference auto (the default) it is
# evaluated when its estimated cost (training.gate.step_reference_flops: fwd+bwd, twice) is at most this, else skipped
# and the skip reported (README "Training": ~10-20 GFLOP/s measured here, so ~1-2 min)
GATE_STEP_REFERENCE_MAX_FLOPS = 1e12
# with a sampled reference, each kernel whose store is a sum of float contractions (a matmul's) is also checked on every
# lane by Freivalds' projection (ref/freivalds.py): this many random +-1 vectors per launch (0: off; --gate-freivalds)
GATE_FREIVALDS = 2
# ... and a kernel whose full reference run spans at most this many times its largest buffer (elementwise, a plain
# reduction: no product of ranges) is checked on every lane even then -- sampling only saves where a run spans a product
GATE_FULL_IF_CHEAP = 8
# inputs a user may hand uopcheck: bounded before anything is allocated or parsed further
MAX_FINDING_BYTES = 4 << 20        # one finding / reproducer file
MAX_GRAPH_NODES = 100_000          # one serialized UOp graph (spec/uop_json.py)
MAX_PROGRAM_ELEMENTS = 1 << 22     # any value of a fuzzed tensor program
MAX_JIT_CALLS = 8                  # TinyJit calls of one fuzzed program
MAX_REF_ELEMENTS = 1 << 27         # any value the reference interpreter materializes
MAX_REF_BYTES = 4 << 30            # all the values of one graph the reference holds together (UOPCHECK_MAX_REF_BYTES overrides)
MAX_MESSAGE = 400                  # a one-line error names the op and the rule; it never prints a whole graph

def max_ref_bytes() -> int:
  """MAX_REF_BYTES, or UOPCHECK_MAX_REF_BYTES when set (a positive whole number of bytes; anything else is a ValueError)"""
  v = os.environ.get("UOPCHECK_MAX_REF_BYTES")
  if v is None: return MAX_REF_BYTES
  if not v.strip().isdigit() or int(v) <= 0: raise ValueError(f"UOPCHECK_MAX_REF_BYTES={v!r}: must be a positive whole number of bytes")
  return int(v)

# hypothesis profiles for the suite: how many examples a property test draws, relative to its own stated count
# (conformance/profiles.examples). Select with pytest's --hypothesis-profile NAME or UOPCHECK_HYPOTHESIS_PROFILE=NAME.
HYPOTHESIS_PROFILES = {"dev": 25, "ci": 100, "nightly": 1000}   # max_examples of a test that states none

# the same profiles for campaigns (uopcheck fuzz --hypothesis-profile, or the variable): a campaign runs to its deadline
# whatever the profile, so a profile sets how hard it shrinks each finding -- its shrink budget times this
CAMPAIGN_SHRINK_SCALE = {"dev": 0.25, "ci": 1.0, "nightly": 4.0}

def selected_profile(default:str="ci") -> str:
  """the profile UOPCHECK_HYPOTHESIS_PROFILE names (``default`` when unset); another name is a ValueError naming the choices"""
  name = os.environ.get("UOPCHECK_HYPOTHESIS_PROFILE", default)
  if name not in HYPOTHESIS_PROFILES: raise ValueError(f"UOPCHECK_HYPOTHESIS_PROFILE={name!r}: expected one of {', '.join(HYPOTHESIS_PROFILES)}")
  return name

def campaign_shrink_budget(base:int) -> int:
  """a campaign's shrink budget (property calls spent shrinking one finding) under the selected profile"""
  return max(10, round(base * CAMPAIGN_SHRINK_SCALE[selected_profile()]))

def register_hypothesis_profiles(default:str="ci") -> str:
  from hypothesis import settings
  for name, n in HYPOTHESIS_PROFILES.items(): settings.register_profile(name, max_examples=n)
  settings.load_profile(name := selected_profile(default))
  return name
