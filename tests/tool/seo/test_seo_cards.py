"""Social cards: a 1200×630 PNG per page that draws its Chinese title with a font found on this machine,
cached by content hash, with a clear error when no CJK font can be had."""

from __future__ import annotations

import shutil
import zlib
from io import BytesIO
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageDraw

from perfblog.core import fonts
from perfblog.core.cache import Cache
from perfblog.core.workers import Workers
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



@pytest.mark.parametrize("title", [TITLE, "短", "长" * 400])
def test_the_png_holds_the_drawn_pixels_in_a_valid_stream(font, title):
    """The card's own encoder (unfiltered rows, the frame's rows deflated once and spliced in): Pillow
    reads back exactly what was drawn, and zlib accepts the stream's checksum."""
    data = cards.png(title, "站点", "example.org", font)
    with Image.open(BytesIO(data)) as image:
        image.load()
        assert ImageChops.difference(image, cards.draw(title, "站点", "example.org", font)).getbbox() is None
    idat = data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8]
    assert len(zlib.decompress(idat)) == cards.HEIGHT * (1 + cards.WIDTH * 3)


def test_a_card_that_differs_from_its_frame_outside_the_title_is_encoded_whole(font):
    frame = cards._frame("站点", "example.org", font)
    card = cards.draw(TITLE, "站点", "example.org", font)
    ImageDraw.Draw(card).rectangle((0, 0, 50, 3), fill="#ff0000")  # in the frame's first rows
    with Image.open(BytesIO(cards.encode(card, frame))) as image:
        image.load()
        assert ImageChops.difference(image, card).getbbox() is None

def test_lines_break_between_words_and_never_start_with_closing_punctuation(font):
    face = font.load(64)
    lines = cards.wrap(TITLE, face, 600)
    assert "".join(lines).replace(" ", "") == TITLE.replace(" ", "")
    assert all(face.getlength(line) <= 600 or len(line) == 1 for line in lines)
    assert not any(line[0] in "，。、：；）" for line in lines)
    assert any("torch.compile" in line for line in lines)  # a Latin word stays whole


# A card's file name: short, ASCII, the same for a path however it is spelt (a long Chinese path,
# its characters escaped or not).
LONG_PATH = "tech/开发运维/服务器配置使用/2023-10-23-在-Linux-上给用户赋予指定目录的读写权限-dis9/"


@pytest.mark.parametrize("page_path", [
    "博客/2023 网站更新记录/",
    "%E5%8D%9A%E5%AE%A2/2023%20%E7%BD%91%E7%AB%99%E6%9B%B4%E6%96%B0%E8%AE%B0%E5%BD%95/",
    "博客/2023 网站更新记录.html",
])
def test_a_chinese_path_gives_one_ascii_name_however_it_is_written(page_path):
    """Percent-encoded (MkDocs' page.url), decoded, or as a use_directory_urls: false file."""
    assert cards.file_name(page_path, "0123456789abcdef") == \
        "_seo/cards/bo-ke-2023-wang-zhan-geng-xin-ji-lu-0123456789.png"


def test_names_of_the_home_page_index_files_and_punctuation_only_paths():
    assert cards.file_name("", "f" * 64) == cards.file_name("index.html", "f" * 64) == \
        "_seo/cards/index-ffffffffff.png"
    assert cards.file_name("a/reindex.html", "f" * 64) == "_seo/cards/a-reindex-ffffffffff.png"
    assert cards.file_name("a+b (1)/", "f" * 64) == "_seo/cards/a-b-1-ffffffffff.png"
    assert cards.file_name("（）/", "f" * 64).startswith("_seo/cards/post-")


def test_a_long_chinese_path_is_written_under_a_short_name(font, tmp_path):
    """Percent-encoded, this path is a 353-byte file name: over 255, the build crashed (Errno 36)."""
    card = _cards(font, tmp_path).publish(TITLE, LONG_PATH)
    name = card.path.rsplit("/", 1)[1]
    assert name.isascii() and len(name) <= cards.NAME_MAX + len("-0123456789.png")
    assert name.startswith("tech-kai-fa-yun-wei-fu-wu-qi")
    assert (tmp_path / "site" / card.path).is_file()


def test_a_cold_build_draws_in_worker_processes_the_same_cards(font, tmp_path):
    """Once a pool starts its workers draw the cards; `finish` writes each where every page asked for it,
    byte for byte what this process would draw, and caches it for the next build."""
    pool = Workers(2, start_at=2)
    pooled = cards.Cards(font, "站点", "example.org", Cache(tmp_path / "a"), tmp_path / "a" / "site", pool)
    titles = ["图断裂", "重新编译", "整图编译"]
    made = [pooled.publish(title, f"文章/{title}/") for title in titles]
    twin = pooled.publish(titles[0], "另一篇/")  # the same card for a second page
    assert pool.started and not (tmp_path / "a" / "site" / made[0].path).exists()
    pooled.finish()
    pool.shutdown()
    assert pooled.drawn == 3
    here = cards.Cards(font, "站点", "example.org", Cache(tmp_path / "b"), tmp_path / "b" / "site")
    for title, card in zip(titles, made, strict=True):
        assert (tmp_path / "a" / "site" / card.path).read_bytes() == here.png(title)
    assert (tmp_path / "a" / "site" / twin.path).read_bytes() == here.png(titles[0])
    again = cards.Cards(font, "站点", "example.org", Cache(tmp_path / "a"), tmp_path / "a" / "site2", pool)
    again.publish(titles[1], "文章/x/")
    again.finish()
    assert again.drawn == 0  # cached by the pooled build


def test_with_workers_a_few_cards_are_drawn_here_without_a_pool(font, tmp_path):
    pool = Workers(4)
    few = cards.Cards(font, "站点", "example.org", Cache(tmp_path), tmp_path / "site", pool)
    card = few.publish(TITLE, "a/")
    few.finish()
    assert not pool.started and few.drawn == 1 and (tmp_path / "site" / card.path).is_file()
