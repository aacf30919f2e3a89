"""The site's math: MathJax, served from the site itself (no CDN, which readers in mainland China may not
reach), typesetting ``.arithmatex`` elements, on the pages that have any.

Math reaches a page two ways, both as ``.arithmatex`` elements: from the post's own Markdown through
pymdownx.arithmatex in ``generic`` mode (``$…$``, ``$$…$$``), and from a snippet's ``text/latex`` output
(``outputs.py``). A page with math gets two deferred scripts: the configuration and MathJax's
``tex-chtml`` component; the component, the TeX extensions it loads on demand and its web fonts are
copied into the site from the ``mathjax`` package (django-static-mathjax, MathJax 3 with no Django
dependency) when a built page needed them.

Math is typeset from text a result file chose (a ``text/latex`` output), so MathJax runs in its safe
configuration (see docs/security.md): MathJax's ``ui/safe`` component filters every attribute of the typeset
math (links only to ``http(s):``, ``mailto:`` or ``#fragment``, with the tab or newline a browser drops
removed before the check; classes and ids only MathJax's own ``mjx-`` ones; a few inline CSS properties,
none that positions or moves an element), and the TeX ``html`` extension (``\\href``, ``\\style``,
``\\class``, ``\\cssId``) is off for every formula: neither autoloaded nor allowed to ``\\require``. It is
off for the post's own math too, because a page's formulas share one table of TeX macros: a ``\\def`` in a
result's formula would otherwise reach the ``html`` macros through the post's formulas that follow.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

#: Where MathJax goes in the site.
FOLDER = "_snippets/mathjax"
#: What a page with math needs of MathJax's ``es5`` folder: the component, its fonts, its extensions, the
#: safe component.
_PARTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui/safe.js")
#: MathJax's configuration: only ``.arithmatex`` elements, the delimiters arithmatex writes, no menu (its
#: accessibility extensions would load files this site does not publish); the safe component and its
#: options, no TeX ``html`` extension, and a stricter link check than the safe component's own (which
#: reads ``java<TAB>script:`` as a relative URL that the browser then runs).
CONFIG = """window.MathJax = {
  loader: {load: ["ui/safe"]},
  tex: {inlineMath: [["\\\\(", "\\\\)"]], displayMath: [["\\\\[", "\\\\]"]], processEscapes: true,
        processEnvironments: true, autoload: {html: []}, require: {allow: {html: false}}},
  options: {
    ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex", enableMenu: false,
    safeOptions: {
      allow: {URLs: "safe", classes: "safe", cssIDs: "safe", styles: "safe"},
      safeProtocols: {http: true, https: true, mailto: true, file: false, javascript: false, data: false},
      safeStyles: {margin: false}
    }
  },
  startup: {
    ready() {
      const methods = ((MathJax._.ui.safe || {}).SafeMethods || {}).SafeMethods;
      if (!methods) MathJax.config.options.safeOptions.allow.URLs = "none";  // another MathJax: no links
      else methods.filterURL = (safe, url) => {
        const clean = String(url).replace(/[\\t\\n\\r]/g, "").replace(/^[\\x00-\\x20]+|[\\x00-\\x20]+$/g, "");
        if (safe.allow.URLs === "all") return clean;
        return safe.allow.URLs === "safe" && /^(#|(https?|mailto):)/i.test(clean) ? clean : null;
      };
      MathJax.startup.defaultReady();
    }
  }
};
"""
_MARK = "arithmatex"


def needs(html: str) -> bool:
    """Whether a page's HTML has math for MathJax to typeset."""
    return _MARK in html


#: A MathJax or KaTeX the blog loads itself: a script by that name, or MathJax's configuration object.
_LOADED = re.compile(r"mathjax|katex", re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b[^>]*\bsrc\s*=\s*[\"']?[^\"'>\s]*(?:mathjax|katex)|window\.MathJax\s*=",
                     re.IGNORECASE)


def loaded_by(config: Any) -> bool:
    """Whether the blog typesets math itself: its `extra_javascript` names a MathJax or KaTeX, or a
    template of its `custom_dir` loads one. Then the site's MathJax is never added beside it."""
    scripts = [str(getattr(entry, "path", entry)) for entry in config.extra_javascript]
    if any(_LOADED.search(script) for script in scripts):
        return True
    custom = config.theme.custom_dir
    if not custom or not Path(custom).is_dir():
        return False
    return any(_SCRIPT.search(path.read_text(encoding="utf-8", errors="replace"))
               for path in Path(custom).rglob("*.html") if path.is_file())


def loaded_in(html: str) -> bool:
    """Whether a page's own HTML loads a MathJax or KaTeX (a script tag the post wrote)."""
    return _SCRIPT.search(html) is not None


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
