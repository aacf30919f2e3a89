"""The MIME types a display may hold, what a post shows for each, and the order a post prefers them in.

A kernel sends one display as a bundle of representations (a figure as ``image/png`` and
``text/plain``, a DataFrame as ``text/html`` and ``text/plain``). The runner keeps every type listed
here (images as files named by their content's hash) and drops the rest (widgets and JavaScript need a
live kernel or scripts a static page does not run). A post shows the first type of ``MIMES`` a display
has. This is MyST-NB's HTML order with one change: images come before HTML, because a static page
removes HTML's scripts, and a library that offers both (a chart) offers the image for pages like this.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mime:
    """One kept MIME type: how it shows (for the reference), and for an image its file extension."""

    name: str
    shows: str
    ext: str = ""  # an image, stored as a file with this extension
    base64: bool = False  # the kernel sends it base64-encoded


MIMES: tuple[Mime, ...] = (
    Mime("image/svg+xml", "an image file (`<img>`: scripts in it never run) at the size the kernel gives",
         "svg"),
    Mime("image/png", "an image file at the size the kernel gives (`width`/`height` metadata: a retina "
                      "figure shows at half its pixel size, `Image(width=…)` as asked)", "png", True),
    Mime("image/jpeg", "as `image/png`", "jpg", True),
    Mime("image/gif", "as `image/png`", "gif", True),
    Mime("text/html", "sanitized HTML (the allow-list of the security module): unsafe elements removed "
                      "with their content, links kept, `data:` images stored as files, remote images "
                      "dropped; a table (a DataFrame) gets the theme's table style and scrolls when wide; "
                      "a pandas Styler keeps its colours through allowed CSS properties on its cells"),
    Mime("text/markdown", "Markdown rendered to HTML, then sanitized like `text/html`"),
    Mime("text/latex", "display math, typeset by the site's MathJax (served from the site, no CDN)"),
    Mime("application/json", "highlighted, indented JSON"),
    Mime("text/plain", "terminal text: colours, collapsed when long (the fallback: every display has it)"),
)

#: MIME type name -> its entry.
BY_NAME = {m.name: m for m in MIMES}
#: The order a post prefers a display's types in.
PRIORITY = tuple(m.name for m in MIMES)
