"""What a build learnt of its pages, kept for the next build in `.cache/perfblog/memo.json`.

A page whose HTML and path are byte for byte those of a page the last build audited, with the same
auditing code, is not parsed, segmented or checked again: its findings and what the site-wide rules
compare of it are read back (`audit.Auditor`'s memo). A post whose text did not change keeps its words
for related posts (`related.rank`'s memo). A build whose pages are all known never loads the
segmenter (rjieba's dictionary, 33 MiB), which is most of what the product adds to a build's memory.

The file is a cache, like Material's social cards: made by the build, git-ignored, never markup on a
page, read through `core.cache` (never committed, never through a link, bounded in size). Written by
other code (`version`), damaged, unreadable or larger than `LIMIT`, it is ignored and written again;
one that names a rule or severity this code does not know is ignored with a warning, since only a hand
could have written it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from perfblog.core.cache import CACHE_DIR, Cache, code_digest
from perfblog.core.fsio import load_json
from perfblog.core.gcpause import collector_paused
from perfblog.seo import audit, links, rules
from perfblog.seo.registry import Finding, Severity
from perfblog.seo.sitewide import IndexedPage

#: The memo's name in the cache folder.
MEMO_NAME = "memo.json"
#: Where the memo is kept, relative to the folder of mkdocs.yml (git-ignored, as the cards are).
MEMO_FILE = f"{CACHE_DIR}/{MEMO_NAME}"
#: The largest memo read (2,000 posts write about 10 MiB): a larger one is not this code's, and reading
#: it would cost the build memory, not save it time.
LIMIT = 64 << 20
_FORMAT = 1

log = logging.getLogger("mkdocs.plugins.seo")


def name_for(config_file: str | None) -> str:
    """The memo of one config file: `memo.json` for mkdocs.yml, `memo.<stem>.json` for another config
    of the same folder (`mkdocs.en.yml`: `memo.mkdocs.en.json`), so two configs never overwrite each
    other's pages."""
    stem = Path(config_file).stem if config_file else "mkdocs"
    return MEMO_NAME if stem == "mkdocs" else f"memo.{stem}.json"


class ForgedEntry(ValueError):
    """A memo entry that this code could not have written: a rule or severity it does not know."""


@lru_cache(maxsize=1)
def version() -> str:
    """What an entry depends on besides its page: this package's code and data (every rule, the
    dictionary of terms), and the versions of the parser and the segmenter."""
    digest = hashlib.blake2b(code_digest().encode(), digest_size=16)
    for library in ("lxml", "rjieba", "numpy"):
        try:
            digest.update(f"{library}={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(library.encode())
    return f"{_FORMAT}:{digest.hexdigest()}"


class BuildMemo:
    """The pages audited and the posts' words of the last build, read from `name` in `cache`; `save`
    keeps the ones this build used (so the file never holds more than one build's pages)."""

    def __init__(self, cache: Cache, name: str = MEMO_NAME) -> None:
        self.cache = cache
        self.name = name
        self.path = cache.path(name)
        self.pages: dict[bytes, audit.Audited] = {}
        self.words: dict[str, str] = {}  # related.text_key -> the post's words (related.WORDS joins them)
        self._loaded: tuple[frozenset[bytes], dict[str, str]] = (frozenset(), {})

    @classmethod
    @collector_paused()
    def load(cls, cache: Cache, name: str = MEMO_NAME) -> BuildMemo:
        memo = cls(cache, name)
        raw = cache.read(name, limit=LIMIT)
        if raw is None:
            return memo
        try:
            data = load_json(raw)
            if not isinstance(data, dict) or data.get("version") != version():
                return memo
            pages = {bytes.fromhex(_text(key)): _audited(entry) for key, entry in _mapping(data["pages"])}
            words = {_text(key): _text(joined) for key, joined in _mapping(data["words"])}
        except ForgedEntry as exc:
            log.warning("seo: %s %s, which this code never writes; the memo is ignored and every page "
                        "audited again", memo.path, exc)
            return memo
        except (ValueError, TypeError, KeyError):
            return memo  # a cache: what cannot be read is made again
        memo.pages, memo.words = pages, words
        memo._loaded = (frozenset(pages), dict(words))
        return memo

    def save(self, keys: Iterable[bytes] | None) -> None:
        """Keep the pages named by `keys` (those this build audited; None: those read, for a build
        that audited nothing) and the words `related.rank` kept; nothing is written when they are
        what was read."""
        used = dict.fromkeys(self._loaded[0] if keys is None else (key for key in keys if key in self.pages))
        if frozenset(used) == self._loaded[0] and self.words == self._loaded[1]:
            return
        self.cache.write(self.name, self._json(used), durable=False)  # a cache: lost, it is made again
        self._loaded = (frozenset(used), dict(self.words))

    def _json(self, keys: Iterable[bytes]) -> Iterator[bytes]:
        """The file, a page at a time (the whole of it, a few MiB, is never in memory at once)."""
        head = {"version": version(), "words": self.words}
        yield _dumps(head)[:-1] + b',"pages":{'
        for number, key in enumerate(keys):
            yield b"," * (number > 0) + _dumps(key.hex()) + b":" + _dumps(_entry(self.pages[key]))
        yield b"}}"


def _entry(audited: audit.Audited) -> dict[str, Any]:
    result, (page, ids), linked = audited.result, audited.entry, audited.linked
    return {
        "result": {
            "page": result.page, "title": result.title, "description": result.description,
            "canonical": result.canonical, "noindex": result.noindex, "is_post": result.is_post,
            "words": result.words, "hreflang": result.hreflang, "lang": result.lang,
            "findings": [[f.page, f.rule, f.severity.value, f.message, f.zh] for f in result.findings],
        },
        "index": {
            "rel": page.rel, "canonical": page.canonical, "noindex": page.noindex, "links": page.links,
            "resources": page.resources, "size": page.size, "ids": sorted(ids),
            "sketch": None if page.sketch is None else _encoded(page.sketch),
        },
        "linked": {"authored": linked.authored, "hrefs": linked.hrefs},
    }  # fmt: skip


def _audited(data: object) -> audit.Audited:
    """The page `_entry` wrote; TypeError, ValueError or KeyError when `data` is not one."""
    entry = dict(_mapping(data))
    result, index, linked = (dict(_mapping(entry[part])) for part in ("result", "index", "linked"))
    page, canonical, noindex = _text(result["page"]), _optional(result["canonical"]), _flag(result["noindex"])
    findings = [_finding(*finding) for finding in _list(result["findings"])]
    pairs = [(_text(tag), _text(href)) for tag, href in _list(result["hreflang"])]
    kept = audit.PageResult(
        page, _optional(result["title"]), _optional(result["description"]), canonical, noindex,
        _flag(result["is_post"]), _count(result["words"]), findings, pairs, _optional(result["lang"]),
    )  # fmt: skip
    sketch = None if index["sketch"] is None else _sketch(_text(index["sketch"]))
    indexed = IndexedPage(
        _text(index["rel"]), _optional(index["canonical"]), _flag(index["noindex"]), _texts(index["links"]),
        _texts(index["resources"]), _count(index["size"]), sketch,
    )  # fmt: skip
    hrefs = tuple(None if h is None else sys.intern(_text(h)) for h in _list(linked["hrefs"]))
    graph = links.Linked(page, canonical, noindex, kept.is_post, _texts(linked["authored"]), hrefs)
    return audit.Audited(kept, (indexed, frozenset(_texts(index["ids"]))), graph)


def _finding(page: object, rule: object, severity: object, en: object, zh: object) -> Finding:
    """A finding `_entry` wrote: of a declared rule, at a severity that rule reports."""
    rule_id = _text(rule)
    try:
        declared = rules.RULES[rule_id]
    except KeyError:
        raise ForgedEntry(f"names the rule {rule_id!r}") from None
    if severity not in {declared.severity, declared.worst}:
        raise ForgedEntry(f"gives the rule {rule_id} the severity {severity!r}")
    return Finding(_text(page), rule_id, Severity(severity), _text(en), _text(zh))


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _mapping(value: object) -> Iterable[tuple[str, Any]]:
    if not isinstance(value, dict):
        raise TypeError("not a mapping")
    return value.items()


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _optional(value: object) -> str | None:
    return None if value is None else _text(value)


def _texts(values: object) -> tuple[str, ...]:
    """Strings, each held once in memory: every page repeats its navigation's links."""
    return tuple(sys.intern(_text(v)) for v in _list(values))


def _encoded(sketch: np.ndarray) -> str:
    return base64.b64encode(sketch.astype("<u8").tobytes()).decode("ascii")


def _sketch(encoded: str) -> np.ndarray:
    raw = base64.b64decode(encoded, validate=True)
    if len(raw) % 8:
        raise ValueError("not a sketch")
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64)


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError("not true or false")
    return value


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise ValueError("not a count")
    return value


class ServeMemo:
    """What `mkdocs serve` keeps between its rebuilds, in memory: each edit rebuilds the whole site with
    new plugin objects, and a page, a post's words or a decorated page that did not change is not worked
    out again. A build (`mkdocs build`) keeps the same facts in its `BuildMemo` instead."""

    def __init__(self) -> None:
        self.pages: dict[bytes, Any] = {}  # each page audited in this process, by its HTML
        self.words: dict[str, str] = {}  # each post's words for related posts (related.text_key)
        self._panels: dict[bytes, bytes] = {}  # each page with its draft banner and SEO panel

    def panel(self, key: bytes, decorate: Callable[[], bytes]) -> bytes:
        """The page decorated before under `key` (its HTML, findings and addresses), else `decorate()`."""
        html = self._panels.get(key)
        if html is None:
            if len(self._panels) > audit.MEMO_PAGES:
                self._panels.clear()
            html = self._panels[key] = decorate()
        return html


#: The one of this process: plugin objects come and go with each rebuild of `serve`.
SERVED = ServeMemo()
