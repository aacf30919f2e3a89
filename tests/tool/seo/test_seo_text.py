"""Chinese-aware text measures: normalisation, the segmenter with the technical dictionary, widths."""

from __future__ import annotations

import pytest

from perfblog.seo import text


@pytest.fixture(scope="module")
def seg() -> text.Segmenter:
    return text.default_segmenter()


def test_normalize_folds_full_width_and_case():
    assert text.normalize("ＴＯＲＣＨ.Compile") == "torch.compile"


def test_keyphrase_counted_by_substring_whatever_the_segmenter_does():
    body = "TORCH.COMPILE 很快；ｔｏｒｃｈ.ｃｏｍｐｉｌｅ 也很快；torch.compiled 也算一次。"
    assert text.count_occurrences(body, "torch.compile") == 3


def test_technical_terms_stay_one_word(seg):
    words = seg.words("使用 torch.compile 的 fullgraph=True 时出现图断裂，整图编译与动态形状")
    for term in ("torch.compile", "fullgraph", "图断裂", "整图编译", "动态形状"):
        assert term in words
    assert "=" not in words and "，" not in words


def test_dictionary_changes_real_rjieba_output():
    """Without our dictionary rjieba splits 图断裂 (this is why the dictionary exists)."""
    import rjieba

    plain = rjieba.Jieba().cut("出现图断裂")
    assert "图断裂" not in plain
    assert "图断裂" in text.Segmenter().words("出现图断裂")


def test_word_count_ignores_spaces_and_punctuation(seg):
    assert seg.word_count("我们 测试，一下！ PyTorch 2.4") == 5  # 我们 测试 一下 PyTorch 2.4


def test_chinese_text_counts_words_not_sentences(seg):
    body = "本文介绍 torch.compile 的整图编译。" + "我们测量模型推理的延迟并且比较结果。" * 20
    assert 100 < seg.word_count(body) < 200  # a sentence-as-one-word tokenizer would report ~21


def test_display_width_counts_cjk_double():
    assert text.display_width("PyTorch 性能笔记") == 7 + 1 + 4 * 2
    assert text.display_width("ＡＢ") == 4


def test_is_chinese():
    assert text.is_chinese("torch.compile 的整图编译")
    assert not text.is_chinese("Compiling whole graphs with torch.compile")


def test_a_keyphrase_counts_only_where_whole_tokens_spell_it(seg):
    body = "运算符重载不算；这次运算的结果，以及下一次运算，才算。"
    assert "运算符" in seg.cut(body)
    assert seg.count(body, "运算") == 2


def test_a_keyphrase_of_several_words_is_a_run_of_tokens_with_or_without_spaces(seg):
    assert seg.count("背包 DP 是背包dp，也写作「背包 dp」。", "背包 DP") == 3


def test_full_width_and_case_fold_before_counting(seg):
    assert seg.count("TORCH.COMPILE 很快；ｔｏｒｃｈ.ｃｏｍｐｉｌｅ 也很快", "torch.compile") == 2


def test_tokens_count_words_as_word_count_does(seg):
    body = "我们 测试，一下！ PyTorch 2.4"
    assert seg.tokens(body).words == seg.word_count(body) == 5
