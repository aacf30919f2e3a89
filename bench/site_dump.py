"""Everything the seo plugin decides about a site, as JSON: to show a change of speed changes none of it.

Builds the site of a mkdocs.yml into a temporary folder (`mkdocs build -v`, so the audit's findings
are logged) and dumps, sorted:

- ``build_findings``: the findings the build's own audit logged;
- ``audit``: what `blog seo audit` finds in the built folder;
- ``sitemap``: each `<url>` (loc, lastmod, hreflang alternates);
- ``heads``: every element of every page's `<head>`, serialized;
- ``pages``: the SHA-256 of every built HTML page (nothing else changed either).

Run it with the code before and after a change, on the same checkout (so git dates every page the
same way), and diff the two files::

    PYTHONPATH=OLD_CHECKOUT/src .venv/bin/python bench/site_dump.py before.json
    .venv/bin/python bench/site_dump.py after.json
    diff before.json after.json && echo identical
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import lxml.html
from lxml import etree

from perfblog.seo.audit import audit_site

_SEO_LINE = re.compile(r"(SEO (?:error|warning|info) .*)$")
_SITEMAP_NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}


def build(config: Path, site: Path) -> list[str]:
    """Build into `site`; the SEO lines of the log."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-v", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, timeout=900, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"the build failed:\n{done.stderr[-4000:]}")
    return sorted(m.group(1) for line in done.stderr.splitlines() if (m := _SEO_LINE.search(line)))


def sitemap(site: Path) -> list[dict]:
    """Every <url> of every sitemap file."""
    entries = []
    for path in sorted(site.glob("sitemap*.xml")):
        root = etree.parse(str(path)).getroot()
        for url in root.iterfind("s:url", _SITEMAP_NS):
            entries.append({
                "loc": url.findtext("s:loc", namespaces=_SITEMAP_NS),
                "lastmod": url.findtext("s:lastmod", namespaces=_SITEMAP_NS),
                "alternates": [(x.get("hreflang"), x.get("href"))
                               for x in url.iterfind("x:link", _SITEMAP_NS)],
            })  # fmt: skip
    return sorted(entries, key=lambda e: e["loc"])


def heads(site: Path) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each page's head elements, and the hash of each page."""
    found, digests = {}, {}
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        data = path.read_bytes()
        digests[rel] = hashlib.sha256(data).hexdigest()
        head = lxml.html.document_fromstring(data.decode("utf-8")).find("head")
        if head is not None:
            found[rel] = [etree.tostring(el, encoding="unicode", with_tail=False) for el in head]
    return found, digests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the JSON file to write")
    parser.add_argument("-f", "--config", type=Path, default=Path("mkdocs.yml"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        logged = build(args.config.resolve(), site)
        report = audit_site(site)
        page_heads, digests = heads(site)
        dump = {
            "build_findings": logged,
            "audit": sorted(json.dumps(f.as_dict(), ensure_ascii=False, sort_keys=True)
                            for f in report.findings),
            "sitemap": sitemap(site),
            "heads": page_heads,
            "pages": digests,
        }
    text = json.dumps(dump, ensure_ascii=False, indent=1, sort_keys=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"{args.out}: {len(digests)} pages, {len(dump['sitemap'])} sitemap entries, "
          f"{len(logged)} findings logged by the build, {len(dump['audit'])} by the audit")


if __name__ == "__main__":
    main()
