"""Prose checks at build time: no speed comparison on a bare ratio, no typed sentence about which results
exist or on which device they were measured; reading time counts prose only."""

from __future__ import annotations

import signal

import pytest

from perfblog.generator.render import claims, readtime
from perfblog.generator.store.content import ValueRecord

VALUES = {
    ("s", "speedup"): ValueRecord("speedup", 2.31),
    ("s", "ratio_x"): ValueRecord("ratio_x", 2.31, "×"),
    ("s", "n"): ValueRecord("n", 100000),
    ("s", "ms"): ValueRecord("ms", 3.2, "ms"),
    ("s", "name"): ValueRecord("name", "torch.dot"),
    ("s", "note"): ValueRecord("note", "峰值显存只在 GPU 上测量"),
    ("s", "device"): ValueRecord("device", "NVIDIA H200"),
    ("s", "dtype"): ValueRecord("dtype", "bfloat16"),
}


def lookup(stem: str, name: str) -> ValueRecord | None:
    return VALUES.get((stem, name))


def check(markdown: str, offset: int = 0) -> list[tuple[int, str, str]]:
    found = claims.bare_ratios(markdown, lookup, offset)
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


#: Typed sentences the results decide, by the kind the lint reports (positive cases).
TYPED = [
    ("本文还没有 GPU 结果。", "pending"),
    ("GPU 运行一旦完成，新的结果会自动替换这些部分。", "pending"),
    ("GPU 结果会自动替换这些部分。", "pending"),
    ("这一条要等 GPU 运行才有结果。", "pending"),
    ("需要 GPU 的部分目前还没有 GPU 结果，文中如实标为“未检验”。", "pending"),
    ("到目前为止，这些片段还没有在 GPU 上运行过。", "pending"),
    ("本文所示运行记录的跳过计数为 <%= value(\"s\", \"n\") %>，本文还没有 GPU 上的耗时。", "pending"),
    ("The parts that need a GPU have no GPU result yet.", "pending"),
    ("On a GPU the snippet asserts the reason, which awaits a GPU run.", "pending"),
    ("There are no GPU times yet.", "pending"),
    ("The GPU results will replace these parts.", "pending"),
    ("在 CPU 上，eager 每个解码步要分派 <%= value(\"s\", \"n\") %> 个算子。", "measured-on"),
    ("在 CPU 上，eager 每个解码步比编译后的慢。", "measured-on"),
    ("在本文所示的 CPU 运行里，<%= value(\"s\", \"note\") %>。", "pending"),
    ("on the GPU this is 2x faster.", "measured-on"),
    ("On a CPU, eager dispatches <%= value(\"s\", \"n\") %> operators per step.", "measured-on"),
    ("On a CPU, <%= verdict(\"s\", \"v\") %>.", "measured-on"),
    ("in the CPU run shown here, <%= value(\"s\", \"note\") %>.", "pending"),
    ("On a GPU, a step launches <%= value(\"s\", \"missing\") %> kernels.", "measured-on"),  # not shown yet
    ("编译之后两者的稳态差别，以上面这句结论为准，不同的运行可能落在不同的一边。", "hedge"),
    ("The sentence above is the verdict, and different runs may land on different sides.", "hedge"),
]

#: Sentences the lint lets through (negative cases): mechanisms, not results; a device named by an embed;
#: what a snippet does on a device (no number, no comparison: true whichever results exist); sentences
#: the results choose; code and examples.
UNTYPED = [
    "CUDA Graphs 把内核录制下来再重放。",
    "在 GPU 上，片段断言没有跳过。",
    "在 GPU 上，断图版本和 eager 一样，要在 `.item()` 处等设备算完、把数值拷回主机。",
    "没有 GPU 时，Triton 可以在解释器模式（`TRITON_INTERPRET=1`）下用 numpy 执行内核。",
    "CUDA Graph 录制的前提是这段时间里没有 CPU 参与决策、没有把数据拉回主机的同步。",
    "本文所示的运行在 <%= value(\"s\", \"device\") %> 上，数据类型为 <%= value(\"s\", \"dtype\") %>。",
    "这一列只在 GPU 上有数。",
    "想在自己的 GPU 上复现，运行 `blog run --device cuda` 加上片段名。",
    "有 GPU 结果时文章显示 GPU 结果，否则显示 CPU 结果。",
    "On a GPU the snippet first asserts that nothing was skipped.",
    "Without a GPU, Triton can run the kernel with numpy in interpreter mode.",
    "<%= verdict(\"s\", \"v\", subject=\"A\", baseline=\"B\") %>。",
    "这一列只在 GPU 上有数：<%= value(\"s\", \"note\") %>。",  # the snippet's own words, not a measurement
    'That column has numbers on a GPU only: <%= value("s", "note") %>.',
    '在 GPU 上，片段检验只有整数版本会同步<% if has_result("s", device="cuda") %>：整数版本是'
    '“<%= value("s", "n") %>”<% else %>；在 CPU 上这一步不适用<% endif %>：',
    '<% if has_result("s", device="cuda") %>GPU 上的耗时见下表。<% else %>本文还没有 GPU 结果。<% endif %>',
    '<% if not has_result("s", device="cuda") %>\nThere are no GPU times yet.\n<% endif %>',
    '<% set gpu = has_result("s", device="cuda") %>\n'
    '<% if gpu %>x<% else %>GPU 结果会自动替换这些部分。<% endif %>',
    '<% if has_result("s", device="cpu") %>在 CPU 上，eager 每步 <%= value("s", "n") %> 个算子。<% endif %>',
    '<% if verdict_of("s", "v") == "inconclusive" %>不同的运行可能落在不同的一边。<% endif %>',
    "```python\n# 本文还没有 GPU 结果\nprint('on the GPU this is 2x faster')\n```",
    "`在 CPU 上，还没有结果`",
    "<% raw %>本文还没有 GPU 结果。<% endraw %>",
    "<!-- 本文还没有 GPU 结果。 -->",
]


@pytest.mark.parametrize(("sentence", "kind"), TYPED)
def test_a_typed_sentence_about_a_devices_results_is_flagged(sentence: str, kind: str) -> None:
    found = claims.typed_results(f"# T\n\nIntro.\n\n{sentence}\n\nMore.\n", lookup, line_offset=5)
    assert [(f.line, f.kind.name) for f in found] == [(10, kind)]


@pytest.mark.parametrize("sentence", UNTYPED)
def test_mechanisms_embeds_and_sentences_the_results_choose_pass(sentence: str) -> None:
    assert claims.typed_results(f"Intro.\n\n{sentence}\n", lookup) == []


def test_a_block_not_chosen_by_the_results_does_not_excuse_its_sentences() -> None:
    page = ('<% if 1 == 1 %>本文还没有 GPU 结果。<% endif %>\n'
            '<% set x = 1 %><% if x %>GPU 结果会自动替换这些部分。<% endif %>')
    assert [f.kind.name for f in claims.typed_results(page, lookup)] == ["pending", "pending"]


def test_the_typed_finding_quotes_the_sentence_and_says_what_to_write() -> None:
    (finding,) = claims.typed_results('在 CPU 上，eager 要分派 <%= value("s", "n") %> 个算子。', lookup)
    assert finding.message() == (
        "a typed sentence names the device of a result it shows, another device once that device's "
        "results exist (measured-on): \"在 CPU 上，eager 要分派 … 个算子。\"; let the results say it: name "
        "the device with an embed (value(\"SNIPPET\", \"device\")), or choose the sentence with "
        "<% if has_result(\"SNIPPET\", device=\"cpu\") %> (docs/authoring.md)")


@pytest.mark.parametrize("markdown", [
    "<%" * 100_000,  # openings without an end
    "<% raw %>" * 20_000,  # raw regions that never end
    "".join("`" * n + "x\n" for n in range(400, 3, -1)) + "本文还没有 GPU 结果。\n",  # fences never closed
    "`x <%" * 30_000,  # code spans that never close
    "<!--" * 50_000,  # comments that never close
    "<% if x %>在 CPU 上" * 20_000,  # blocks that never end
], ids=["openings", "raw", "fences", "code-spans", "comments", "ifs"])
def test_the_prose_checks_of_a_hostile_post_take_linear_time(markdown: str) -> None:
    """Post Markdown is untrusted: a lazy pattern from each of many openings would take minutes here."""
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("quadratic")))
    signal.alarm(20)
    try:
        claims.bare_ratios(markdown, lookup)
        claims.typed_results(markdown, lookup)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_reading_time_counts_prose_not_code_outputs_tables_or_embeds() -> None:
    prose = "<p>" + "读" * 800 + "</p>"  # two minutes of Chinese prose
    code = "<pre><code>" + "x = 1\n" * 5000 + "</code></pre>"
    embeds = ('<table><tr><td>' + "1 " * 3000 + '</td></tr></table><div class="snippet-html">' + "w " * 3000
              + '</div><details><summary>s</summary>' + "w " * 3000 + "</details>")
    assert readtime.minutes(prose) == 2
    assert readtime.minutes(prose + code + embeds) == 2
    assert readtime.minutes("<p>" + "word " * 530 + "</p>") == 2
    assert readtime.minutes("") == 1
