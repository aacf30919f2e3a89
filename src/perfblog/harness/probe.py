"""Kernel side: what the snippet's kernel really ran on, sent back as one display output.

The runner executes ``emit(kind, used=..., accelerator=...)`` in the kernel after the last cell, so the
versions and devices are the ones the snippet saw, not the parent's. Each device kind's part (did the
snippet use the accelerator; its name, driver, capability) is named by its entry in the build side's
registry (``generator.device.KINDS``), which the kernel does not import; the functions here import torch
only when that kind needs it.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from typing import Any

MIME = "application/vnd.blog.provenance+json"
#: Set by the Ray executor's task on a cluster node: the node's name, which the kernel inherits.
NODE_ENV = "BLOG_NODE"


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it, else what ``platform`` knows."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def no_accelerator() -> None:
    """The probe of a kind that measures on the CPU: no accelerator to describe."""
    return None


def never_used() -> bool:
    """The CPU kind has no accelerator to use."""
    return False


def emit(kind: str, *, used: str = "", accelerator: str = "") -> None:
    """Display this kernel's provenance for a run on ``kind``: ``used`` and ``accelerator`` name the kind's
    functions (``module:function``; none for a kind without an accelerator), see ``describe``."""
    from IPython.display import display

    display({MIME: describe(kind, _function(used, never_used), _function(accelerator, no_accelerator))},
            raw=True)


def describe(kind: str, used: Callable[[], bool] = never_used,
             accelerator: Callable[[], dict[str, Any] | None] = no_accelerator) -> dict[str, Any]:
    """The kernel's part of a result's provenance: CPU, accelerator (or None), versions, and the cluster
    node it ran on (None when `blog run` ran it on its own machine).

    The accelerator is described only when the snippet used it: asking torch about a GPU would start
    CUDA, and a snippet whose tensors never left the CPU measured the CPU.
    """
    seen = used()
    gpu = accelerator() if seen else None
    cpu = cpu_model()
    return {"device": gpu["name"] if gpu else cpu, "cpu": cpu, "cores": os.cpu_count(), "gpu": gpu,
            "python": platform.python_version(), "torch": _version("torch"), "triton": _version("triton"),
            "requested": kind, "accelerator_used": seen, "node": os.environ.get(NODE_ENV) or None}


def _function(name: str, default: Callable[..., Any]) -> Callable[..., Any]:
    """The function ``module:function`` names, or ``default`` for none."""
    if not name:
        return default
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def cuda_used() -> bool:
    """Whether the snippet's torch started CUDA (any CUDA tensor or kernel does); without importing torch."""
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def cuda_gpu() -> dict[str, Any] | None:
    """The CUDA device torch uses: name, compute capability, CUDA version, driver; None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    index = torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(index)
    driver = None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.split()
        driver = out[0] if out else None
    except (OSError, subprocess.SubprocessError):
        pass
    return {"name": torch.cuda.get_device_name(index), "capability": f"{major}.{minor}",
            "cuda": torch.version.cuda, "driver": driver}


def _version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None
