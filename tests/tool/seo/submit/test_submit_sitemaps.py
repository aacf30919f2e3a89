"""Reading the built sitemap for submission: urlsets, gzip, indexes, and clear errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from submit_sites import SITE, pages, write_index, write_urlset

from perfblog.seo.errors import SitemapError
from perfblog.seo.submit.sitemaps import SitemapEntry, read_sitemap


def test_a_urlset_gives_every_url_with_its_lastmod_in_document_order(tmp_path: Path) -> None:
    entries = [*pages(3), SitemapEntry(f"{SITE}about/", None)]
    path = write_urlset(tmp_path / "sitemap.xml", entries)
    assert read_sitemap(path) == entries


def test_a_gzipped_sitemap_is_recognised_by_its_content(tmp_path: Path) -> None:
    entries = pages(4)
    path = write_urlset(tmp_path / "sitemap.xml.gz", entries, gz=True)
    assert read_sitemap(path) == entries
    renamed = tmp_path / "sitemap-gz-without-suffix.xml"
    renamed.write_bytes(path.read_bytes())
    assert read_sitemap(renamed) == entries


def test_an_index_is_followed_to_its_plain_and_gzipped_children_under_the_site_url(tmp_path: Path) -> None:
    first, second = pages(2), pages(3, start=2)
    write_urlset(tmp_path / "site" / "sitemaps" / "posts.xml", first)
    write_urlset(tmp_path / "site" / "sitemaps" / "more.xml.gz", second, gz=True)
    index = write_index(
        tmp_path / "site" / "sitemap.xml", [f"{SITE}sitemaps/posts.xml", f"{SITE}sitemaps/more.xml.gz"]
    )
    assert read_sitemap(index, site_url=SITE, root=tmp_path / "site") == first + second


def test_an_index_child_is_also_found_beside_the_index_by_file_name(tmp_path: Path) -> None:
    write_urlset(tmp_path / "child.xml", pages(2))
    index = write_index(tmp_path / "index.xml", ["https://cdn.example.net/maps/child.xml"])
    assert read_sitemap(index) == pages(2)


def test_a_url_listed_twice_is_read_once(tmp_path: Path) -> None:
    path = write_urlset(tmp_path / "sitemap.xml", pages(2) + pages(1))
    assert read_sitemap(path) == pages(2)


def test_a_missing_sitemap_says_to_build_the_site(tmp_path: Path) -> None:
    with pytest.raises(SitemapError, match=r"sitemap\.xml: no sitemap there \(build the site"):
        read_sitemap(tmp_path / "sitemap.xml")


def test_malformed_xml_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text('<?xml version="1.0"?>\n<urlset>\n  <url><loc>https://x/</loc>\n</urlset>\n')
    with pytest.raises(SitemapError, match=r"sitemap\.xml:4: not well-formed XML"):
        read_sitemap(path)


def test_a_truncated_gzip_file_is_reported_not_crashed_on(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml.gz"
    path.write_bytes(gzip.compress(b"<urlset>" + b"<url><loc>https://x/</loc></url>" * 500)[:60])
    with pytest.raises(SitemapError, match=r"sitemap\.xml\.gz"):
        read_sitemap(path)


def test_an_entry_without_loc_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "<url><loc>https://blog.example.com/</loc></url>\n"
        "<url><lastmod>2026-01-01</lastmod></url>\n</urlset>\n"
    )
    with pytest.raises(SitemapError, match=r"sitemap\.xml:3: <url> without a <loc>"):
        read_sitemap(path)


def test_an_index_child_missing_from_the_built_site_is_named(tmp_path: Path) -> None:
    index = write_index(tmp_path / "sitemap.xml", [f"{SITE}gone.xml"])
    with pytest.raises(
        SitemapError, match=r"sitemap\.xml:3: child sitemap https://blog\.example\.com/gone\.xml"
    ):
        read_sitemap(index, site_url=SITE)


def test_another_root_element_is_not_taken_for_a_sitemap(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text("<html><body/></html>")
    with pytest.raises(SitemapError, match=r"expected <urlset> or <sitemapindex>, got <html>"):
        read_sitemap(path)
