"""Head tags: one complete, escaped set replaces the theme's own."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import lxml.html

from perfblog.seo.languages import Alternate
from perfblog.seo.meta import Author, Crumb, Image, PageMeta, inject, render_head

HOSTILE = 'Say "hi" <script>alert(1)</script> & 图断裂'


def _meta(**changes) -> PageMeta:
    values = dict(
        title=HOSTILE + " - 站点",
        headline=HOSTILE,
        description='描述 "quoted" <b>bold</b> & more',
        canonical="https://blog.example.com/a/?x=1&y=2",
        lang="zh-CN",
        site_name="站点",
        site_url="https://blog.example.com/",
        og_type="article",
        keywords=("torch.compile", '"图断裂"'),
        image=Image("https://blog.example.com/c.png", 1200, 630, "卡片"),
        author=Author("作者 <me>", "https://blog.example.com/about/"),
        published=datetime(2024, 5, 2, tzinfo=UTC),
        modified=datetime(2024, 6, 10, tzinfo=UTC),
        verification={"baidu-site-verification": 'codeva-"x"'},
    )
    values.update(changes)
    return PageMeta(**values)


THEME_PAGE = """<!doctype html>
<html lang="zh" class="no-js">
<head>
<meta charset="utf-8">
<meta name="description" content="theme description">
<link rel="canonical" href="https://old/">
<title>theme title</title>
</head>
<body><h1>x</h1></body>
</html>"""


def test_values_with_quotes_and_script_are_escaped():
    head = render_head(_meta())
    assert "<script>alert" not in head
    doc = lxml.html.document_fromstring(inject(THEME_PAGE, _meta()))
    assert doc.findtext(".//title") == HOSTILE + " - 站点"
    assert doc.xpath("//meta[@name='description']/@content") == ['描述 "quoted" <b>bold</b> & more']
    assert doc.xpath("//meta[@property='og:title']/@content") == [HOSTILE]
    assert doc.xpath("//link[@rel='canonical']/@href") == ["https://blog.example.com/a/?x=1&y=2"]
    assert doc.xpath("//meta[@name='baidu-site-verification']/@content") == ['codeva-"x"']


def test_jsonld_cannot_close_its_script_and_round_trips():
    doc = lxml.html.document_fromstring(inject(THEME_PAGE, _meta()))
    script = doc.xpath("//script[@type='application/ld+json']")[0]
    assert "</script" not in script.text
    data = json.loads(script.text)
    assert data["author"]["url"] == "https://blog.example.com/about/"
    assert data["@type"] == "BlogPosting"
    assert data["headline"] == HOSTILE
    assert data["author"]["name"] == "作者 <me>"
    assert data["datePublished"].startswith("2024-05-02")
    assert data["dateModified"].startswith("2024-06-10")
    assert data["image"] == ["https://blog.example.com/c.png"]


def test_theme_tags_are_replaced_not_duplicated():
    doc = lxml.html.document_fromstring(inject(THEME_PAGE, _meta()))
    assert len(doc.xpath("//title")) == 1
    assert len(doc.xpath("//meta[@name='description']")) == 1
    assert len(doc.xpath("//link[@rel='canonical']")) == 1
    assert doc.get("lang") == "zh-CN"
    assert doc.get("class") == "no-js"


def test_theme_tags_whose_unescaped_values_hold_angle_brackets_are_removed_whole():
    hostile = 'content="eager -> compiled <script>x</script>"'
    theme = THEME_PAGE.replace('content="theme description"', hostile)
    page = inject(theme, _meta())
    head = page[page.index("<head>") : page.index("</head>")]
    assert "compiled" not in head  # no stray text left of the theme's tag
    doc = lxml.html.document_fromstring(page)
    assert len(doc.xpath("//head/title")) == 1
    assert len(doc.xpath("//head/meta[@name='description']")) == 1


def test_baidu_no_transform_and_no_siteapp_always_present():
    doc = lxml.html.document_fromstring(inject(THEME_PAGE, _meta(og_type="website")))
    assert set(doc.xpath("//meta[@http-equiv='Cache-Control']/@content")) == {"no-transform", "no-siteapp"}
    assert not doc.xpath("//script[@type='application/ld+json']")  # only posts are BlogPostings


def test_keywords_only_where_given_and_noindex_for_drafts():
    doc = lxml.html.document_fromstring(inject(THEME_PAGE, _meta(keywords=(), noindex=True)))
    assert not doc.xpath("//meta[@name='keywords']")
    assert doc.xpath("//meta[@name='robots']/@content") == ["noindex, follow"]


SOCIAL_PAGE = THEME_PAGE.replace(
    "<title>theme title</title>",
    '<title>theme title</title>\n<meta property="og:type" content="website">\n'
    '<meta property="og:image" content="https://blog.example.com/assets/images/social/a.png">\n'
    '<meta property="og:image:width" content="1200">\n'
    '<meta name="twitter:card" content="summary_large_image">\n'
    '<meta name="twitter:image" content="https://blog.example.com/assets/images/social/a.png">',
)


def test_social_plugin_tags_are_never_duplicated_and_its_image_is_kept_when_the_page_has_none():
    doc = lxml.html.document_fromstring(inject(SOCIAL_PAGE, _meta(image=None)))
    for tag in ("og:type", "og:image", "og:image:width"):
        assert len(doc.xpath(f"//meta[@property='{tag}']")) <= 1, tag
    assert doc.xpath("//meta[@property='og:image']/@content") == [
        "https://blog.example.com/assets/images/social/a.png"
    ]
    assert len(doc.xpath("//meta[@name='twitter:card']")) == 1
    assert len(doc.xpath("//meta[@name='twitter:image']")) == 1
    own = lxml.html.document_fromstring(inject(SOCIAL_PAGE, _meta()))
    assert own.xpath("//meta[@property='og:image']/@content") == ["https://blog.example.com/c.png"]


def test_language_versions_are_linked_with_hreflang_and_material_reads_the_sites_own_sitemap():
    alternates = (
        Alternate("en", "https://blog.example.com/a-en/"),
        Alternate("zh-CN", "https://blog.example.com/a/"),
        Alternate("x-default", "https://blog.example.com/a/"),
    )
    page = inject(THEME_PAGE, _meta(alternates=alternates, canonical="https://blog.example.com/a/",
                                    feed="https://blog.example.com/feed.xml"))  # fmt: skip
    doc = lxml.html.document_fromstring(page)
    links = doc.xpath("//link[@rel='alternate'][@hreflang]")
    assert [(x.get("hreflang"), x.get("href")) for x in links] == [(a.hreflang, a.url) for a in alternates]
    # Material fetches sitemap.xml beside each rel=alternate link; the shim sends those to ../sitemap.xml
    (shim,) = [s.text for s in doc.xpath("//script[not(@type)]")]
    assert '"https://blog.example.com/a-en/sitemap.xml"' in shim and '"../sitemap.xml"' in shim
    assert '"https://blog.example.com/sitemap.xml"' in shim  # beside the feed


def test_breadcrumbs_and_website_jsonld():
    crumbs = (Crumb("站点", "https://blog.example.com/"), Crumb("文章", "https://blog.example.com/a/"))
    post = lxml.html.document_fromstring(inject(THEME_PAGE, _meta(breadcrumbs=crumbs)))
    types = [json.loads(s)["@type"] for s in post.xpath("//script[@type='application/ld+json']/text()")]
    assert types == ["BlogPosting", "BreadcrumbList"]
    home = lxml.html.document_fromstring(inject(THEME_PAGE, _meta(og_type="website", home=True)))
    (site,) = [json.loads(s) for s in home.xpath("//script[@type='application/ld+json']/text()")]
    assert (site["@type"], site["name"], site["url"], site["inLanguage"]) == (
        "WebSite", "站点", "https://blog.example.com/", "zh-CN"
    )
