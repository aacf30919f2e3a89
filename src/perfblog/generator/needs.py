"""What the snippets plugin and `blog run` need beyond the seo plugin: the `snippets` extra.

A blog that only wants the seo plugin (`pip install perfblog`) gets no Jupyter kernel, jupytext, HTML
sanitizer or MathJax copy; the snippets plugin then stops its build with one line naming the extra,
instead of a traceback from the first import that fails.
"""

from __future__ import annotations

from importlib.util import find_spec

from perfblog.generator.errors import GeneratorError

#: The distributions of pyproject.toml's `snippets` extra, each with the module it is imported as.
SNIPPETS_EXTRA = {
    "jupytext": "jupytext",  # snippet files read as notebooks; the downloads
    "nbclient": "nbclient",  # the kernel's client
    "ipykernel": "ipykernel",  # the kernel
    "psutil": "psutil",  # the kernel's memory, watched while it runs
    "nh3": "nh3",  # the sanitizer of what results display
    "django-static-mathjax": "mathjax",  # MathJax, copied into the site for outputs with maths
}


class ExtraMissing(GeneratorError):
    """A package of the snippets extra is not installed."""


def require_snippets() -> None:
    """Raise ``ExtraMissing`` naming the extra and the missing packages, when any is missing. A package is
    looked for, not imported (a kernel's import costs a second)."""
    missing = [dist for dist, module in SNIPPETS_EXTRA.items() if not _found(module)]
    if missing:
        raise ExtraMissing(f"snippets: needs the snippets extra, pip install 'perfblog[snippets]' "
                           f"(missing: {', '.join(missing)})")


def _found(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it; a module half imported
        return False
