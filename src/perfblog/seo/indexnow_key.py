"""The IndexNow key: kept in a committed file, published by the build as ``<key>.txt`` at the site root.

The build (the seo plugin) and `blog submit indexnow` both need it; the submitter's HTTP code does not
belong in a build, so the key lives here on its own.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from perfblog.core.fsio import atomic_write
from perfblog.core.init import NewSite
from perfblog.core.project import Layout
from perfblog.seo.errors import SubmitError

KEY_FILE = "indexnow.key"  # where the key is kept by default, beside mkdocs.yml
KEY_PATTERN = re.compile(r"[A-Za-z0-9-]{8,128}")


def read_key(key_path: Path) -> str:
    """The key kept in `key_path`, checked against the protocol's format."""
    try:
        key = key_path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise SubmitError(f"{key_path}: no IndexNow key; `blog submit indexnow` makes one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmitError(f"{key_path}: cannot read the IndexNow key: {exc}") from exc
    if not KEY_PATTERN.fullmatch(key):
        raise SubmitError(f"{key_path}:1: an IndexNow key is 8-128 characters of a-z, A-Z, 0-9 and '-'")
    return key


def ensure_key(key_path: Path) -> str:
    """The key in `key_path`, made (32 hex characters) and written atomically if the file is missing."""
    if key_path.exists():
        return read_key(key_path)
    key = secrets.token_hex(16)
    try:
        atomic_write(key_path, f"{key}\n".encode())
    except OSError as exc:
        raise SubmitError(f"{key_path}: cannot write the new IndexNow key: {exc}") from exc
    return key


def write_key_file(site_dir: Path, key_path: Path) -> Path | None:
    """Publish the key as `<site_dir>/<key>.txt`; None when there is no key yet.

    A build never makes the key (it would drop files into whatever folder holds a test site's
    mkdocs.yml); `blog submit indexnow` makes it once, and the repository commits it.
    """
    if not key_path.exists():
        return None
    key = read_key(key_path)
    target = site_dir / f"{key}.txt"
    atomic_write(target, key.encode())
    return target


def init_site(layout: Layout, site: NewSite) -> list[Path]:
    """The seo plugin's part of `blog init`: a fresh key of the new blog's own."""
    path = layout.root / KEY_FILE
    ensure_key(path)
    return [path]
