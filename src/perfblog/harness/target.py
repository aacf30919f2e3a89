"""Which device a snippet should measure on, as chosen by the runner."""

from __future__ import annotations

import os

#: Set by the runner in the kernel's environment: "cpu" or "cuda".
DEVICE_ENV = "BLOG_DEVICE"


def target_device() -> str:
    """Return "cuda" or "cpu": the runner's choice, else CUDA when torch sees one."""
    chosen = os.environ.get(DEVICE_ENV)
    if chosen:
        return chosen
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
