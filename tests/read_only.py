"""A folder made read-only for a test, also when the tests run as root (whom file modes do not stop)."""

import os
from pathlib import Path


def make_read_only(folder: Path, monkeypatch) -> Path:
    """``folder`` (created) without write permission. As root, where the kernel ignores the mode,
    ``os.access`` is made to honour it, so that what a check asks is what a user would be told."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o555)
    monkeypatch.setattr(os, "access", _honouring_modes(os.access))
    return folder


def _honouring_modes(access):
    def checked(path, mode, *args, **kwargs):
        if os.geteuid() == 0 and mode & os.W_OK and Path(path).exists() and not Path(path).stat().st_mode & 0o222:
            return False
        return access(path, mode, *args, **kwargs)

    return checked
