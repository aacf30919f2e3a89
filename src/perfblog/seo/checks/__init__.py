"""The per-page checks of the audit, one module a topic, and the order a page's findings come in.

Each check is registered with `rules.RULES` and the rules it reports (`Registry.check`); `ORDER` says
in which order they run within their scope (every page, then indexable pages, then posts): the order
of a page's findings in the audit's JSON report, the terminal table and the build's log.
"""

from __future__ import annotations

from collections.abc import Iterator

from perfblog.seo.checks import head, images, keywords, links, outline, performance, wording
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import RULES

ORDER = (
    # every page
    wording.check_title, head.check_lang, images.check_images, links.check_anchors, head.check_jsonld,
    performance.check_render_blocking,
    # indexable pages
    wording.check_placeholders, wording.check_description, head.check_canonical, outline.check_structure,
    performance.check_dom_size, outline.check_headings, head.check_open_graph, head.check_hreflang,
    head.check_lang_matches_text, head.check_bot_meta,
    # posts
    keywords.check_keywords, links.check_links, wording.check_length,
)
RULES.order(ORDER)


def page_findings(p: PageFacts) -> Iterator[Finding]:
    """Every per-page rule whose scope covers this page: noindex pages get only every-page rules."""
    return RULES.page_findings(p, noindex=p.noindex, post=p.is_post)
