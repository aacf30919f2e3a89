"""What the snippets plugin, the seo plugin and the `blog` commands agree on without importing each other."""

from __future__ import annotations

#: What `blog new` writes for the author to replace, by the site's language (its primary subtag; other
#: languages get English); the audit reports any of them wherever one is left in a page.
PLACEHOLDERS = {"zh": "待填写", "en": "TO FILL IN"}
PLACEHOLDER = PLACEHOLDERS["zh"]


def wording(language: str) -> str:
    """The key of the words perfblog writes for a site in ``language`` (a BCP 47 tag): "zh" or "en"."""
    return "zh" if language.lower().split("-")[0] == "zh" else "en"

#: Default folders, relative to the folder of mkdocs.yml (the snippets plugin's options override them).
SNIPPETS_DIR = "snippets"
RESULTS_DIR = "snippets/_results"
#: Suffixes of snippet files (jupytext text formats and notebooks); files starting with `_` are helpers.
SNIPPET_SUFFIXES = (".py", ".md", ".ipynb")
#: Local state of `blog` commands (submission state), never published, git-ignored.
STATE_DIR = ".blog"

#: The snippets plugin's name in mkdocs.yml, whose options `snippets_dir` and `results_dir` say where
#: snippets and their results live for every command and the seo plugin.
SNIPPETS_PLUGIN = "snippets"
#: Key of ``page.meta`` under which the snippets plugin lists the stems of the snippets a page embeds,
#: in the order first embedded; the seo plugin dates a page by their history.
EMBEDS_META = "perfblog_snippets"
