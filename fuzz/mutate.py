"""``uopcheck mutate``: score uopcheck's detectors against deliberate bugs in tinygrad (the catalog: ``fuzz/mutants.py``).

For each mutant: copy the installed tinygrad package into a private directory, apply the mutant's one-text edit there
(the installed package is never touched), and run everything in subprocesses whose ``PYTHONPATH`` puts the copy first.
First the witness runs, on the stock package and on the mutant: a mutant is *live* only if its witness agrees with numpy
on stock and not under the mutant (a crash under the mutant counts as live). Then the chosen detectors run in order:

- ``check``: ``uopcheck check`` on every real graph -- caught when it reports a disagreement or fails (exit 1 or 3);
- ``graph``: a graph-fuzz campaign of ``--graph-minutes`` -- caught when it saves a finding whose program passes on
  stock tinygrad (re-checked in a stock subprocess, so a bug tinygrad already has never counts as a kill);
- ``rules``: ``rules verify`` -- caught when a rule on the mutated line is refuted (only for rule files);
- ``conformance``: a pytest subset (ALU, casts, movement, reductions, int semantics, kernels) -- caught when it fails.

A mutant of one device's path (``Mutant.device``, e.g. the AMD backend on tinygrad's mock GPU) has its witness and every
detector run on that device (``--device``; the conformance subset is then the emulated-AMD suite), and its witness also on
the CPU path under the mutant: ``cpu path`` says ``blind`` when the CPU computes right there, so only that device can see it.

The kill table lists each mutant, its layer, liveness, the detector that caught it and the seconds until it did."""
from __future__ import annotations
import argparse
from typing import Any, Callable
import json, os, pathlib, shutil, subprocess, sys, tempfile, time
from dataclasses import dataclass, field, asdict
from uopcheck.spec.errors import SpecError
from uopcheck.results import Column, Table, Result
from uopcheck.fuzz.mutants import Mutant, MUTANTS, BY_ID

DETECTORS = ("check", "graph", "rules", "conformance")
GATE_DETECTORS = ("gate", "gate-full")   # the training gate, sampled / full reference: its recall (bench/train_gate.py --mutants)
GATE_STEP = ["--config", "tiny", "--layers", "1", "--seq-len", "16", "--batch-size", "4", "--no-wandb"]
CONFORMANCE_SUBSET = ["conformance/test_alu.py", "conformance/test_cast.py", "conformance/test_movement.py", "conformance/test_reduce.py",
                      "conformance/test_int_semantics.py", "conformance/test_kernel.py"]
DEVICE_CONFORMANCE_SUBSET = ["conformance/test_amd_emulated.py", "-m", "not slow"]   # the AMD path in emulation (gfx950 and RDNA3)
RULE_FILES = {"uop/symbolic.py", "uop/divandmod.py", "uop/weak.py"}
PROJECT = pathlib.Path(__file__).resolve().parent.parent

@dataclass
class KillRow:
  mutant: str
  layer: str
  live: str                       # live | live (crash) | not live | witness fails on stock
  caught_by: str = ""             # the first detector that caught it ("" = survived)
  seconds: float = 0.0            # from the first detector's start to the catch
  detectors: dict = field(default_factory=dict)   # detector -> "caught: ..." | "missed: ..." | "n/a" | "skipped"
  device: str = ""                # the device the mutant's path runs on ("" = CPU)
  cpu_path: str = ""              # device mutants: "blind" (the CPU witness under the mutant is right) | "sees"

def tinygrad_dir() -> pathlib.Path:
  import importlib.util
  spec = importlib.util.find_spec("tinygrad")
  if spec is None or spec.origin is None: raise SpecError("tinygrad is not installed")
  return pathlib.Path(spec.origin).parent

def line_of(text:str, old:str) -> int: return text[:text.index(old)].count("\n") + 1

def check_applies(m:Mutant, src:pathlib.Path|None=None) -> int:
  """The line the mutant edits in the installed tinygrad; SpecError when its text is not there exactly once."""
  text = ((src or tinygrad_dir()) / m.file).read_text()
  if (n := text.count(m.old)) != 1: raise SpecError(f"mutant {m.id}: its text occurs {n} times in tinygrad/{m.file} (must be exactly once)")
  return line_of(text, m.old)

def make_copy(m:Mutant, into:pathlib.Path) -> pathlib.Path:
  """A private copy of tinygrad with the mutant applied; returns the directory to put first on PYTHONPATH."""
  site = into / "site"
  shutil.copytree(tinygrad_dir(), site / "tinygrad", ignore=shutil.ignore_patterns("__pycache__"))
  f = site / "tinygrad" / m.file
  check_applies(m, site / "tinygrad")
  f.write_text(f.read_text().replace(m.old, m.new))
  return site

def env_for(site:pathlib.Path|None) -> dict:
  env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
  if site is not None: env["PYTHONPATH"] = os.pathsep.join([str(site), str(PROJECT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
  return env

def _run(cmd:list[str], env:dict, cwd, timeout:float) -> tuple[int, str]:
  """A subprocess in its own process group, killed whole past ``timeout`` (rc -9)."""
  import signal
  p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
  try: out, _ = p.communicate(timeout=timeout)
  except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    out, _ = p.communicate()
    return -9, out or ""
  return p.returncode, out

WITNESS_TAIL = """
import json as _j
_got, _want = np.asarray(got), np.asarray(want)
_same = _got.shape == _want.shape and (np.array_equal(_got, _want) if _want.dtype.kind in 'biu' else
                                       np.allclose(_got, _want, rtol=1e-5, atol=1e-6, equal_nan=True))
import tinygrad
print(_j.dumps({"same": bool(_same), "tinygrad": tinygrad.__file__}))
"""

ON_DEVICE = """
import json as _j, sys as _s
from uopcheck.spec.errors import SpecError as _SE
from uopcheck.fast.devices import default_device as _dd
try: _on_device = _dd({device!r}); _on_device.__enter__()   # held open for the whole witness
except _SE as _e: print(_j.dumps({{"unavailable": str(_e)}})); _s.exit(0)
"""

def witness(m:Mutant, site:pathlib.Path|None, cwd:pathlib.Path, device:str|None=None) -> tuple[bool|None, str]:
  """(True: agrees with numpy, False: differs, None: crashed), and which tinygrad ran; on ``device`` (default: the mutant's,
  "" = the CPU path). A device that cannot run here is a SpecError (one line), never a crash of the mutant."""
  device = m.device if device is None else device
  code = (ON_DEVICE.format(device=device) if device else "") + "import numpy as np\nfrom tinygrad import Tensor, dtypes\n" + m.witness + WITNESS_TAIL
  _, out = _run([sys.executable, "-c", code], env_for(site), cwd, 300)
  try: d = json.loads(out.strip().splitlines()[-1])
  except (ValueError, IndexError): return None, out[-300:]
  if "unavailable" in d: raise SpecError(f"mutant {m.id}: {d['unavailable']}")
  return d["same"], d["tinygrad"]

def _cli(args:list[str]) -> list[str]: return [sys.executable, "-m", "uopcheck.cli", *args]
def _device_args(m:Mutant) -> list[str]: return ["--device", m.device] if m.device else []

def detect_check(m:Mutant, site:pathlib.Path|None, work:pathlib.Path, opts:dict) -> tuple[bool, str]:
  """``uopcheck check`` on every real graph: caught when it exits with a finding, an internal error or a crash; the graphs
  that failed are read from its JSON report (never from the rendered table)"""
  rdir = work / "check-report"
  rc, _ = _run(_cli(["check", *opts.get("check_graphs", []), *_device_args(m), "--report", "json", "--report-dir", str(rdir)]),
               env_for(site), work, opts.get("check_timeout", 900))
  try: rows = json.loads((rdir / "check.json").read_text())
  except (OSError, ValueError): rows = []
  fails = [r["graph"] for r in rows if isinstance(r, dict) and r.get("result") in ("FAIL", "CRASH", "HANG")]
  return rc in (1, 3, -9) or rc < 0, f"exit {rc}" + (f"; failing: {', '.join(fails[:4])}" if fails else "")

def detect_graph(m:Mutant, site:pathlib.Path|None, work:pathlib.Path, opts:dict) -> tuple[bool, str]:
  fdir = work / "graph-findings"
  minutes = opts.get("graph_minutes", 1.0)
  rc, _ = _run(_cli(["fuzz", "graph", "--minutes", str(minutes), "--workers", str(opts.get("workers", 1)), "--seed", str(opts.get("seed", 0)),
                       "--findings", str(fdir), "--db", str(work / "db"), "--case-timeout", "30", *_device_args(m)]),
                 env_for(site), work, minutes * 60 + 240)
  files = sorted(fdir.glob("graph-*.json"))
  if not files: return False, f"exit {rc}; no finding"
  # a kill needs a program that passes on stock tinygrad (on the mutant's device): re-check every finding there
  code = ((ON_DEVICE.format(device=m.device) if m.device else "") + "import json, sys\nfrom uopcheck.fuzz.graph import check_program\nok = []\n"
          "for f in sys.argv[1:]:\n  d = json.load(open(f))\n  ok.append(f if check_program(d['program']).ok else None)\n"
          "print(json.dumps([x for x in ok if x]))")
  rc2, out2 = _run([sys.executable, "-c", code, *map(str, files)], env_for(None), work, 600)
  try: passing = json.loads(out2.strip().splitlines()[-1])
  except (ValueError, IndexError): return False, f"{len(files)} findings; stock re-check failed (exit {rc2})"
  if passing: return True, f"{len(passing)}/{len(files)} findings pass on stock, e.g. {pathlib.Path(passing[0]).name}"
  return False, f"{len(files)} findings, all also fail on stock tinygrad (its own bugs)"

RULES_REFUTED = """import json
from uopcheck.fuzz.rule_verify import all_rules, verify_rule
rs = [r for r in all_rules() if r.key.startswith('tinygrad/{file}:') and {lo} <= int(r.key.split(':')[1].split('#')[0]) <= {hi}]
out = []
for r in rs:
  v = verify_rule(r)
  out += [r.key + ' at ' + d for d, x in {{**v.dtypes, **{{'bounded ' + k: y for k, y in v.bounded_dtypes.items()}}}}.items() if x == 'refuted']
print(json.dumps(out))
"""

def detect_rules(m:Mutant, site:pathlib.Path|None, work:pathlib.Path, opts:dict) -> tuple[bool, str]:
  """``rules verify`` (integer, IEEE float and bounded model checking) on the rules written at or just above the mutated
  line, on the mutant and on stock tinygrad: caught when the mutant refutes a rule at a dtype stock does not (a rule stock
  already refutes at one dtype -- a reviewed refutation -- still catches a mutant that breaks it at another)"""
  if m.file not in RULE_FILES: return False, "n/a"
  line = check_applies(m)
  code = RULES_REFUTED.format(file=m.file, lo=line - 4, hi=line)
  refuted = []
  for s in (site, None):
    rc, out = _run([sys.executable, "-c", code], env_for(s), work, opts.get("rules_timeout", 900))
    try: refuted.append(set(json.loads(out.strip().splitlines()[-1])))
    except (ValueError, IndexError): return rc != 0 and s is site, f"rules verify failed on {'the mutant' if s is site else 'stock'} (exit {rc})"
  new = sorted(refuted[0] - refuted[1])
  return bool(new), f"refuted {new[0]} (stock: not)" if new else f"no rule at {m.file}:{line - 4}..{line} refuted beyond stock"

def detect_conformance(m:Mutant, site:pathlib.Path|None, work:pathlib.Path, opts:dict) -> tuple[bool, str]:
  subset = DEVICE_CONFORMANCE_SUBSET if m.device else CONFORMANCE_SUBSET
  rc, out = _run([sys.executable, "-m", "pytest", *subset, "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
                 env_for(site), PROJECT, opts.get("conformance_timeout", 900))
  last = next((ln for ln in reversed(out.splitlines()) if ln.strip()), "")
  return rc not in (0, 5), f"exit {rc}: {last[:120]}"

STEP_DIGEST = """from uopcheck.settings import apply_environment
apply_environment()
import hashlib, numpy as np
from uopcheck.training.model import get_config
from uopcheck.training.trainer import Trainer, TrainConfig
tr = Trainer(get_config("tiny", n_layers=1, seq_len=16), TrainConfig(batch_size=4))
batch = np.random.default_rng(0).integers(0, 258, size=(1, 4, 17))
for _ in range(2): loss, gnorm = tr.step(batch, 1e-3)
print(hashlib.sha256(np.float64([loss, gnorm]).tobytes() + b"".join(a.tobytes() for a in tr.snapshot())).hexdigest())
"""

def step_digest(site:pathlib.Path|None, work:pathlib.Path) -> str|None:
  """the bytes two train steps of the gate's small Llama leave (loss, grad norm, every state tensor), hashed; None: it crashed"""
  rc, out = _run([sys.executable, "-c", STEP_DIGEST], env_for(site), work, 600)
  last = out.strip().splitlines()[-1:] if rc == 0 else []
  return last[0] if last and len(last[0]) == 64 else None

def detect_gate(m:Mutant, site:pathlib.Path|None, work:pathlib.Path, opts:dict, full:bool=False) -> tuple[bool, str]:
  """``uopcheck train --validate --gate-only`` on the small Llama step under the mutant: caught when the gate refuses to
  start the run (exit 1, or 5 -- a fault, the wrong label for a mutant, said in the detail). n/a for a mutant that leaves
  the train step's bytes as they are on stock tinygrad (not live in training) or runs on another device."""
  if m.device: return False, "n/a"
  if "stock_step" not in opts: opts["stock_step"] = step_digest(None, work)
  under = step_digest(site, work)
  if under is not None and under == opts["stock_step"]: return False, "n/a"
  out_dir = work / ("gate-full" if full else "gate")
  rc, _ = _run(_cli(["train", *GATE_STEP, "--validate", "--gate-only", "--out", str(out_dir), *(["--gate-full-reference"] if full else [])]),
                 env_for(site), work, opts.get("gate_timeout", 900))
  try: blame = json.loads((out_dir / "gate.json").read_text()).get("blame")
  except (OSError, ValueError): blame = None
  live = "live in the step" if under is not None else "the step crashes"
  return rc in (1, 5), f"exit {rc} ({live}){': ' + blame if blame else ''}" + ("; labelled a device fault" if rc == 5 else "")

DETECTOR_FNS = {"check": detect_check, "graph": detect_graph, "rules": detect_rules, "conformance": detect_conformance,
                "gate": detect_gate, "gate-full": lambda m, site, work, opts: detect_gate(m, site, work, opts, full=True)}

def run(ids:list[str]|None=None, detectors:tuple[str, ...]=DETECTORS, all_detectors:bool=False,
        progress:Callable[..., Any]=print, **opts:Any) -> list[KillRow]:
  mutants = [BY_ID[i] for i in ids] if ids else MUTANTS
  rows = []
  for k, m in enumerate(mutants):
    with tempfile.TemporaryDirectory(prefix=f"uopcheck-mutant-{m.id}-") as tmp:
      work = pathlib.Path(tmp)
      site = make_copy(m, work)
      rc, out = _run([sys.executable, "-c", "import tinygrad; print(tinygrad.__file__)"], env_for(site), work, 120)
      if rc != 0 or not out.strip().splitlines()[-1:] or not out.strip().splitlines()[-1].startswith(str(site)):
        raise SpecError(f"mutant {m.id}: the private copy of tinygrad does not import first on PYTHONPATH (exit {rc}): {out[-200:]!r}")
      stock, _ = witness(m, None, work)
      under, which = witness(m, site, work)
      if under is not None and not which.startswith(str(site)): raise SpecError(f"mutant {m.id}: the witness ran {which}, not the private copy")
      live = "witness fails on stock" if stock is not True else "live" if under is False else "live (crash)" if under is None else "not live"
      row = KillRow(m.id, m.layer, live, device=m.device)
      if m.device: row.cpu_path = "blind" if witness(m, site, work, device="")[0] is True else "sees"
      if live.startswith("live"):
        start = time.perf_counter()
        for d in detectors:
          if row.caught_by and not all_detectors:
            row.detectors[d] = "skipped"
            continue
          caught, detail = DETECTOR_FNS[d](m, site, work, opts)
          row.detectors[d] = "n/a" if detail == "n/a" else f"{'caught' if caught else 'missed'}: {detail}"
          if caught and not row.caught_by: row.caught_by, row.seconds = d, round(time.perf_counter() - start, 1)
      rows.append(row)
      progress(f"[{k + 1}/{len(mutants)}] {m.id}: {live}" + (f", caught by {row.caught_by} in {row.seconds:.0f} s" if row.caught_by else
                                                             ", SURVIVED" if live.startswith("live") and detectors else ""))
  return rows

def score(rows:list[KillRow]) -> tuple[int, int]:
  live = [r for r in rows if r.live.startswith("live")]
  return sum(bool(r.caught_by) for r in live), len(live)

COLUMNS = [Column("mutant", width=28), Column("layer", width=22), Column("device", width=28), Column("live", width=12), Column("caught by", width=12),
           Column("s", width=6, align=">", fmt=".0f"), Column("details")]

def result(rows:list[KillRow], extra:dict|None=None) -> Result:
  """the kill table: per mutant whether it is live and which detector caught it, and the mutation score"""
  table = Table(COLUMNS, [{"mutant": r.mutant, "layer": r.layer, "live": r.live, "s": r.seconds,
                           "device": (r.device or "CPU") + (f" (CPU {r.cpu_path})" if r.cpu_path else ""),
                           "caught by": r.caught_by or ("SURVIVED" if r.live.startswith("live") else "-"),
                           "details": "; ".join(f"{d}: {v}" for d, v in r.detectors.items() if v not in ("skipped", "n/a"))[:160]} for r in rows])
  k, n = score(rows)
  return Result("mutate", "uopcheck mutate: mutants of tinygrad and the detectors that catch them",
                {**(extra or {}), "caught": k, "live": n, "rows": [asdict(r) for r in rows]}, tables=[table],
                summary=[f"mutation score: {k}/{n} live mutants caught ({100 * k / max(n, 1):.0f}%); {len(rows) - n} not live"])

def main(args:argparse.Namespace) -> int:
  if args.list:
    for m in MUTANTS: print(f"{m.id:28s} {m.layer:22s} {m.device or 'CPU':16s} tinygrad/{m.file}:{check_applies(m)}  {m.what}")
    return 0
  if unknown := [i for i in (args.ids or []) if i not in BY_ID]: raise SpecError(f"unknown mutant(s) {unknown}; see uopcheck mutate --list")
  dets = tuple(d for d in args.detectors.split(",") if d)
  if bad := [d for d in dets if d not in DETECTOR_FNS]: raise SpecError(f"unknown detector(s) {bad}; known: {', '.join(DETECTOR_FNS)}")
  for m in (BY_ID[i] for i in args.ids) if args.ids else MUTANTS: check_applies(m)   # every edit applies before anything runs
  rows = run(args.ids, dets, args.all_detectors, graph_minutes=args.graph_minutes, workers=args.workers, seed=args.seed)
  from uopcheck.runs import report
  res = result(rows, {"detectors": list(dets), "graph_minutes": args.graph_minutes})
  report(args, res, "mutate")
  return 0 if res.data["caught"] == res.data["live"] else 1   # a live mutant no detector caught is a finding about uopcheck itself
