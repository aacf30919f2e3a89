"""Prose checks at build time: no speed comparison on a bare ratio; reading time counts prose only."""

from __future__ import annotations

import pytest

from perfblog.generator.render import claims, readtime
from perfblog.generator.store.content import ValueRecord

VALUES = {
    ("s", "speedup"): ValueRecord("speedup", 2.31),
    ("s", "ratio_x"): ValueRecord("ratio_x", 2.31, "×"),
    ("s", "n"): ValueRecord("n", 100000),
    ("s", "ms"): ValueRecord("ms", 3.2, "ms"),
    ("s", "name"): ValueRecord("name", "torch.dot"),
}


def check(markdown: str, offset: int = 0) -> list[tuple[int, str, str]]:
    found = claims.bare_ratios(markdown, lambda stem, name: VALUES.get((stem, name)), offset)
    return [(f.line, f.word, f.name) for f in found]


@pytest.mark.parametrize("sentence", [
    '编译后快约 <%= value("s", "speedup", ".1f") %> 倍。',
    'The compiled one is <%= value("s", "speedup") %> times faster.',
    '慢了：<%= value("s", "ratio_x") %>。',
    '`torch.dot` 比循环快约 <%= value("s", "speedup", ".0f") %> 倍（<%= value("s", "ms") %> 对 '
    '<%= value("s", "ms") %>）。',
])
def test_a_sentence_comparing_speeds_with_a_bare_ratio_is_flagged(sentence: str) -> None:
    found = check(f"# T\n\nIntro.\n\n{sentence}\n", offset=5)
    assert [line for line, _, _ in found] == [10] and found[0][2] in ("speedup", "ratio_x")


@pytest.mark.parametrize("sentence", [
    '<%= verdict("s", "v") %>，中位耗时 <%= value("s", "ms") %>。',  # a verdict, and a time with its unit
    '对 <%= value("s", "n", ",") %> 个元素求平方和，快得多。',  # a count is not a ratio
    '加速比为 <%= value("s", "speedup") %>。后面那句才说快。',  # another sentence
    '<% raw %>\n快约 <%= value("s", "speedup") %> 倍\n<% endraw %>',  # an example of the syntax
    'The compiler is <%= value("s", "name") %>, and it is faster.',
])
def test_verdicts_counts_other_sentences_and_examples_pass(sentence: str) -> None:
    assert check(f"Intro.\n\n{sentence}\n") == []


def test_the_finding_says_what_to_do() -> None:
    (finding,) = claims.bare_ratios('快 <%= value("s", "speedup") %>', lambda s, n: VALUES[(s, n)])
    assert finding.message() == ("a sentence says '快' next to the bare ratio value(\"s\", \"speedup\"); "
                                 "embed verdict(\"s\", ...) instead, so its wording follows the measured "
                                 "verdict")


def test_reading_time_counts_prose_not_code_outputs_tables_or_embeds() -> None:
    prose = "<p>" + "读" * 800 + "</p>"  # two minutes of Chinese prose
    code = "<pre><code>" + "x = 1\n" * 5000 + "</code></pre>"
    embeds = ('<table><tr><td>' + "1 " * 3000 + '</td></tr></table><div class="snippet-html">' + "w " * 3000
              + '</div><details><summary>s</summary>' + "w " * 3000 + "</details>")
    assert readtime.minutes(prose) == 2
    assert readtime.minutes(prose + code + embeds) == 2
    assert readtime.minutes("<p>" + "word " * 530 + "</p>") == 2
    assert readtime.minutes("") == 1
