"""ASCII slugs for Chinese titles, through pypinyin.

A slug is part of a post's URL, so it must be ASCII (Baidu and Google both show and match it),
short (Yoast flags URLs over 75 characters) and stable: the same title gives the same slug on
every machine, so a rebuild never moves a published post. Chinese characters become toneless
pinyin, one syllable a word (``整图编译`` → ``zheng-tu-bian-yi``), so the slug of a keyphrase is
a substring of the slug of a title that contains it; ASCII words keep their letters and digits
(``torch.compile`` → ``torch-compile``).

The signature fits Material's blog plugin, which calls ``post_slugify(title, separator)``::

    plugins:
      - blog:
          post_slugify: !!python/name:perfblog.core.slug.slugify

pypinyin's dictionaries take about 55 MiB and a third of a second to load, for spellings that never
change: pypinyin is imported on the first title it has to spell, and a build keeps the spellings in
a file between builds (`remember`), so a build whose titles were all spelt before never loads it.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from importlib import metadata

from perfblog.core.cache import Cache
from perfblog.core.fsio import load_json

#: Slugs longer than this are cut at a word boundary; a site's URL then stays under Yoast's 75.
MAX_LENGTH = 60

_WORD = re.compile(r"[a-z0-9]+")

#: Technical words pypinyin reads wrongly: 重 as "re-" is chóng (pypinyin says zhòng), 长尾 is cháng.
READINGS = {
    "重编译": "chong bian yi", "重计算": "chong ji suan", "重排": "chong pai", "重载": "chong zai",
    "重写": "chong xie", "重跑": "chong pao", "重试": "chong shi", "重构": "chong gou",
    "重放": "chong fang", "长尾": "chang wei",
}  # fmt: skip
_READING = re.compile("|".join(sorted(map(re.escape, READINGS), key=len, reverse=True)))


def slugify(title: str, separator: str = "-", max_length: int | None = MAX_LENGTH) -> str:
    """Return the ASCII slug of ``title``: lower-case pinyin syllables and ASCII words.

    A title with nothing to spell (only punctuation, say) gets ``post-`` and a short hash of the
    title, so the slug is still stable and never empty.
    """
    words = _words(title)
    if not words:
        digest = hashlib.sha1(title.encode("utf-8")).hexdigest()[:8]
        return f"post{separator}{digest}"
    slug = words[0]
    for word in words[1:]:
        if max_length is not None and len(slug) + len(separator) + len(word) > max_length:
            break
        slug += separator + word
    return slug[:max_length] if max_length is not None else slug


#: The spellings' file in the cache folder, and the most of it read (a blog of 2,000 posts: 200 KiB).
SPELLINGS_FILE = "slugs.json"
SPELLINGS_LIMIT = 16 << 20


class _Spellings:
    """The words of each title spelt so far: in this process, and in the file `remember` names."""

    def __init__(self) -> None:
        self.words: dict[str, list[str]] = {}
        self.cache: Cache | None = None
        self.changed = False

    @staticmethod
    def version() -> str:
        """What a stored spelling depends on: pypinyin's version and this module's own readings."""
        try:
            pinyin = metadata.version("pypinyin")
        except metadata.PackageNotFoundError:
            pinyin = "?"
        readings = hashlib.sha1(json.dumps(READINGS, sort_keys=True).encode()).hexdigest()[:12]
        return f"{pinyin}:{readings}"

    def load(self, cache: Cache) -> None:
        self.cache, self.changed = cache, False
        raw = cache.read(SPELLINGS_FILE, limit=SPELLINGS_LIMIT)
        try:
            data = load_json(raw) if raw is not None else None
        except ValueError:
            return
        if not isinstance(data, dict) or data.get("version") != self.version():
            return
        stored = data.get("words")
        for title, words in stored.items() if isinstance(stored, dict) else ():
            if isinstance(words, list) and all(isinstance(w, str) and _WORD.fullmatch(w) for w in words):
                self.words.setdefault(title, words)

    def save(self) -> None:
        if self.cache is None or not self.changed:
            return
        data = {"version": self.version(), "words": dict(sorted(self.words.items()))}
        self.cache.write(SPELLINGS_FILE, json.dumps(data, ensure_ascii=False, indent=0).encode("utf-8"))
        self.changed = False


_SPELLINGS = _Spellings()


def remember(cache: Cache) -> None:
    """Keep spellings in `cache` between processes; `save_spellings` writes new ones."""
    _SPELLINGS.load(cache)


def save_spellings() -> None:
    """Write the spellings learnt since `remember` (nothing when there are none)."""
    _SPELLINGS.save()


def _words(title: str) -> list[str]:
    """Split a title into ASCII words: pinyin syllables for Han characters, letters and digits else."""
    known = _SPELLINGS.words.get(title)
    if known is None:
        known = _SPELLINGS.words[title] = _spell(title)
        _SPELLINGS.changed = True
    return list(known)


def _spell(title: str) -> list[str]:
    """The words of `title`, spelt by pypinyin."""
    from pypinyin import Style, lazy_pinyin  # on the first title not spelt before (see the module doc)

    words: list[str] = []
    title = _READING.sub(lambda m: f" {READINGS[m.group()]} ", unicodedata.normalize("NFKC", title))
    for chunk in lazy_pinyin(title, style=Style.NORMAL, errors=_keep):
        words.extend(_WORD.findall(_ascii(chunk).lower()))
    return words


def _keep(chunk: str) -> str:
    """pypinyin hands over runs it has no pinyin for (ASCII, punctuation); keep them to split later."""
    return chunk


def _ascii(text: str) -> str:
    """Drop accents (``é`` → ``e``); anything else without an ASCII form separates words."""
    return "".join(
        char if char.isascii() else "" if unicodedata.combining(char) else " "
        for char in unicodedata.normalize("NFKD", text)
    )
