"""Benchmark: the mutation score of uopcheck's detectors against the mutant catalog (``fuzz/mutants.py``).

Runs ``uopcheck mutate`` over every mutant: check (all real graphs), a graph-fuzz campaign, rules verify, a conformance
subset, in that order, stopping at the first detector that catches each mutant. Prints the kill table, the score (live
mutants caught / live mutants) and how many each detector caught first -- the baseline being ``check`` alone, measured
in the same run. Usage: python bench/mutation_score.py [GRAPH_MINUTES] [MUTANT_ID ...]"""
from __future__ import annotations
from uopcheck.settings import apply_environment
apply_environment()   # HCQ2 and CC as the CLI sets them, before tinygrad is imported
import collections, json, pathlib, sys, time

def main(graph_minutes:float=1.0, ids:list[str]|None=None):
  from uopcheck.fuzz import mutate
  st = time.perf_counter()
  rows = mutate.run(ids or None, mutate.DETECTORS, graph_minutes=graph_minutes, workers=2, seed=0, progress=lambda s: print(s, flush=True))
  print(mutate.table(rows))
  k, n = mutate.score(rows)
  first = collections.Counter(r.caught_by for r in rows if r.caught_by)
  print(f"\ncaught first by: {dict(first)}")
  print(f"check alone (baseline): {first['check']}/{n}; all detectors: {k}/{n} = {100 * k / max(n, 1):.0f}% "
        f"(x{k / max(first['check'], 1):.2f} the baseline); target >= 95%; {time.perf_counter() - st:.0f} s")
  out = pathlib.Path("reports")
  out.mkdir(exist_ok=True)
  (out / "mutation_score.json").write_text(json.dumps({"caught": k, "live": n, "graph_minutes": graph_minutes, "first": dict(first),
                                                       "rows": [r.__dict__ for r in rows]}, indent=1))

if __name__ == "__main__":
  main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0, sys.argv[2:])
