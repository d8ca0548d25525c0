"""The book's run vocabulary: how much compute a chapter spends, and on which device.

Every notebook takes the parameters ``profile``, ``device`` and ``seed``:

* ``smoke``: seconds per chapter; only checks that the code runs (CI). Results are thrown away.
* ``cpu``: the book as published; minutes per chapter on a laptop CPU, or read from the
  committed result cache under ``results/cpu/``.
* ``paper``: the paper's own sizes; needs a GPU and hours.

What each profile sets, chapter by chapter (layers, steps, seeds, ...), is :func:`ssa_book.sizes.sizes`.
"""

from __future__ import annotations

PROFILES = ("smoke", "cpu", "paper")
DEVICES = ("auto", "cpu", "cuda", "mps")


def check_profile(profile: str) -> str:
    """Return ``profile`` unchanged, or raise ``ValueError`` naming the allowed profiles."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")
    return profile


def resolve_device(device: str = "auto") -> str:
    """Turn a ``device`` parameter into a torch device name.

    ``"auto"`` picks the fastest available device: cuda, then mps, then cpu. An explicit
    device is returned as given, after checking that torch can use it here.
    """
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {device!r}")
    import torch  # imported here so that checking a profile does not load torch

    cuda_available = torch.cuda.is_available()
    mps_available = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    if device == "auto":
        if cuda_available:
            return "cuda"
        return "mps" if mps_available else "cpu"
    if device == "cuda" and not cuda_available:
        raise ValueError("device='cuda' was requested but torch sees no CUDA device; use device='auto' or 'cpu'")
    if device == "mps" and not mps_available:
        raise ValueError("device='mps' was requested but torch sees no MPS device; use device='auto' or 'cpu'")
    return device
