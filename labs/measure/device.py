"""Which device JAX runs on, which catalogue chip that is, and its memory and cache sizes.

Sizes in bytes. The cache size that rotation must defeat comes from data with a
source: the catalogue (GPU ``l2_bytes``, TPU ``vmem_bytes``) or, on a CPU, the
kernel's sysfs description of the CPU's caches. When neither is known, the
largest on-chip memory in the catalogue stands in (so rotation errs large).
"""

from __future__ import annotations

import os
import platform as _platform
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.model import catalogue

# Memory is shared with the runtime, other buffers and fragmentation: plan to use at most this share.
MEMORY_BUDGET_SHARE = 0.6

_SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True)
class DeviceInfo:
    platform: str  # "cpu", "gpu", "tpu"
    device_kind: str
    chip: catalogue.Chip | None  # the catalogue entry for device_kind, None for CPUs and unknowns
    memory_bytes: float | None
    memory_source: str
    cache_bytes: int | None
    cache_source: str
    host: str
    jax_version: str
    jaxlib_version: str
    python_version: str
    device_count: int

    @property
    def budget_bytes(self) -> float | None:
        return None if self.memory_bytes is None else self.memory_bytes * MEMORY_BUDGET_SHARE

    def to_dict(self) -> dict[str, str | int | float | None]:
        return {"platform": self.platform, "device_kind": self.device_kind,
                "chip": self.chip.name if self.chip else None,
                "memory_bytes": self.memory_bytes, "memory_source": self.memory_source,
                "cache_bytes": self.cache_bytes, "cache_source": self.cache_source,
                "host": self.host, "jax_version": self.jax_version,
                "jaxlib_version": self.jaxlib_version, "python_version": self.python_version,
                "device_count": self.device_count}


def normalize_platform(name: str) -> str:
    name = name.lower()
    return "gpu" if name in ("cuda", "rocm", "gpu") else name


def detect() -> DeviceInfo:
    """The first JAX device, its catalogue chip (or None) and its sizes."""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jaxlib  # optional dependency: jax loads only when a lab runs on a device

    devices = jax.devices()
    dev = devices[0]
    plat = normalize_platform(dev.platform)
    kind = str(dev.device_kind)
    chip = catalogue.load().for_device_kind(kind) if plat != "cpu" else None
    memory, memory_source = _memory(dev, plat, chip)
    cache, cache_source = _cache(plat, chip)
    return DeviceInfo(plat, kind, chip, memory, memory_source, cache, cache_source,
                      socket.gethostname(), jax.__version__,
                      jaxlib.__version__,  # type: ignore[attr-defined]  # jaxlib's __init__ imports it, exporting nothing

                      _platform.python_version(), len(devices))


def _memory(dev: Any, plat: str, chip: catalogue.Chip | None) -> tuple[float | None, str]:
    try:
        stats = dev.memory_stats() or {}
    except Exception:  # some backends raise instead of returning None
        stats = {}
    if stats.get("bytes_limit"):
        in_use = stats.get("bytes_in_use", 0)
        return float(stats["bytes_limit"] - in_use), "jax Device.memory_stats(): bytes_limit - bytes_in_use"
    if plat == "cpu":
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            return float(avail), "os.sysconf: available physical pages"
        except (ValueError, OSError, AttributeError):
            return None, "unknown"
    if chip is not None:
        return chip.hbm_bytes, f"catalogue {chip.name} hbm_bytes"
    return None, "unknown"


def cpu_cache_levels(base: Path = _SYSFS_CACHES) -> list[tuple[str, int]]:
    """(name, bytes) of each data or unified cache level sysfs lists for cpu0, smallest first
    ("L1d", "L2", "L3"); empty when sysfs lists none."""
    found: dict[str, int] = {}
    for index in sorted(base.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        try:
            level = (index / "level").read_text().strip()
        except OSError:
            level = ""
        size = parse_cache_size(text)
        if kind == "Instruction" or size is None:
            continue
        found[f"L{level}{'d' if kind == 'Data' else ''}" if level.isdigit() else index.name] = size
    return sorted(found.items(), key=lambda item: item[1])


def cpu_cache_bytes(base: Path = _SYSFS_CACHES) -> int | None:
    """The largest data or unified cache sysfs lists for cpu0 (bytes), or None."""
    levels = cpu_cache_levels(base)
    return levels[-1][1] if levels else None


def parse_cache_size(text: str) -> int | None:
    """"32768K" -> 33554432; "1M" -> 1048576; "512" -> 512; junk -> None."""
    text = text.strip().upper()
    if not text:
        return None
    scales = {"K": 1024, "M": 1024**2, "G": 1024**3}
    unit = text[-1] if text[-1] in scales else ""
    digits = text[:-1] if unit else text
    return int(digits) * scales.get(unit, 1) if digits.isdigit() else None


def largest_catalogue_cache() -> tuple[int | None, str]:
    best, where = None, ""
    for chip in catalogue.load().chips:
        for key in ("l2_bytes", "vmem_bytes"):
            value = chip.value(key)
            if value and (best is None or value > best):
                best, where = int(value), f"catalogue {chip.name} {key}"
    return best, where


def _cache(plat: str, chip: catalogue.Chip | None) -> tuple[int | None, str]:
    if plat == "cpu":
        size = cpu_cache_bytes()
        if size:
            return size, "sysfs /sys/devices/system/cpu/cpu0/cache (largest level)"
    elif chip is not None:
        for key in ("l2_bytes", "vmem_bytes"):
            value = chip.value(key)
            if value:
                return int(value), f"catalogue {chip.name} {key}"
    size, where = largest_catalogue_cache()
    return size, f"unknown here; assumed the largest on-chip memory in the catalogue ({where})"
