"""Benchmark: rule-coverage collection overhead, as (pytest with --rule-cov) / (pytest without), on the same tests, one run."""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import pathlib, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent

def run(extra:list[str]) -> float:
  st = time.perf_counter()
  subprocess.run([sys.executable, "-m", "pytest", "conformance/test_movement.py", "conformance/test_reduce.py", "-q", "-p", "no:warnings", *extra],
                 cwd=ROOT, check=True, capture_output=True)
  return time.perf_counter() - st

def main():
  with tempfile.TemporaryDirectory() as d:
    base = min(run([]) for _ in range(2))
    cov = min(run(["--rule-cov", "--rule-cov-dir", d]) for _ in range(2))
  print(f"plain pytest: {base:.1f}s   with --rule-cov: {cov:.1f}s   overhead {cov / base:.2f}x -> "
        f"{'MET' if cov / base <= 1.5 else 'MISSED'} (target <= 1.5x)")

if __name__ == "__main__": main()
