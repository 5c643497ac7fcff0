"""Benchmark: ``rules verify``'s three parts -- integer (every path, all values), IEEE float, and bounded model checking of
the memory and graph rules -- from one run of the whole table.

Prints, per part: rules with an instance, rules decided (proved, refuted with a confirmed counterexample, or for the
bounded part: no counterexample in the stated space), the rule x dtype instantiations and the fraction decided, the CPU
seconds of that part and rules decided per CPU-minute (each rule's own time, parts measured apart), and the whole table's
wall time. The first design's instance verifier, which this one replaced, measured 18 "decided" of 95 rules at 39.1 per
minute (27.6 s) on this machine -- unconfirmed refutations only (README, "rules verify"); it is no longer in the tree.

Usage: python bench/rule_verify.py [WORKERS]"""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import sys, time

def main(workers:int=2) -> None:
  from uopcheck.fuzz.rule_verify import verify_all, summary
  st = time.perf_counter()
  verdicts = verify_all(None, workers=workers, progress=False)
  wall = time.perf_counter() - st
  s = summary(verdicts)
  int_s, float_s, bounded_s = s["seconds"] - s["float_seconds"] - s["bounded_seconds"], s["float_seconds"], s["bounded_seconds"]
  rows = [("integer", s["integer_rules"], s["proved"] + s["refuted"], s["integer_instantiations"], s["integer_instantiations_decided"], int_s),
          ("float", s["float_rules"], s["float_proved"] + s["float_refuted"] + s["float_liberty"], s["float_instantiations"],
           s["float_instantiations_decided"], float_s),
          ("bounded", s["bounded_rules"], s["bounded_bounded"] + s["bounded_refuted"], s["bounded_instantiations"],
           s["bounded_instantiations_checked"] / max(1, s["bounded_instantiations"]), bounded_s)]
  print(f"{'part':8s} {'rules':>6s} {'decided':>8s} {'fraction':>9s} {'rule x dtype':>13s} {'decided':>8s} {'cpu s':>7s} {'decided/cpu-min':>16s}")
  for name, n, dec, inst, inst_dec, cpu in rows:
    print(f"{name:8s} {n:6d} {dec:8d} {dec / max(1, n):9.1%} {inst:13d} {inst_dec:8.1%} {cpu:7.1f} {dec / max(1e-9, cpu / 60):16.1f}")
  print(f"n/a: {len(s['no_verdict'])} rules ({'; '.join(f'{k[9:]}: {w}' for k, w in s['no_verdict_why'].items())})")
  print(f"bounded space: {s['bound']}")
  print(f"whole table wall time: {wall:.1f}s with {workers} workers ({s['rules']} rules)")

if __name__ == "__main__":
  main(*(int(a) for a in sys.argv[1:2]))
