"""What a result may put on a page: one allow-list, the sanitizer that applies it, and inert text.

Results are data, never markup. A result file is committed and rarely read in review, so whatever it
holds (a value, a table cell, a traceback, a Markdown or HTML display, an SVG) must not reach the page as
an event handler, a ``javascript:`` URL, an attribute or raw HTML outside this allow-list.

Two tools, used by every embed:

``text(s)``
    Plain text made inert for Markdown *and* HTML: every ASCII punctuation character becomes a numeric
    character reference, newlines too, control characters go. A browser shows exactly the original
    text; Markdown (with attr_list, md_in_html or any extension built on ASCII punctuation) finds no
    syntax in it, whether the embed sits at the top level, in a list item or in an admonition.
``Sanitizer.html(fragment)``
    HTML (a snippet's ``text/html`` display, or a ``text/markdown`` display after rendering) cleaned by
    nh3 (Ammonia) against the allow-list below, then written out on one line with all its text and
    attribute values inert, so the post's Markdown passes it through unchanged. ``data:`` images become
    content-addressed files of the site (``Media``); remote images are dropped; inline CSS keeps only
    ``STYLE_PROPERTIES`` and never ``url()``.

``svg(data)`` cleans an SVG file a snippet displayed before the site publishes it: an element and
attribute allow-list, no scripts, handlers, foreign content or external references.

The allow-list is this module's constants; the rich-outputs work extends them here, nowhere else.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import string
from collections.abc import Callable
from html.parser import HTMLParser

from perfblog.core import timebound
from perfblog.generator.errors import EmbedError

# --- the allow-list ------------------------------------------------------------------------------------

#: Elements a result's HTML may keep (anything else is unwrapped: its text stays, the tag goes).
TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
})  # fmt: skip
#: Elements removed together with everything inside them.
DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "template", "noscript", "iframe", "object", "embed", "textarea", "select", "button",
    "svg", "math", "title", "frame", "frameset", "noframes", "applet", "audio", "video", "canvas", "form",
})  # fmt: skip
#: Attributes kept, per element ("*": on every element). No event handler is ever listed, nor ``class``:
#: classes come from ``CLASSES``.
ATTRIBUTES: dict[str, frozenset[str]] = {
    "*": frozenset({"title", "lang", "dir", "style", "id"}),
    "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "td": frozenset({"colspan", "rowspan", "align", "valign"}),
    "th": frozenset({"colspan", "rowspan", "align", "valign", "scope"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
    "ol": frozenset({"start", "reversed"}),
    "details": frozenset({"open"}),
    "abbr": frozenset(),
}
#: The classes of a pandas DataFrame's or Styler's cells (levels, rows and columns numbered from 0), which
#: nothing on the site acts on; numbers past these lose their class, not their cell.
_PANDAS_CELL = frozenset({
    "blank", "index_name", "col_heading", "row_heading", "data", "row_trim", "col_trim",
    *(f"level{n}" for n in range(16)), *(f"row{n}" for n in range(1000)), *(f"col{n}" for n in range(1000)),
})  # fmt: skip
#: Classes kept, per element; any other class goes. Client code acts on classes (MathJax typesets
#: ``arithmatex``, Material and mermaid have theirs), so a result chooses none of its own.
CLASSES: dict[str, frozenset[str]] = {"th": _PANDAS_CELL, "td": _PANDAS_CELL}
#: The only CSS properties an inline ``style`` keeps (none of them takes ``url()``).
STYLE_PROPERTIES = frozenset({
    "color", "background-color", "font-weight", "font-style", "font-family", "font-size", "text-align",
    "text-decoration", "vertical-align", "white-space", "border-color", "border-style", "border-width",
    "padding", "padding-left", "padding-right", "padding-top", "padding-bottom", "width", "min-width",
    "max-width", "opacity",
})  # fmt: skip
#: Link targets a result may point at; an ``<img>`` keeps only the site's own (data: images, made files).
URL_SCHEMES = frozenset({"http", "https", "mailto"})
#: ``data:`` image types that become files of the site.
DATA_IMAGES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
#: ``id`` values from results get this prefix, so they cannot clobber the theme's own.
ID_PREFIX = "snippet-"
#: What links out of a result say to the browser and to search engines.
LINK_REL = "nofollow noopener noreferrer"

# --- inert text ----------------------------------------------------------------------------------------

_INERT = {ord(c): f"&#{ord(c)};" for c in string.punctuation}
_INERT.update({ord("\n"): "&#10;", ord("\t"): "&#9;"})
_INERT.update({c: None for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)})
_INERT[ord("\r")] = None
_INERT.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))  # a lone surrogate cannot be written as UTF-8


def text(value: object) -> str:
    """``value`` as text that Markdown leaves alone and a browser shows as written (one line)."""
    return str(value).translate(_INERT)


#: The references ``text`` made that HTML itself never needs (all but < > & " '), for ``readable``.
_NEEDLESS_CODES = "|".join(str(ord(c)) for c in string.punctuation + "\n\t" if c not in "<>&\"'")
_NEEDLESS = re.compile(f"&#({_NEEDLESS_CODES});")


def readable(html: str) -> str:
    """Rendered HTML with the references ``text`` made for Markdown's sake turned back into characters.

    Only after Markdown has run: then ``*`` or ``{`` are plain characters of HTML, and the page's source
    (and anything reading it) sees ``3.33``, not ``3&#46;33``.
    """
    return _NEEDLESS.sub(lambda m: chr(int(m.group(1))), html)


# --- HTML ----------------------------------------------------------------------------------------------


class Media:
    """The images a page's sanitized HTML refers to: content-addressed files the build writes."""

    FOLDER = "_snippets/_media"  # in the site

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def add(self, data_url: str) -> str | None:
        """The file name of a ``data:`` image (kept for writing), None when it is not a raster image."""
        head, sep, payload = data_url.partition(",")
        mime, _, encoding = head.removeprefix("data:").partition(";")
        ext = DATA_IMAGES.get(mime.strip().lower())
        if not sep or ext is None or encoding.strip().lower() != "base64":
            return None
        try:
            blob = base64.b64decode(payload, validate=False)
        except (binascii.Error, ValueError):
            return None
        name = f"{hashlib.sha256(blob).hexdigest()[:16]}.{ext}"
        self.files[name] = blob
        return name


#: (file name in ``Media.FOLDER``) -> its URL from the page being rendered.
MediaUrl = Callable[[str], str]


class Sanitizer:
    """nh3 with this module's allow-list; ``data:`` images go to ``media``, addressed by ``media_url``."""

    def __init__(self, media: Media | None = None, media_url: MediaUrl | None = None) -> None:
        self.media = media or Media()
        self.media_url = media_url or (lambda name: f"{Media.FOLDER}/{name}")
        import nh3  # of the snippets extra: a blog with only the seo plugin imports this module, not nh3

        self._cleaner = nh3.Cleaner(
            tags=set(TAGS), clean_content_tags=set(DROPPED_WITH_CONTENT),
            attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
            allowed_classes={tag: set(names) for tag, names in CLASSES.items()},
            attribute_filter=self._attribute, url_schemes={*URL_SCHEMES, "data"}, link_rel=LINK_REL,
            filter_style_properties=set(STYLE_PROPERTIES), strip_comments=True, id_prefix=ID_PREFIX,
        )  # fmt: skip

    def _attribute(self, tag: str, name: str, value: str) -> str | None:
        """Per attribute, after nh3's own checks: images only from data: (made files), no url() in CSS,
        classes of ``CLASSES`` only (nh3 keeps those too; this also drops an attribute left empty)."""
        if name == "class":
            kept = [c for c in value.split() if c in CLASSES.get(tag, ())]
            return " ".join(kept) or None
        if name == "style":
            return None if "url(" in value.lower() or "\\" in value else value
        if name == "src":
            if tag == "img" and value.lower().startswith("data:"):
                made = self.media.add(value)
                return self.media_url(made) if made else None
            return None  # remote or relative sources: the page would load something the result chose
        if name == "href":  # links out of the site, or within the display; nothing relative to the page
            return value if value.lower().startswith(("http://", "https://", "mailto:", "#")) else None
        return value

    def html(self, fragment: str) -> str:
        """``fragment`` cleaned, on one line, its text and attribute values inert (see ``text``)."""
        return inert_html(self._cleaner.clean(fragment))

    def markdown(self, source: str, seconds: float = timebound.DEFAULT_SECONDS) -> str:
        """A ``text/markdown`` display rendered to HTML within ``seconds`` (an EmbedError names the post
        past them: Markdown can hang Python-Markdown), then cleaned like an HTML display."""
        import markdown

        with timebound.bounded(seconds, "converting a text/markdown output", EmbedError):
            rendered = markdown.markdown(source, extensions=["tables", "fenced_code", "sane_lists"])
        return self.html(rendered)


class _Inert(HTMLParser):
    """Re-write clean, well-formed HTML (nh3's output) with inert text and attribute values."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img" and not dict(attrs).get("src"):
            return  # a remote image, its source removed: nothing left to show
        kept = "".join(f' {name}="{text(value or "")}"' for name, value in attrs)
        self.out.append(f"<{tag}{kept}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.out.append(text(data))


def inert_html(clean: str) -> str:
    """Already-clean HTML on one line with every text and attribute value inert."""
    writer = _Inert()
    writer.feed(clean)
    writer.close()
    return "".join(writer.out)


# --- SVG -----------------------------------------------------------------------------------------------

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
#: Static SVG: shapes, text, paint servers, clipping, reuse. No script, animation or foreign content.
SVG_ELEMENTS = frozenset({
    "svg", "g", "defs", "symbol", "use", "title", "desc", "metadata", "path", "rect", "circle", "ellipse",
    "line", "polyline", "polygon", "text", "tspan", "textPath", "linearGradient", "radialGradient", "stop",
    "pattern", "clipPath", "mask", "marker", "image", "style", "switch",
})  # fmt: skip
#: Attributes whose value may refer to something: only ``#fragment`` references (or a data: raster image).
_SVG_REFERENCES = frozenset({"href", f"{{{_XLINK_NS}}}href"})
_SVG_URL = re.compile(r"url\(\s*(['\"]?)(?!#)", re.IGNORECASE)
_CSS_DANGER = re.compile(r"@import|expression\s*\(|javascript:|\\", re.IGNORECASE)


def svg(data: bytes) -> bytes | None:
    """An SVG file with only static drawing left; None when it is not an SVG document at all."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None
    if root.tag != f"{{{_SVG_NS}}}svg":
        return None
    for element in list(root.iter()):
        if element is not root and element.getparent() is None:
            continue  # inside an element already removed
        tag = element.tag if isinstance(element.tag, str) else ""
        namespace, _, local = tag.rpartition("}")
        if namespace.lstrip("{") != _SVG_NS or local not in SVG_ELEMENTS:
            if element is root:
                return None
            element.getparent().remove(element)
            continue
        if local == "style":  # the CSS whole: text after a child element counts too, so children go
            css = "".join(element.itertext())
            for child in list(element):
                element.remove(child)
            element.text = "" if _CSS_DANGER.search(css) or _SVG_URL.search(css) else css
        for name, value in list(element.attrib.items()):
            if not _svg_attribute_ok(name, value, local):
                del element.attrib[name]
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


def _svg_attribute_ok(name: str, value: str, element: str) -> bool:
    local = name.rpartition("}")[2].lower()
    if local.startswith("on") or "javascript:" in re.sub(r"\s", "", value).lower():
        return False
    if name in _SVG_REFERENCES:
        return value.startswith("#") or (element == "image" and bool(re.match(
            r"data:image/(png|jpeg|gif|webp);base64,", value, re.IGNORECASE)))
    if name.startswith("{") and not name.startswith("{http://www.w3.org/XML/1998/namespace}"):
        return False  # attributes of other namespaces (xlink:arcrole, ev:event, …)
    return not (_SVG_URL.search(value) or _CSS_DANGER.search(value))
