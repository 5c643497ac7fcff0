"""HCQ2 profiling consistency: with PROFILE=1 every kernel gets a start and an end timestamp per device.

``check_profile(build)`` realizes a graph on the HCQ2 path under PROFILE=1 and checks the profile tinygrad
records (``Compiled.profile_events``: ProfileGraphEvent entries and their signal timestamps): one entry per kernel
per device, end >= start, kernels on one queue don't overlap, and the sum of kernel times <= the wall time.
Runs on CPU-HCQ2 here and on AMD with hardware."""
from __future__ import annotations
import re, time
from dataclasses import dataclass, field
from tinygrad import Tensor, Device
from tinygrad.device import Compiled, ProfileGraphEvent
from tinygrad.helpers import Context
from uopcheck.fast.runner import FastResult, capture, hcq2_mode, load_scheduler

@dataclass
class ProfileReport:
  kernels: int
  entries: list[tuple[str, str, float, float]] = field(default_factory=list)  # (device, name, start_us, end_us)
  wall_us: float = 0.0
  problems: list[str] = field(default_factory=list)

  @property
  def ok(self) -> bool: return not self.problems

def check_profile(build, device:str="CPU") -> ProfileReport:
  tensors = build()
  tensors = tensors if isinstance(tensors, list) else [tensors]
  fr = FastResult([])
  n_before = len(Compiled.profile_events)
  with hcq2_mode(True), Context(PROFILE=1), capture(fr, load_scheduler(None)):
    st = time.perf_counter()
    Tensor.realize(*tensors)
    Device[device].synchronize()
    wall = (time.perf_counter() - st) * 1e6
  rep = ProfileReport(len(fr.kernels), wall_us=wall)
  for ev in Compiled.profile_events[n_before:]:
    if isinstance(ev, ProfileGraphEvent):
      for ent in ev.ents:
        rep.entries.append((ent.device, re.sub(r"\x1b\[[0-9;]*m", "", str(ent.name)), float(ev.sigs[ent.st_id]), float(ev.sigs[ent.en_id])))
  names = [n for _, n, _, _ in rep.entries]
  if len(rep.entries) != rep.kernels: rep.problems.append(f"{len(rep.entries)} profile entries for {rep.kernels} kernels")
  for k in fr.kernels:
    if names.count(k.name) < 1: rep.problems.append(f"kernel {k.name} has no profile entry")
  for d, n, s, e in rep.entries:
    if e < s: rep.problems.append(f"{n} on {d}: end {e} < start {s}")
  for dev in {d for d, _, _, _ in rep.entries}:
    ents = sorted([(s, e, n) for d, n, s, e in rep.entries if d == dev])
    for (s0, e0, n0), (s1, e1, n1) in zip(ents, ents[1:]):
      if s1 < e0: rep.problems.append(f"{n0} and {n1} overlap on {dev}'s queue ({s1} < {e0})")
  total = sum(e - s for _, _, s, e in rep.entries)
  if total > rep.wall_us: rep.problems.append(f"kernel time {total:.1f}us exceeds the wall time {rep.wall_us:.1f}us")
  return rep
