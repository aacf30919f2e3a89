"""The site's math: MathJax, served from the site itself (no CDN, which readers in mainland China may not
reach), typesetting ``.arithmatex`` elements, on the pages that have any.

Math reaches a page two ways, both as ``.arithmatex`` elements: from the post's own Markdown through
pymdownx.arithmatex in ``generic`` mode (``$…$``, ``$$…$$``), and from a snippet's ``text/latex`` output
(``outputs.py``). A page with math gets two deferred scripts: the configuration and MathJax's
``tex-chtml`` component; the component, the TeX extensions it loads on demand and its web fonts are
copied into the site from the ``mathjax`` package (django-static-mathjax, MathJax 3 with no Django
dependency) when a built page needed them.
"""

from __future__ import annotations

import posixpath
import shutil
from importlib import resources
from pathlib import Path

#: Where MathJax goes in the site.
FOLDER = "_snippets/mathjax"
#: What a page with math needs of MathJax's ``es5`` folder: the component, its fonts, its extensions.
_PARTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions")
#: MathJax's configuration: only ``.arithmatex`` elements, the delimiters arithmatex writes, no menu (its
#: accessibility extensions would load files this site does not publish).
CONFIG = """window.MathJax = {
  tex: {inlineMath: [["\\\\(", "\\\\)"]], displayMath: [["\\\\[", "\\\\]"]], processEscapes: true,
        processEnvironments: true},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex", enableMenu: false}
};
"""
_MARK = "arithmatex"


def needs(html: str) -> bool:
    """Whether a page's HTML has math for MathJax to typeset."""
    return _MARK in html


def scripts(page_url: str) -> str:
    """The two script elements a page with math ends with, their URLs relative to the page."""
    base = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    root = posixpath.relpath(FOLDER, base.rstrip("/") or ".")
    return (f'<script defer src="{root}/config.js"></script>'
            f'<script defer src="{root}/tex-chtml.js"></script>')


def publish(site_dir: Path) -> None:
    """Copy MathJax and its configuration into the site."""
    source = resources.files("mathjax") / "static" / "mathjax" / "es5"
    target = site_dir / FOLDER
    for part in _PARTS:
        path = Path(str(source / part))
        if path.is_dir():
            shutil.copytree(path, target / part, dirs_exist_ok=True)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / part)
    (target / "config.js").write_text(CONFIG, encoding="utf-8")
