"""The kinds of device results are filed under, in one table, and the device class of this machine.

A device class is ``<kind>-<model slug>``: ``cuda-nvidia-h200``, ``cpu-x86_64``. Results of different
classes are never compared, and a post shows the most preferred kind that has a fresh result (GPU
before CPU). Each kind says how to detect it here without importing torch (which takes seconds), what
the snippet's kernel needs in its environment, how the kernel describes it in the provenance (its
probe, in ``perfblog.harness.probe``), and its rank. A new kind (ROCm, MPS) is one entry in ``KINDS``
plus its probe.
"""

from __future__ import annotations

import fnmatch
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from perfblog.generator.errors import GeneratorError
from perfblog.harness import probe


@dataclass(frozen=True)
class DeviceKind:
    """One kind of device a snippet can measure on."""

    name: str  # the class prefix and the `--device` choice
    rank: int  # smaller is preferred when several kinds have fresh results
    detect: Callable[[], str | None]  # this machine's model of the kind (class suffix), None when absent
    torch_device: str  # what ``target_device()`` returns in the kernel (``BLOG_DEVICE``)
    probe: Callable[[], dict[str, Any] | None]  # in the kernel: the accelerator's provenance, None if unseen
    used: Callable[[], bool] = probe.never_used  # in the kernel, after the cells: did the snippet use it?
    kernel_env: Mapping[str, str] = field(default_factory=dict)  # more variables for the kernel
    label: str = ""  # how messages name the accelerator ("CUDA"); empty for the CPU
    absent: str = ""  # why `--device <name>` cannot run on a machine without it

    @property
    def accelerator(self) -> bool:
        """Whether a run must see the accelerator (else it measured the CPU and is not filed here)."""
        return bool(self.label)

    def device_class(self, model: str) -> str:
        return f"{self.name}-{model}"


def slug(text: str) -> str:
    """Lower-case ASCII words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@lru_cache(maxsize=1)
def gpu_names() -> tuple[str, ...]:
    """Every GPU's name as nvidia-smi reports it; none without a usable NVIDIA GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    try:
        out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(line.strip() for line in out.splitlines() if line.strip())


def gpu_name() -> str | None:
    """The first GPU's name, or None without a usable NVIDIA GPU."""
    names = gpu_names()
    return names[0] if names else None


def _nvidia_model() -> str | None:
    name = gpu_name()
    return slug(name) if name else None


def _cpu_model() -> str:
    """CPU results are comparable only within one architecture: the machine is the model."""
    return re.sub(r"[^a-z0-9_]+", "-", platform.machine().lower()).strip("-") or "unknown"


CUDA = DeviceKind(name="cuda", rank=0, detect=_nvidia_model, torch_device="cuda", probe=probe.cuda_gpu,
                  used=probe.cuda_used, label="CUDA", absent="no NVIDIA GPU found (nvidia-smi lists none)")
CPU = DeviceKind(name="cpu", rank=1, detect=_cpu_model, torch_device="cpu", probe=probe.no_accelerator,
                 kernel_env={"CUDA_VISIBLE_DEVICES": ""})  # torch in the kernel must not use a GPU

#: Every kind, by name. The CPU is always present.
KINDS: dict[str, DeviceKind] = {k.name: k for k in (CUDA, CPU)}
#: What `--device` and ``exec_device`` accept.
DEVICES = ("auto", *sorted(KINDS))


#: Environment variables a snippet's kernel never gets: the build's credentials (CI tokens, the Baidu
#: push token, IndexNow and API keys, cloud and Google credentials). Shell patterns, case-insensitive.
SECRET_VARIABLES = (
    "*_TOKEN", "*_TOKENS", "TOKEN", "*_TOKEN_*", "*_KEY", "*_KEYS", "*_KEY_ID", "*_APIKEY", "*_SECRET",
    "*_SECRETS", "*_SECRET_*", "SECRET_*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*_PAT", "*_AUTH",
    "AWS_*", "AZURE_*", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK", "NETRC", "ACTIONS_*",
)  # fmt: skip


@dataclass(frozen=True)
class EnvPolicy:
    """Which variables of the environment a kernel does not inherit: ``SECRET_VARIABLES`` plus ``deny``,
    except the names in ``allow`` (a site's `exec_env_deny` and `exec_env_allow`)."""

    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()

    def withheld(self, name: str) -> bool:
        upper = name.upper()
        if any(fnmatch.fnmatchcase(upper, p.upper()) for p in self.allow):
            return False
        return any(fnmatch.fnmatchcase(upper, p.upper()) for p in (*SECRET_VARIABLES, *self.deny))


def kernel_environ(environ: Mapping[str, str], kind: DeviceKind, policy: EnvPolicy) -> dict[str, str]:
    """The environment a snippet's kernel starts with: this one without its secrets, plus the kind's own."""
    env = {name: value for name, value in environ.items() if not policy.withheld(name)}
    env.update(kind.kernel_env)
    return env


def cpu_class() -> str:
    """``cpu-<machine>``: this machine's CPU class."""
    return CPU.device_class(_cpu_model())


def resolve(device: str = "auto") -> tuple[DeviceKind, str]:
    """Map ``auto`` or a kind's name to the kind and device class a run uses here.

    ``auto`` is the most preferred kind this machine has (the CPU at least).
    """
    if device != "auto" and device not in KINDS:
        raise GeneratorError(f"unknown device {device!r} (choose from {', '.join(['auto', *sorted(KINDS)])})")
    candidates = sorted(KINDS.values(), key=lambda k: k.rank) if device == "auto" else [KINDS[device]]
    for kind in candidates:
        model = kind.detect()
        if model is not None:
            return kind, kind.device_class(model)
    raise GeneratorError(f"--device {device}: {KINDS[device].absent}")


def kind(device_class: str) -> DeviceKind | None:
    """The kind of a device class; None for a class of a kind this version does not know."""
    return next((k for k in KINDS.values() if device_class.startswith(f"{k.name}-")), None)


def rank(device_class: str) -> int:
    """Smaller is preferred: the kind's rank; classes of unknown kinds come last."""
    found = kind(device_class)
    return found.rank if found else len(KINDS)


def preferred_order(classes: Iterable[str], current: str | None = None) -> list[str]:
    """Classes in display preference: by kind, the current machine's class first within a kind."""
    return sorted(classes, key=lambda c: (rank(c), c != current, c))


#: What a snippet's header may declare as ``blog: {device: ...}``: any device, or one kind's name.
DECLARATIONS = ("any", *sorted(KINDS))


def run_kind(requested: DeviceKind, declared: str) -> DeviceKind:
    """The kind a snippet runs as: a snippet declared ``cpu`` runs on the CPU even on a GPU machine."""
    return KINDS[declared] if declared in KINDS and not KINDS[declared].accelerator else requested


def file_under(kind: DeviceKind, device_class: str, declared: str, used: bool, described: bool) -> str:
    """The device class a run is filed under: what the snippet really used, checked against its header.

    ``used``: the kernel's torch started the accelerator; ``described``: the probe could describe it. A
    run on an accelerator that never touched it measured the CPU: it is a CPU result of this machine,
    unless the snippet declared that it measures the accelerator, which is then an error.
    """
    if not kind.accelerator:
        return device_class
    if used and described:
        return device_class
    if declared == kind.name:
        why = "never used it" if not used else f"its torch sees no {kind.label} device"
        raise GeneratorError(f"declares device: {kind.name} in its header, but the run on {device_class} "
                             f"{why}; it is not stored")
    return cpu_class()
