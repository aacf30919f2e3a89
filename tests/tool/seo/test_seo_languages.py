"""Language versions: `translation_of` in front matter joins a post and its translation with reciprocal
hreflang links in both heads and in the sitemap; each page's lang comes from its front matter or the
site, never from its text."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
import xmlschema
from paths import DATA

from perfblog.seo.errors import ConfigError
from perfblog.seo.languages import X_DEFAULT, Alternate, Source, Translations, interface_language

FIXTURES = DATA / "seo"
SITE_URL = "https://blog.example.com/notes/"
ZH = SITE_URL + "torch-compile-fullgraph/"
EN = SITE_URL + "torch-compile-fullgraph-en/"
ENGLISH_POST = """---
date: 2024-05-03
slug: torch-compile-fullgraph-en
lang: en
translation_of: fullgraph.md
description: fullgraph=True in torch.compile turns every graph break into an error; this post finds each one.
keywords: [torch.compile, graph break]
---

# fullgraph mode in torch.compile

This is the English version of the post on graph breaks. It explains what breaks a graph and how to fix it.
"""


def _source(src: str, url: str, **meta) -> Source:
    return Source(src, None, meta, url)


def test_a_translation_and_its_original_list_each_other_and_the_original_is_x_default(tmp_path):
    pages = [_source("posts/a.md", ZH), _source("posts/a-en.md", EN, lang="en", translation_of="a.md")]
    translations = Translations.collect(pages, "zh-CN", tmp_path)
    expected = (Alternate("en", EN), Alternate("zh-CN", ZH), Alternate(X_DEFAULT, ZH))
    assert translations.of(ZH) == translations.of(EN) == expected
    assert translations.of(SITE_URL) == ()


def test_translation_of_a_missing_page_names_the_file_and_line(tmp_path):
    post = tmp_path / "posts" / "a-en.md"
    post.parent.mkdir()
    post.write_text("---\ndate: 2024-05-03\nlang: en\ntranslation_of: nope.md\n---\n", encoding="utf-8")
    pages = [Source("posts/a-en.md", post, {"lang": "en", "translation_of": "nope.md"}, EN)]
    with pytest.raises(ConfigError, match=r"^posts/a-en\.md:4: `translation_of: nope\.md` is not a page"):
        Translations.collect(pages, "zh-CN", tmp_path)


def test_two_versions_in_one_language_are_an_error(tmp_path):
    pages = [_source("posts/a.md", ZH), _source("posts/a-en.md", EN, translation_of="a.md")]
    with pytest.raises(ConfigError, match=r"both zh-CN versions of one page; a translation sets its own"):
        Translations.collect(pages, "zh-CN", tmp_path)


def test_a_translation_of_an_unpublished_draft_waits_for_it(tmp_path):
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "a.md").write_text("---\ndraft: true\n---\n", encoding="utf-8")
    pages = [_source("posts/a-en.md", EN, lang="en", translation_of="a.md")]  # a.md is not built
    assert Translations.collect(pages, "zh-CN", tmp_path).of(EN) == ()


def test_a_loop_of_translations_is_an_error(tmp_path):
    pages = [_source("a.md", ZH, translation_of="b.md"),
             _source("b.md", EN, lang="en", translation_of="a.md")]
    with pytest.raises(ConfigError, match="loop"):
        Translations.collect(pages, "zh-CN", tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The seo fixture blog with an English translation of its fullgraph post, built strictly."""
    root = tmp_path_factory.mktemp("languages")
    shutil.copytree(FIXTURES / "site", root, dirs_exist_ok=True)
    (root / "docs" / "posts" / "fullgraph-en.md").write_text(ENGLISH_POST, encoding="utf-8")
    config = root / "mkdocs.yml"  # the audit of the short English page is not what this module tests
    config.write_text(config.read_text(encoding="utf-8") + "      seo_audit: false\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(root / "site")],
        capture_output=True, text=True, timeout=120, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return root / "site"


def _doc(built: Path, page: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring((built / page).read_bytes())


def _hreflang(doc: lxml.html.HtmlElement) -> list[tuple[str, str]]:
    return [(link.get("hreflang"), link.get("href")) for link in doc.xpath("//head/link[@hreflang]")]


@pytest.mark.mkdocs
def test_built_post_and_translation_carry_reciprocal_hreflang(built):
    expected = [("en", EN), ("zh-CN", ZH), ("x-default", ZH)]
    assert _hreflang(_doc(built, "torch-compile-fullgraph/index.html")) == expected
    assert _hreflang(_doc(built, "torch-compile-fullgraph-en/index.html")) == expected
    assert _hreflang(_doc(built, "index.html")) == []


@pytest.mark.mkdocs
def test_lang_and_og_locale_come_from_front_matter_or_the_site(built):
    english = _doc(built, "torch-compile-fullgraph-en/index.html")
    assert english.get("lang") == "en"
    assert english.xpath("//meta[@property='og:locale']/@content") == ["en"]
    for page in ("index.html", "archive/2024/index.html", "torch-compile-fullgraph/index.html"):
        doc = _doc(built, page)  # the archive lists the English title; its interface is Chinese
        assert doc.get("lang") == "zh-CN", page
        assert doc.xpath("//meta[@property='og:locale']/@content") == ["zh_CN"], page


@pytest.mark.mkdocs
def test_a_page_in_another_language_has_materials_words_in_its_own(built):
    english, chinese = _doc(built, "torch-compile-fullgraph-en/index.html"), _doc(built, "index.html")
    assert english.xpath("//nav[contains(@class, 'md-header__inner')]/@aria-label") == ["Header"]
    assert chinese.xpath("//nav[contains(@class, 'md-header__inner')]/@aria-label") == ["页眉"]
    assert [t.strip() for t in english.xpath("//time/text()")][:1] == ["May 3, 2024"]
    chinese_post = _doc(built, "torch-compile-fullgraph/index.html")
    assert [t.strip() for t in chinese_post.xpath("//time/text()")][:1] == ["2024年5月2日"]


def test_the_interface_language_is_the_themes_word_list_for_the_tag(tmp_path):
    words = tmp_path / "partials" / "languages"
    words.mkdir(parents=True)
    for name in ("en", "zh", "zh-TW"):
        (words / f"{name}.html").write_text("", encoding="utf-8")
    assert interface_language("en-US", [str(tmp_path)]) == "en"
    assert interface_language("zh-TW", [str(tmp_path)]) == "zh-TW"
    assert interface_language("zh-CN", [str(tmp_path)]) == "zh"
    assert interface_language("tlh", [str(tmp_path)]) is None  # the site's own words, then


@pytest.mark.mkdocs
def test_sitemap_lists_the_language_versions_and_is_valid(built):
    schema = xmlschema.XMLSchema(FIXTURES / "sitemap.xsd")
    schema.import_schema("http://www.w3.org/1999/xhtml", str(FIXTURES / "xhtml-link.xsd"))
    schema.build()
    schema.validate(str(built / "sitemap.xml"))
    text = (built / "sitemap.xml").read_text(encoding="utf-8")
    for url in (ZH, EN):
        entry = text.split(f"<loc>{url}</loc>", 1)[1].split("</url>", 1)[0]
        assert f'<xhtml:link rel="alternate" hreflang="en" href="{EN}"/>' in entry
        assert f'<xhtml:link rel="alternate" hreflang="zh-CN" href="{ZH}"/>' in entry
        assert f'<xhtml:link rel="alternate" hreflang="x-default" href="{ZH}"/>' in entry


def test_mkdocs_static_i18n_language_folders_give_reciprocal_hreflang_without_translation_of():
    """mkdocs-static-i18n hands each page's File its versions (`alternates`) and its own language
    (`locale`); a version that only falls back to the default language's text is no translation."""
    from types import SimpleNamespace as File

    zh = File(url="%E7%AC%94%E8%AE%B0/", locale="zh")
    en = File(url="en/%E7%AC%94%E8%AE%B0/", locale="en")
    fallback = File(url="fr/%E7%AC%94%E8%AE%B0/", locale="zh")  # fallback_to_default: Chinese text
    page = File(alternates={"zh": zh, "en": en, "fr": fallback})
    site = "https://blog.example.com/sub/"
    expected = (Alternate("en", site + "en/%E7%AC%94%E8%AE%B0/"),
                Alternate("zh", site + "%E7%AC%94%E8%AE%B0/"))
    assert Translations({}).of(site + "%E7%AC%94%E8%AE%B0/", page, site) == expected
    assert Translations({}).of(site + "x/", File(alternates={"zh": zh}), site) == ()  # one version: none
    assert Translations({}).of(site + "x/", File(), site) == ()  # no i18n plugin
