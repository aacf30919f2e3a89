"""The device class results are filed under, found without importing torch (which takes seconds).

A class is ``cuda-<gpu name slug>`` (``cuda-nvidia-h200``) or ``cpu-<machine>`` (``cpu-x86_64``).
GPU classes are preferred to CPU classes: a post shows GPU numbers whenever fresh ones exist.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections.abc import Iterable
from functools import lru_cache

from perfblog.generator.errors import GeneratorError

DEVICES = ("auto", "cpu", "cuda")


def slug(text: str) -> str:
    """Lower-case ASCII words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@lru_cache(maxsize=1)
def gpu_name() -> str | None:
    """The first GPU's name as nvidia-smi reports it, or None without a usable NVIDIA GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.splitlines() if line.strip()]
    return names[0] if names else None


def cpu_class() -> str:
    """``cpu-<machine>``: CPU results are comparable only within one architecture."""
    machine = re.sub(r"[^a-z0-9_]+", "-", platform.machine().lower()).strip("-")
    return f"cpu-{machine or 'unknown'}"


def resolve(device: str = "auto") -> tuple[str, str]:
    """Map ``auto``/``cpu``/``cuda`` to the concrete (device, device class) a run uses here."""
    if device not in DEVICES:
        raise GeneratorError(f"unknown device {device!r} (choose from {', '.join(DEVICES)})")
    name = gpu_name()
    if device == "cuda" and name is None:
        raise GeneratorError("--device cuda: no NVIDIA GPU found (nvidia-smi lists none)")
    if device == "cpu" or name is None:
        return "cpu", cpu_class()
    return "cuda", f"cuda-{slug(name)}"


def kind(device_class: str) -> str:
    """"cuda" or "cpu" for a device class."""
    return "cuda" if device_class.startswith("cuda-") else "cpu"


def rank(device_class: str) -> int:
    """Smaller is preferred: GPU classes before CPU classes."""
    return 0 if kind(device_class) == "cuda" else 1


def preferred_order(classes: Iterable[str], current: str | None = None) -> list[str]:
    """Classes in display preference: GPU first, the current machine's class first within a kind."""
    return sorted(classes, key=lambda c: (rank(c), c != current, c))
