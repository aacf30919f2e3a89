"""Social cards: a 1200×630 PNG per page that draws its Chinese title with a font found on this machine,
cached by content hash, with a clear error when no CJK font can be had."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from perfblog.core import fonts
from perfblog.core.cache import Cache
from perfblog.seo import cards
from perfblog.seo.errors import CardError

TITLE = "torch.compile 整图编译实测：fullgraph、图断裂与 CUDA Graphs"


@pytest.fixture(scope="module")
def font() -> fonts.Font:
    return cards.find_font()  # `make fonts` installs fonts-wqy-zenhei; Noto Sans CJK is preferred


def _cards(font: fonts.Font, tmp_path: Path) -> cards.Cards:
    return cards.Cards(font, "PyTorch 性能笔记", "blog.example.com", Cache(tmp_path), tmp_path / "site")


def test_card_is_a_1200_by_630_png_in_the_site(font, tmp_path):
    card = _cards(font, tmp_path).publish(TITLE, "torch-compile-fullgraph")
    assert card.path.startswith("_seo/cards/torch-compile-fullgraph-") and card.path.endswith(".png")
    assert card.alt == f"{TITLE} - PyTorch 性能笔记"
    with Image.open(tmp_path / "site" / card.path) as image:
        assert (image.format, image.size) == ("PNG", (cards.WIDTH, cards.HEIGHT)) == ("PNG", (1200, 630))


def test_chinese_titles_are_drawn_as_glyphs_not_missing_glyph_boxes(font):
    """Two titles of the same length differing only in their ideographs: boxes would look the same."""
    first = cards.draw("图断裂与重新编译", "站点", "example.org", font)
    second = cards.draw("整图编译的代价", "站点", "example.org", font)
    assert ImageChops.difference(first, second).getbbox() is not None
    glyph = fonts._glyph(font.load(32), "图")
    assert glyph != fonts._glyph(font.load(32), "\U0010fffd") and any(glyph)


def test_an_unchanged_title_is_never_drawn_twice(font, tmp_path):
    first = _cards(font, tmp_path)
    first.publish(TITLE, "a")
    first.publish(TITLE, "a")
    assert first.drawn == 1
    later = _cards(font, tmp_path)  # the next build: same cache folder
    later.publish(TITLE, "a")
    assert later.drawn == 0
    later.publish(TITLE + "（续）", "a")
    assert later.drawn == 1


def test_a_changed_title_gets_a_new_file_name(font, tmp_path):
    maker = _cards(font, tmp_path)
    assert maker.publish(TITLE, "a").path != maker.publish(TITLE + "（续）", "a").path


def test_no_cjk_font_is_a_clear_error_naming_what_to_install(tmp_path):
    with pytest.raises(CardError, match=r"no CJK font found .*fonts-wqy-zenhei.*seo_card_font: PATH"):
        cards.find_font(dirs=(tmp_path,))


def test_a_configured_font_path_is_used_and_checked(font, tmp_path):
    copy = tmp_path / "fonts" / f"mine{font.path.suffix}"
    copy.parent.mkdir()
    shutil.copyfile(font.path, copy)
    assert cards.find_font("fonts/" + copy.name, base=tmp_path).path == copy
    (tmp_path / "latin.ttf").write_bytes(b"not a font")
    with pytest.raises(CardError, match=r"seo_card_font: .*latin\.ttf draws no Chinese"):
        cards.find_font("latin.ttf", base=tmp_path)
    with pytest.raises(CardError, match=r"seo_card_font: .*missing\.ttf is not a file"):
        cards.find_font("missing.ttf", base=tmp_path)


def test_lines_break_between_words_and_never_start_with_closing_punctuation(font):
    face = font.load(64)
    lines = cards.wrap(TITLE, face, 600)
    assert "".join(lines).replace(" ", "") == TITLE.replace(" ", "")
    assert all(face.getlength(line) <= 600 or len(line) == 1 for line in lines)
    assert not any(line[0] in "，。、：；）" for line in lines)
    assert any("torch.compile" in line for line in lines)  # a Latin word stays whole
