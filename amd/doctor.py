"""``uopcheck amd doctor``: the MI350X bring-up runbook as checks. Everything is read under a root directory
(``/`` by default), so tests run it against fixture trees (``amd/fixtures.py``) that reproduce each failure mode.

Each check says pass / fail / warn / n/a, what it saw, and the exact fix. The verdict: ready (exit 0), not ready
(exit 1), or no AMD GPU at all (exit 2)."""
from __future__ import annotations
import os, pathlib, re
from dataclasses import dataclass, asdict, field
from uopcheck.results import Column, Table, Result
from uopcheck.results.render import TERM, RENDERERS

JSON = RENDERERS["json"]

AMD_VENDOR = 0x1002
GPU_NAMES = {0x74a1: "MI300X", 0x74a5: "MI325X", 0x75a0: "MI350X (gfx950)", 0x75b0: "MI350X/MI355X (gfx950)", 0x7550: "RX 9070 (gfx1201)",
             0x744c: "RX 7900 XTX (gfx1100)"}
GFX950 = 90500  # kfd gfx_target_version of gfx950

@dataclass
class Check:
  name: str
  status: str   # pass | fail | warn | n/a
  seen: str
  fix: str = ""

@dataclass
class Report:
  root: str
  checks: list[Check] = field(default_factory=list)
  gpus: list[dict] = field(default_factory=list)
  env: dict[str, str] = field(default_factory=dict)

  @property
  def verdict(self) -> str:
    if not self.gpus: return "no-amd-gpu"
    return "ready" if all(c.status in ("pass", "warn", "n/a") for c in self.checks) else "not-ready"

  @property
  def exit_code(self) -> int: return {"ready": 0, "not-ready": 1, "no-amd-gpu": 2}[self.verdict]

  def result(self) -> Result:
    """one row per check (its fix on the row below when it fails or warns), the verdict, and the JSON payload"""
    rows: list[dict] = []
    for c in self.checks:
      rows.append({"check": c.name, "status": c.status.upper(), "seen / fix": c.seen})
      if c.fix and c.status in ("fail", "warn"): rows.append({"check": "", "status": "", "seen / fix": f"fix: {c.fix}"})
    v = {"ready": "READY: this box can run tinygrad on AMD (DEV=AMD HCQ2=1)", "not-ready": "NOT READY: fix the failing checks above",
         "no-amd-gpu": "NO AMD GPU: no PCI device with vendor 0x1002 was found; nothing to bring up here"}[self.verdict]
    return Result("amd_doctor", "uopcheck amd doctor", {"root": self.root, "verdict": self.verdict, "gpus": self.gpus,
                                                         "checks": [asdict(c) for c in self.checks], "env": self.env},
                  tables=[Table([Column("check", width=22), Column("status", width=7), Column("seen / fix")], rows)],
                  preamble=[f"uopcheck amd doctor (root {self.root})"], summary=[v])

  def table(self) -> str: return TERM.render(self.result())
  def to_json(self) -> str: return JSON.render(self.result())

def _read(root:pathlib.Path, rel:str) -> str|None:
  try: return (root / rel.lstrip("/")).read_text().strip()
  except (OSError, UnicodeDecodeError): return None

def tinygrad_known_pci_ids() -> set[int]:
  """The device ids tinygrad's AMD PCIIface accepts, read from the installed tinygrad (runtime/ops_amd.py)."""
  import tinygrad
  src = (pathlib.Path(tinygrad.__file__).parent / "runtime" / "ops_amd.py").read_text()
  m = re.search(r"class PCIIface.*?devices=\(\(0xffff, \(([^)]*)\)", src, re.S)
  return {int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]+", m.group(1))} if m else set()

def find_gpus(root:pathlib.Path) -> list[dict]:
  out: list[dict] = []
  base = root / "sys/bus/pci/devices"
  if not base.is_dir(): return out
  for d in sorted(base.iterdir()):
    vendor, device = _read(root, f"sys/bus/pci/devices/{d.name}/vendor"), _read(root, f"sys/bus/pci/devices/{d.name}/device")
    cls = _read(root, f"sys/bus/pci/devices/{d.name}/class") or ""
    if vendor is None or device is None or int(vendor, 16) != AMD_VENDOR: continue
    if not (cls.startswith("0x03") or cls.startswith("0x12")): continue  # display controller or processing accelerator (not the audio fn)
    out.append({"bdf": d.name, "device": int(device, 16), "name": GPU_NAMES.get(int(device, 16), "unknown AMD GPU"), "path": str(d)})
  return out

def _rocm_root(root:pathlib.Path, env:dict) -> tuple[pathlib.Path|None, list[pathlib.Path]]:
  want = env.get("ROCM_PATH", "/opt/rocm")
  cand = root / want.lstrip("/")
  others = sorted((root / "opt").glob("rocm*")) if (root / "opt").is_dir() else []
  return (cand if cand.is_dir() else None), [o for o in others if o != cand]

def run(root:str|os.PathLike="/", env:dict|None=None) -> Report:
  root = pathlib.Path(root)
  env = dict(os.environ if env is None else env)
  rep = Report(str(root))
  rep.gpus = find_gpus(root)
  C = rep.checks.append
  if str(root) == "/": _emulator_checks(C)   # this machine's uopcheck, not a fixture tree: can it run the AMD path emulated?
  if not rep.gpus:
    C(Check("amd gpu", "fail", "no PCI device with vendor 0x1002 (display or accelerator class) under sys/bus/pci/devices",
            "this machine has no AMD GPU: run uopcheck's AMD checks on the MI350X box"))
    return rep
  C(Check("amd gpu", "pass", ", ".join(f"{g['bdf']} 0x{g['device']:04x} {g['name']}" for g in rep.gpus)))
  # PCI ids tinygrad knows (the PCI/AM path; the KFD path works through the amdgpu driver instead)
  known = tinygrad_known_pci_ids()
  unknown = [g for g in rep.gpus if g["device"] not in known]
  if unknown:
    ids = ", ".join(f"0x{g['device']:04x}" for g in unknown)
    C(Check("pci id known", "fail", f"{ids} not in tinygrad's PCIIface list ({', '.join(f'0x{k:04x}' for k in sorted(known))})",
            f"use the KFD path (amdgpu loaded, /dev/kfd) -- it doesn't match PCI ids -- or add {ids} to PCIIface(devices=...) in "
            "tinygrad/runtime/ops_amd.py (0x75b0 is MI350X/MI355X, gfx950 like 0x75a0)"))
  else: C(Check("pci id known", "pass", "every GPU's PCI id is in tinygrad's PCIIface list"))
  # ROCm
  rocm, others = _rocm_root(root, env)
  if rocm is None and others:
    C(Check("rocm root", "fail", f"{env.get('ROCM_PATH', '/opt/rocm')} missing; found {', '.join('/' + str(o.relative_to(root)) for o in others)}",
            f"export ROCM_PATH=/{others[-1].relative_to(root)}"))
    rocm = others[-1]
    rep.env["ROCM_PATH"] = "/" + str(rocm.relative_to(root))
  elif rocm is None:
    C(Check("rocm root", "fail", "no ROCm install (/opt/rocm or /opt/rocm-*)", "install ROCm 7 (amdgpu-install --usecase=rocm) or set ROCM_PATH"))
  else:
    ver = _read(root, str(rocm.relative_to(root) / ".info/version")) or "unknown version"
    C(Check("rocm root", "pass", f"/{rocm.relative_to(root)} ({ver})"))
    rep.env["ROCM_PATH"] = "/" + str(rocm.relative_to(root))
  # comgr: tinygrad loads $ROCM_PATH/lib/libamd_comgr.so, then 'amd_comgr' by name (runtime/autogen/comgr.py)
  if rocm is not None:
    libdir = rocm / "lib"
    plain = libdir / "libamd_comgr.so"
    versioned = sorted(libdir.glob("libamd_comgr.so.*")) if libdir.is_dir() else []
    if plain.exists() or versioned:
      lib = plain if plain.exists() else versioned[-1]
      m = re.search(r"\.so\.(\d+)(?:\.(\d+))?", (os.path.realpath(lib) if plain.is_symlink() else str(lib)))
      comver = f"{m.group(1)}.{m.group(2) or 0}" if m else "unknown"
      if not plain.exists():
        C(Check("comgr", "fail", f"only {lib.name} (comgr {comver}); tinygrad opens lib/libamd_comgr.so",
                f"ln -s {lib.name} /{plain.relative_to(root)}  (or point COMGR_PATH/COMGR_3_PATH at /{lib.relative_to(root)})"))
      else:
        C(Check("comgr", "pass",
                f"/{lib.relative_to(root)} (comgr {comver}{'; tinygrad uses its comgr_3 bindings' if comver.startswith('3') else ''})"))
      rep.env["COMGR_PATH"] = "/" + str(lib.relative_to(root))
      if comver.startswith("3"): rep.env["COMGR_3_PATH"] = rep.env["COMGR_PATH"]
    else: C(Check("comgr", "fail", f"no libamd_comgr.so under /{libdir.relative_to(root)}",
                  "install the comgr package (rocm-llvm / comgr) for this ROCm"))
    hip = rocm / "include/hip/hip_runtime_api.h"
    C(Check("hip headers", "pass" if hip.exists() else "fail", f"/{hip.relative_to(root)}" + ("" if hip.exists() else " missing"),
            "" if hip.exists() else "install hip-dev (tinygrad's AMD compiler includes /opt/rocm/include)"))
  # a clang that knows gfx950 (LLVM >= 19): ROCm's own, else the system's
  clangs = []
  if rocm is not None: clangs += [(p, int(p.name)) for p in sorted((rocm / "llvm/lib/clang").glob("*")) if p.name.isdigit()]
  clangs += [(p, int(m.group(1))) for p in sorted((root / "usr/lib").glob("llvm-*")) if (m := re.match(r"llvm-(\d+)", p.name))]
  good = [(p, v) for p, v in clangs if v >= 19]
  if good:
    C(Check("gfx950 clang", "pass", f"LLVM {good[-1][1]} at /{good[-1][0].relative_to(root)}"))
    rep.env["CC"] = f"clang-{good[-1][1]}"
  else:
    C(Check("gfx950 clang", "fail", f"newest clang is LLVM {max(v for _, v in clangs)}" if clangs else "no clang found",
            "gfx950 needs LLVM >= 19: use ROCm 7's llvm (/opt/rocm/llvm/bin/clang) or apt-get install clang-19"))
  # driver and /dev/kfd
  initstate = _read(root, "sys/module/amdgpu/initstate")
  C(Check("amdgpu module", "pass" if initstate == "live" else "fail", f"amdgpu initstate={initstate or 'not loaded'}",
          "" if initstate == "live" else "modprobe amdgpu (and check dmesg for firmware errors)"))
  kfd = root / "dev/kfd"
  if not kfd.exists():
    C(Check("/dev/kfd", "fail", "/dev/kfd does not exist",
            "load amdgpu with KFD (modprobe amdgpu); in a container pass --device=/dev/kfd --device=/dev/dri"))
  else:
    ok = str(root) != "/" or os.access(kfd, os.R_OK | os.W_OK)
    mode = oct(kfd.stat().st_mode & 0o777)
    C(Check("/dev/kfd", "pass" if ok else "fail", f"present, mode {mode}" + ("" if ok else ", not openable read/write by this user"),
            "" if ok else "add the user to the render and video groups (usermod -aG render,video $USER) and log in again"))
  nodes = root / "sys/devices/virtual/kfd/kfd/topology/nodes"
  gfx = sorted({int(m.group(1)) for n in (nodes.iterdir() if nodes.is_dir() else []) if (props := _read(root,
                                                                                                        str((n / "properties").relative_to(root))))
                for m in [re.search(r"gfx_target_version (\d+)", props)] if m and m.group(1) != "0"})
  if gfx: C(Check("kfd topology", "pass", f"gfx_target_version {', '.join(map(str, gfx))}" + (" (gfx950)" if GFX950 in gfx else "")))
  else: C(Check("kfd topology", "warn" if kfd.exists() else "n/a", "no GPU node in the KFD topology", "check dmesg for amdgpu/kfd init errors"))
  # VRAM BAR discovery signature: reads of all 0xFF mean the BAR isn't mapped/enabled
  for g in rep.gpus:
    res = pathlib.Path(g["path"]) / "resource0"
    try: head = res.read_bytes()[:4096] if str(root) != "/" else _read_bar(res)
    except OSError: head = None
    if head is None: C(Check(f"vram bar {g['bdf']}", "warn", f"cannot read {res.name}", "run as root to read the BAR"))
    elif head and all(b == 0xFF for b in head):
      C(Check(f"vram bar {g['bdf']}", "fail", f"{res.name} reads all 0xFF ({len(head)} bytes)",
              "VRAM BAR not decoded: enable Above-4G decoding and Resizable BAR in the BIOS, reset the GPU "
              f"(echo 1 > /sys/bus/pci/devices/{g['bdf']}/reset), and check that no other driver holds it"))
    else: C(Check(f"vram bar {g['bdf']}", "pass", f"{res.name} readable ({len(head)} bytes, not all 0xFF)"))
  # virtualization / IOMMU
  cpuinfo = _read(root, "proc/cpuinfo") or ""
  guest = " hypervisor" in cpuinfo or "hypervisor " in cpuinfo
  iommu = (root / "sys/class/iommu").is_dir() and any((root / "sys/class/iommu").iterdir())
  if guest and not iommu:
    C(Check("virtualization/iommu", "fail", "KVM guest (cpuinfo: hypervisor) with no IOMMU groups",
            "give the guest a vIOMMU (-device intel-iommu,intremap=on,caching-mode=on) and boot with iommu=pt, or use KFD on the host"))
  else: C(Check("virtualization/iommu", "pass", f"{'guest' if guest else 'bare metal'}, IOMMU {'present' if iommu else 'absent'}"))
  # tinygrad 0.14.0's runtime/ops_amd.py ends with `if getenv("HCQ2"): from extra.hcq2.ops_amd2 import *`; extra/ is a folder
  # of the tinygrad repository that the PyPI wheel does not ship, so HCQ2=1 on AMD needs a checkout on PYTHONPATH
  places = [p for p in env.get("PYTHONPATH", "").split(":") if p] + [p for p in (env.get("TINYGRAD_SRC"), "/opt/tinygrad") if p]
  found = next((p for p in places if (root / p.lstrip("/") / "extra/hcq2/ops_amd2.py").is_file()), None)
  if found is None and str(root) == "/":
    import importlib.util
    try: spec = importlib.util.find_spec("extra.hcq2.ops_amd2")
    except (ImportError, ValueError): spec = None
    if spec is not None and spec.origin: found = str(pathlib.Path(spec.origin).parents[2])
  if found is not None:
    C(Check("tinygrad extra/hcq2", "pass", f"{found}/extra/hcq2/ops_amd2.py (imported by ops_amd.py under HCQ2=1)"))
    rep.env["PYTHONPATH"] = found
  else:
    C(Check("tinygrad extra/hcq2", "fail", f"extra/hcq2/ops_amd2.py not under {', '.join(places)}: tinygrad's ops_amd.py imports it when HCQ2=1 "
            "and the PyPI wheel does not ship extra/",
            "git clone --depth 1 --branch v0.14.0 https://github.com/tinygrad/tinygrad /opt/tinygrad and export PYTHONPATH=/opt/tinygrad "
            "(training/mi350x.sh: TINYGRAD_SRC=/opt/tinygrad)"))
  rep.env.update({"DEV": "AMD", "HCQ2": "1"})
  return rep

def _emulator_checks(C) -> None:
  """tinygrad's mock GPU (the AMD backend on an ISA emulator, no hardware needed) and the targets it can compile for here;
  warn, never fail: the emulator is not what a hardware bring-up needs"""
  from uopcheck.fast.devices import mock_gpu_source, llvm22_library
  src = mock_gpu_source()
  C(Check("mock gpu (emulator)", "pass" if src else "warn", f"{src}/test/mockgpu: --device MOCK+AMD (gfx1100, RDNA3)" if src else
          "tinygrad's test/mockgpu not found (TINYGRAD_SRC, ../shared/tinygrad-src)", "export TINYGRAD_SRC=<a tinygrad checkout>"))
  llvm = os.environ.get("LLVM_PATH") or llvm22_library()
  C(Check("emulator gfx950", "pass" if src and llvm else "warn", f"LLVM {llvm}: --device MOCK+AMD::gfx950 (MI350X, MFMA)" if llvm else
          "no LLVM that knows gfx950 (libllvm22)", "apt-get install libllvm22 (make amdllvm), or export LLVM_PATH=<libLLVM-20+.so>"))

def _read_bar(res:pathlib.Path) -> bytes|None:
  import mmap
  try:
    with open(res, "rb") as f, mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ) as m: return bytes(m[:4096])
  except (OSError, ValueError): return None

def env_lines(rep:Report) -> list[str]:
  """Shell exports for a launch script, derived from what doctor found."""
  return [f"export {k}={v}" for k, v in sorted(rep.env.items())]
