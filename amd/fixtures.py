"""Fixture trees for ``amd doctor``: a healthy MI350X box, and one tree per failure mode of the bring-up runbook.

``build(name, dest)`` writes the tree under ``dest`` (a fake /sys, /dev, /opt/rocm, /proc) and returns it."""
from __future__ import annotations
import os, pathlib
from typing import Callable

def _w(p:pathlib.Path, text:str|bytes) -> None:
  p.parent.mkdir(parents=True, exist_ok=True)
  p.write_bytes(text) if isinstance(text, bytes) else p.write_text(text)

def _healthy(d:pathlib.Path, device:int=0x75a0) -> None:
  gpu = d / "sys/bus/pci/devices/0000:05:00.0"
  _w(gpu / "vendor", "0x1002\n")
  _w(gpu / "device", f"0x{device:04x}\n")
  _w(gpu / "class", "0x120000\n")
  _w(gpu / "resource0", bytes(range(256)) * 16)
  audio = d / "sys/bus/pci/devices/0000:05:00.1"
  _w(audio / "vendor", "0x1002\n")
  _w(audio / "device", "0xab30\n")
  _w(audio / "class", "0x040300\n")
  rocm = d / "opt/rocm-7.0.2"
  _w(rocm / ".info/version", "7.0.2-56\n")
  _w(rocm / "lib/libamd_comgr.so.3.0.0", b"\x7fELF")
  (rocm / "lib/libamd_comgr.so").symlink_to("libamd_comgr.so.3.0.0")
  _w(rocm / "include/hip/hip_runtime_api.h", "// hip\n")
  (rocm / "llvm/lib/clang/20").mkdir(parents=True)
  (d / "opt/rocm").symlink_to("rocm-7.0.2")
  _w(d / "sys/module/amdgpu/initstate", "live\n")
  _w(d / "dev/kfd", "")
  os.chmod(d / "dev/kfd", 0o666)
  _w(d / "sys/devices/virtual/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 64\ngfx_target_version 0\n")
  _w(d / "sys/devices/virtual/kfd/kfd/topology/nodes/1/properties", "cpu_cores_count 0\ngfx_target_version 90500\ndrm_render_minor 128\n")
  _w(d / "sys/devices/virtual/kfd/kfd/topology/nodes/1/gpu_id", "12345\n")
  _w(d / "proc/cpuinfo", "processor : 0\nflags : fpu sse2 avx2\n")
  (d / "sys/class/iommu/ivhd0").mkdir(parents=True)
  _w(d / "opt/tinygrad/extra/hcq2/ops_amd2.py", "# tinygrad v0.14.0 checkout: extra/ (not in the PyPI wheel)\n")

def _rm(p:pathlib.Path) -> None:
  if p.is_symlink() or p.is_file(): p.unlink()

FAILURE_MODES: dict[str, Callable[[pathlib.Path], object]] = {
  "healthy": lambda d: None,
  "no_gpu": lambda d: [_rm(d / "sys/bus/pci/devices/0000:05:00.0" / f) for f in ("vendor", "device", "class", "resource0")],
  "pci_0x75b0": lambda d: _w(d / "sys/bus/pci/devices/0000:05:00.0/device", "0x75b0\n"),
  "rocm_nondefault_comgr33": lambda d: (_rm(d / "opt/rocm"), _rm(d / "opt/rocm-7.0.2/lib/libamd_comgr.so"),
                                        (d / "opt/rocm-7.0.2/lib/libamd_comgr.so.3.0.0")
                                        .rename(d / "opt/rocm-7.0.2/lib/libamd_comgr.so.3.3.0")),
  "no_hip_headers": lambda d: _rm(d / "opt/rocm-7.0.2/include/hip/hip_runtime_api.h"),
  "old_clang": lambda d: ((d / "opt/rocm-7.0.2/llvm/lib/clang/20").rename(d / "opt/rocm-7.0.2/llvm/lib/clang/17"),
                          (d / "usr/lib/llvm-14").mkdir(parents=True)),
  "amdgpu_not_loaded": lambda d: _rm(d / "sys/module/amdgpu/initstate"),
  "no_kfd": lambda d: _rm(d / "dev/kfd"),
  "bar_all_ff": lambda d: _w(d / "sys/bus/pci/devices/0000:05:00.0/resource0", b"\xff" * 4096),
  "kvm_no_iommu": lambda d: (_w(d / "proc/cpuinfo", "processor : 0\nflags : fpu sse2 hypervisor\n"), (d / "sys/class/iommu/ivhd0").rmdir()),
  "no_tinygrad_extra": lambda d: _rm(d / "opt/tinygrad/extra/hcq2/ops_amd2.py"),
}

# the check each failure mode must fail, and a phrase its fix must contain
EXPECTED = {
  "no_gpu": ("amd gpu", "no AMD GPU"), "pci_0x75b0": ("pci id known", "0x75b0"), "rocm_nondefault_comgr33": ("rocm root",
                                                                                                             "ROCM_PATH=/opt/rocm-7.0.2"),
  "no_hip_headers": ("hip headers", "hip-dev"), "old_clang": ("gfx950 clang", "LLVM >= 19"), "amdgpu_not_loaded": ("amdgpu module",
                                                                                                                   "modprobe amdgpu"),
  "no_kfd": ("/dev/kfd", "--device=/dev/kfd"), "bar_all_ff": ("vram bar 0000:05:00.0", "Resizable BAR"), "kvm_no_iommu": ("virtualization/iommu",
                                                                                                                          "vIOMMU"),
  "no_tinygrad_extra": ("tinygrad extra/hcq2", "PYTHONPATH=/opt/tinygrad"),
}

def build(name:str, dest:str|os.PathLike) -> pathlib.Path:
  if name not in FAILURE_MODES: raise KeyError(f"no fixture {name!r}; known: {', '.join(FAILURE_MODES)}")
  d = pathlib.Path(dest) / name
  _healthy(d)
  FAILURE_MODES[name](d)
  return d
