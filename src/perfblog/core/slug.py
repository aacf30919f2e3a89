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
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from pypinyin import Style, lazy_pinyin

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


def _words(title: str) -> list[str]:
    """Split a title into ASCII words: pinyin syllables for Han characters, letters and digits else."""
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
