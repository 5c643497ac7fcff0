"""Benchmark: the universal rule verifier (``rules verify``) against the first design's instance-based one, same run.

Prints, for each: rules looked at, rules *decided for all inputs* (proved for every value, or refuted with a numpy-confirmed
counterexample), rules per minute, and the fraction decided. The instance verifier proves nothing for all inputs (it
checks up to N random instances), so its "decided" column counts only its refutations -- and it does not confirm them.

Then the universal table's integer and float parts apart: rules and rule x dtype instantiations decided, and rules decided
per CPU-minute.

Usage: python bench/rule_verify.py [WORKERS] [INSTANCES]"""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import sys, time
from uopcheck.spec.ints import OverflowReading

def main(workers:int=2, instances:int=20) -> None:
  from uopcheck.fuzz.rules import verify_rules
  from uopcheck.fuzz.rule_verify import verify_all, summary
  st = time.perf_counter()
  old = verify_rules(["symbolic", "divandmod"], instances=instances, seed=0, reading=OverflowReading.WRAP)
  t_old = time.perf_counter() - st
  old_tried = [t for t in old if t.tried]
  old_refuted = sum(1 for t in old if t.refuted)
  st = time.perf_counter()
  new = verify_all(None, workers=workers, progress=False)
  t_new = time.perf_counter() - st
  s = summary(new)
  decided = s["proved"] + s["refuted"]
  print(f"{'verifier':34s} {'rules':>6s} {'with an instance':>17s} {'decided for all':>16s} {'time':>8s} {'decided/min':>12s} {'fraction':>9s}")
  print(f"{'instances (' + str(instances) + ' per rule, first design)':34s} {len(old):6d} {len(old_tried):17d} {old_refuted:16d} "
        f"{t_old:7.1f}s {old_refuted / (t_old / 60):12.1f} {old_refuted / max(1, len(old_tried)):9.1%}")
  print(f"{'universal (every path, all values)':34s} {s['rules']:6d} {s['integer_rules']:17d} {decided:16d} "
        f"{t_new:7.1f}s {decided / (t_new / 60):12.1f} {s['decided_fraction']:9.1%}")
  print(f"ratio universal/instances: decided x{decided / max(1, old_refuted):.1f}, decided per minute x"
        f"{(decided / (t_new / 60)) / max(1e-9, old_refuted / (t_old / 60)):.1f}")
  print(f"universal: proved {s['proved']}, refuted {s['refuted']}, bounded {s['bounded']}, unknown {s['unknown']}, "
        f"no integer instance {s['not_integer']}")
  # integer and float apart (fuzz/float_verify.py decides the float instances under IEEE): per rule and per rule x dtype,
  # and rules decided per CPU-minute (each rule's own time, integer and float parts measured apart)
  int_s, float_s = s["seconds"] - s["float_seconds"], s["float_seconds"]
  int_dec, float_dec = s["proved"] + s["refuted"], s["float_proved"] + s["float_refuted"] + s["float_liberty"]
  print(f"{'part':8s} {'rules':>6s} {'decided':>8s} {'fraction':>9s} {'rule x dtype':>13s} {'decided':>8s} {'cpu s':>7s} {'decided/cpu-min':>16s}")
  print(f"{'integer':8s} {s['integer_rules']:6d} {int_dec:8d} {s['decided_fraction']:9.1%} {s['integer_instantiations']:13d} "
        f"{s['integer_instantiations_decided']:8.1%} {int_s:7.1f} {int_dec / max(1e-9, int_s / 60):16.1f}")
  print(f"{'float':8s} {s['float_rules']:6d} {float_dec:8d} {s['float_decided_fraction']:9.1%} {s['float_instantiations']:13d} "
        f"{s['float_instantiations_decided']:8.1%} {float_s:7.1f} {float_dec / max(1e-9, float_s / 60):16.1f}")
  print(f"whole table (integer + float) wall time: {t_new:.1f}s with {workers} workers")

if __name__ == "__main__":
  main(*(int(a) for a in sys.argv[1:3]))
