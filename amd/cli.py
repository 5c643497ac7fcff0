"""``uopcheck amd doctor|env``: the bring-up report as a table or JSON, and the environment for a launch script."""
from __future__ import annotations
from uopcheck.amd import doctor

def main(args) -> int:
  rep = doctor.run(args.root)
  if args.amd_cmd == "doctor":
    if args.json: print(rep.to_json())
    else:
      from uopcheck.runs import report
      report(args, rep.result(), "amd-doctor")
    return rep.exit_code
  if rep.verdict == "no-amd-gpu":
    print("# uopcheck amd env: no AMD GPU found under", args.root)
    return rep.exit_code
  print("\n".join(doctor.env_lines(rep)))
  return 0
