"""Text measures that work for Chinese: normalisation, segmentation, display width.

Yoast and friends split words on spaces, so a whole Chinese sentence counts as one word. Here words
come from rjieba (same dictionary and HMM as jieba, ~26x faster) loaded with a dictionary of technical
terms. A keyphrase counts where the segmenter's tokens spell it: 运算 is found in 运算的结果 but not in
运算符 or 位运算, and a keyphrase of several words (背包 DP) is a run of tokens, with or without the
space Chinese writers put between Chinese and Latin words.
"""

from __future__ import annotations

import bisect
import html
import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

# A token counts as a word when it holds a letter, digit or CJK ideograph (not space or punctuation).
_WORDLIKE = re.compile(r"[0-9A-Za-z\u00C0-\u024F\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]")
_TERM_FREQ = 200_000


def normalize(text: str) -> str:
    """NFKC then casefold: full-width letters, ligatures and case never split one keyphrase into two."""
    if len(text) <= _SHORT:
        return _normalize_short(text)
    return unicodedata.normalize("NFKC", text).casefold()


_SHORT = 64  # link texts, titles, keyphrases: the same few are normalised on every page


@lru_cache(maxsize=1 << 13)
def _normalize_short(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def count_occurrences(text: str, phrase: str, *, normalized: bool = False) -> int:
    """Non-overlapping occurrences of `phrase` in `text`, both normalised (`normalized`: text already is)."""
    needle = normalize(phrase).strip()
    if not needle:
        return 0
    return (text if normalized else normalize(text)).count(needle)


def display_width(text: str) -> int:
    """Width in Latin-letter units: wide and full-width characters (CJK) count 2, as engines truncate them."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def load_terms() -> list[tuple[str, int]]:
    """The packaged technical dictionary (seo/data/terms.txt): `term [freq]` a line, `#` comments."""
    text = resources.files("perfblog.seo").joinpath("data/terms.txt").read_text(encoding="utf-8")
    terms = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, freq = line.rpartition(" ")
        if word and freq.isdigit():
            terms.append((word, int(freq)))
        else:
            terms.append((line, _TERM_FREQ))
    return terms


_HAN = re.compile(r"[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]+")


@dataclass(frozen=True)
class Tokens:
    """A text segmented once, for counting keyphrases in it: its word tokens normalised and joined
    (spaces and punctuation dropped, so 背包 DP, 背包DP and Link/Cut Tree match Link Cut Tree), and
    where each word begins.

    A run of ideographs the dictionary does not know (rjieba's HMM joins 树 and 是 in 二叉搜索树是)
    is no word: a keyphrase may begin or end inside it, so only dictionary words are never cut.
    """

    text: str
    starts: tuple[int, ...]  # offset of each word in `text`, in order
    tokens: tuple[str, ...]  # the words themselves
    known: Callable[[str], bool]  # whether the dictionary has a word

    @property
    def words(self) -> int:
        """The number of words: the denominator of keyword density."""
        return len(self.starts)

    def find(self, needle: str) -> list[int]:
        """Offsets of the non-overlapping occurrences of `needle` (another `Tokens.text`) that begin
        and end on word boundaries."""
        found: list[int] = []
        at = self.text.find(needle) if needle else -1
        while at >= 0:
            end = at + len(needle)
            if self._boundary(at) and self._boundary(end):
                found.append(at)
                at = self.text.find(needle, end)
            else:
                at = self.text.find(needle, at + 1)
        return found

    def word_at(self, offset: int) -> int:
        """The index of the word that holds `offset`."""
        return bisect.bisect_right(self.starts, offset) - 1

    def _boundary(self, offset: int) -> bool:
        if offset >= len(self.text):
            return True
        index = self.word_at(offset)
        if self.starts[index] == offset:
            return True
        token = self.tokens[index]
        return bool(_HAN.fullmatch(token)) and not self.known(token)  # inside the HMM's guess


class Segmenter:
    """rjieba with the technical dictionary added.

    Importing rjieba loads its dictionary into the module's own segmenter (about 33 MiB); a
    `rjieba.Jieba()` would load a second copy, so the terms are added to that one (the words are
    the same wherever they are added, and adding them again changes nothing). It is imported here,
    by the first segmenter: a build whose pages were all audited before (`memo`) never needs it.
    """

    def __init__(self) -> None:
        import rjieba  # 33 MiB: only once something is segmented (see above)

        self._jieba = rjieba  # its module-level cut, add_word and has_word: the one dictionary
        for word, freq in load_terms():
            self._jieba.add_word(word, freq, None)
        self._needles: dict[str, str] = {}  # a page's keyphrase is looked for in each of its parts

    def cut(self, text: str) -> list[str]:
        """Every token, spaces and punctuation included: joined, they give back `text`."""
        return self._jieba.cut(text)

    def words(self, text: str) -> list[str]:
        """The tokens that are words (letters, digits, ideographs), in order; no spaces or punctuation."""
        return list(filter(_is_word, self._jieba.cut(text)))

    def word_count(self, text: str) -> int:
        """Number of words in `text`: the denominator of keyword density."""
        return len(self.words(text))

    def tokens(self, text: str, *, normalized: bool = False) -> Tokens:
        """`text` segmented for counting keyphrases (see `Tokens`); `normalized`: `normalize` gave it."""
        # Normalised before cutting: full-width letters become words; no dictionary word mixes case
        # and ideographs, so case-folded Latin runs are cut as before.
        folded = text if normalized else normalize(text)
        words = tuple([t for t in self._jieba.cut(folded) if t.isalnum() or _is_word(t)])  # alnum: most
        starts = tuple(itertools.accumulate(map(len, words), initial=0))[:-1]
        return Tokens("".join(words), starts, words, self._jieba.has_word)

    def needle(self, phrase: str) -> str:
        """`phrase` as `Tokens.find` looks for it."""
        needle = self._needles.get(phrase)
        if needle is None:
            if len(self._needles) >= _NEEDLES:
                self._needles.clear()
            needle = self._needles[phrase] = self.tokens(phrase).text
        return needle

    def count(self, text: str | Tokens, phrase: str) -> int:
        """Occurrences of `phrase` in `text` as a run of whole tokens: 运算 is not counted in 运算符."""
        needle = self.needle(phrase)
        if isinstance(text, Tokens):
            return len(text.find(needle))
        folded = normalize(text)
        if not needle or not set(needle).issubset(folded):  # the tokens' letters are the text's
            return 0
        return len(self.tokens(folded, normalized=True).find(needle))


_NEEDLES = 4096  # keyphrases remembered (`Segmenter.needle`); then it starts again


@lru_cache(maxsize=1 << 14)  # a text's tokens are mostly words it has used before
def _is_word(token: str) -> bool:
    return token.isalnum() or bool(_WORDLIKE.search(token))


@lru_cache(maxsize=1)
def default_segmenter() -> Segmenter:
    """One shared segmenter per process: building the dictionary costs about a second."""
    return Segmenter()


_LATIN_WORD = re.compile(r"[A-Za-z]+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")


_IDEOGRAPHS = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]+")


def _ideographs(text: str) -> int:
    """How many characters of `text` are CJK ideographs (the basic block and extension A)."""
    return sum(map(len, _IDEOGRAPHS.findall(text)))


def han_share(text: str) -> float:
    """Ideographs as a share of ideographs plus Latin words: one 汉字 weighs about one English word, so
    technical Chinese full of identifiers and formulas stays well above what an English page reaches."""
    han = _ideographs(text)
    words = len(_LATIN_WORD.findall(text))
    return han / (han + words) if han + words else 0.0


def is_chinese(text: str, threshold: float = 0.2) -> bool:
    """Whether ideographs make up at least `threshold` of the letters and ideographs in `text`."""
    han = _ideographs(text)
    letters = han + len(_ASCII_LETTER.findall(text))
    return bool(letters) and han / letters >= threshold


_TAG = re.compile(r"<[^>]+>")


def plain_title(title: object) -> str:
    """A page's title as text: MkDocs makes the title of a page from its heading as HTML (`A &amp; B`)."""
    return html.unescape(_TAG.sub("", str(title or ""))).strip()
