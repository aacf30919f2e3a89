"""The link graph: which links make a post no orphan, and how many clicks it is from the home page."""

from __future__ import annotations

from urllib.parse import urljoin

from perfblog.seo import links
from perfblog.seo.facts import read_page

BASE = "https://blog.example.com/notes/"


def html(path: str, body: str, *, post: bool = True, head: str = "") -> bytes:
    kind = "article" if post else "website"
    url = BASE + links.page_key(path)
    return (f'<html lang="zh-CN"><head><link rel="canonical" href="{url}">'
            f'<meta property="og:type" content="{kind}">{head}</head>'
            f'<body><nav><a href="/notes/">首页</a></nav><article>{body}</article></body></html>').encode()


def found(pages: dict[str, bytes], published: tuple[str, ...] = ()) -> set[tuple[str, str]]:
    facts = [read_page(data, path) for path, data in pages.items()]
    return {(f.page, f.rule) for f in links.findings(facts, published)}


def test_absolute_root_relative_and_relative_links_to_the_site_all_count():
    pages = {
        "index.html": html("index.html", '<a href="a/">甲</a>', post=False),
        "a/index.html": html("a/index.html", f'<a href="{BASE}b/">乙</a> <a href="/notes/c/index.html">丙'),
        "b/index.html": html("b/index.html", '<a href="../a/#part">甲</a>'),
        "c/index.html": html("c/index.html", '<a href="https://elsewhere.example.org/notes/c/">外站</a>'),
    }
    assert found(pages) == set()


def test_a_post_linked_only_from_its_own_text_another_site_or_a_noindex_page_is_an_orphan():
    noindex = '<meta name="robots" content="noindex">'
    pages = {
        "index.html": html("index.html", '<a href="a/">甲</a> <a href="draft/">草稿</a>', post=False),
        "a/index.html": html("a/index.html", '<a href="./">自己</a>'),
        "draft/index.html": html("draft/index.html", '<a href="../a/">甲</a>', head=noindex),
    }
    assert found(pages) == set()  # the home page's text links it
    pages["index.html"] = html("index.html", '<nav><a href="a/">甲</a></nav><a href="draft/">草稿</a>',
                               post=False)
    assert found(pages) == {("a/index.html", "orphan-post")}
    assert found(pages, published=("draft/index.html",)) == set()  # serve: the draft counts as published


def test_a_post_no_link_reaches_is_unreachable():
    pages = {"index.html": html("index.html", "首页", post=False),
             "a/index.html": html("a/index.html", '<a href="../b/">乙</a>'),
             "b/index.html": html("b/index.html", '<a href="../a/">甲</a>')}
    facts = [read_page(data, path) for path, data in pages.items()]
    messages = {(f.page, f.message) for f in links.findings(facts) if f.rule == "link-depth-deep"}
    assert messages == {(p, "no chain of links leads to it from the home page") for p in ("a/index.html",
                                                                                         "b/index.html")}


def test_a_folder_without_a_home_page_is_not_checked_as_a_site():
    assert found({"a/index.html": html("a/index.html", "孤立")}) == set()


def test_percent_encoded_links_reach_pages_whose_paths_are_chinese_with_spaces_and_plus():
    """MkDocs writes `博客/a b+c (1)/` as `%E5%8D%9A%E5%AE%A2/a%20b%2Bc%20%281%29/`; the file keeps its
    characters. The home page's navigation links every post: none is unreachable (kgarden: 255 of 255
    were), and a post linked from another's text is no orphan."""
    pages = {
        "index.html": html("index.html", '<a href="%E5%8D%9A%E5%AE%A2/a%20b%2Bc%20%281%29/">甲</a>'
                                         ' <a href="/notes/%E7%AC%94%E8%AE%B0/">乙</a>', post=False),
        "博客/a b+c (1)/index.html": html("博客/a b+c (1)/index.html",
                                          '<a href="../../%E7%AC%94%E8%AE%B0/#part">乙</a>'),
        "笔记/index.html": html("笔记/index.html", '<a href="../博客/a b+c (1)/">甲</a>'),
    }
    assert found(pages) == set()
    pages["index.html"] = html("index.html", "首页", post=False)  # now nothing leads to them
    assert found(pages) == {("博客/a b+c (1)/index.html", "link-depth-deep"),
                            ("笔记/index.html", "link-depth-deep")}


def test_a_site_path_is_the_decoded_path_inside_the_site_or_none_outside_it():
    assert links.site_path(BASE + "%E5%8D%9A%E5%AE%A2/a%20b%2B/", BASE) == "博客/a b+/"
    assert links.site_path("http://BLOG.example.com/notes/a.html", BASE) == "a.html"
    assert links.site_path(BASE, BASE) == ""
    assert links.site_path("https://blog.example.com/other/", BASE) is None
    assert links.site_path(BASE + "../x/", BASE) is None
    assert links.site_path("https://elsewhere.example.org/notes/", BASE) is None


def test_every_link_resolves_to_the_page_urljoin_names_however_it_is_written():
    """Relative links are resolved without `urljoin` (it costs ten times more, and every page repeats the
    navigation); each kind of href, from pages at each depth, in a site at the host's root and under a
    path, names the page `urljoin` and `site_path` name."""
    pages = ["index.html", "a/index.html", "a/b.html", "博客/a b+c (1)/index.html", "x/y/z/index.html"]
    hrefs = [
        "b/", "./", ".", "..", "../", "../..", "../../../../x/", "b.html", "a//b/", "../a/./c/../d/",
        "%E5%8D%9A%E5%AE%A2/a%20b%2Bc%20%281%29/", "../../%E7%AC%94%E8%AE%B0/#part", "笔记/?q=1",
        "b/%2E%2E/c/", "a%2Fb/../c/", "?page=2", "/notes/a/", "/other/", "//blog.example.com/notes/a/",
        "https://blog.example.com/notes/z/", "mailto:a@b.c", "javascript:void(0)", " ../spaced/ ",
        "..foo/", "...", "a/..", "#top", "",
    ]
    for base in (BASE, "https://blog.example.com/"):
        for page in pages:
            here = links.page_url(base, page)
            for href in hrefs:
                expected = (links.site_path(urljoin(here, href.strip()), base)
                            if href and not href.startswith("#") else None)  # fmt: skip
                want = frozenset() if expected is None else {links.page_key(expected)}
                assert links.targets([href], page, base) == want, (base, page, href)
