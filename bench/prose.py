"""Real Chinese technical prose for generated benchmark posts: the sentences of this repository's posts."""

from __future__ import annotations

import re
from pathlib import Path

from perfblog.seo import text

ROOT = Path(__file__).resolve().parents[1]


def sentences() -> list[str]:
    """The prose sentences of the repository's Chinese posts, embeds, code and the sentences that depend on
    results (`<% if has_result(...) %>` blocks, which the claims lint refuses outside one) removed."""
    found = []
    for path in sorted((ROOT / "posts" / "posts").glob("*.md")):
        source = path.read_text(encoding="utf-8")
        source = re.sub(r"<%-?\s*if\b.*?<%-?\s*endif\s*-?%>", " ", source, flags=re.S)
        body = re.sub(r"```.*?```|<%.*?%>|^---.*?^---", " ", source, flags=re.S | re.M)
        body = re.sub(r"\[([^\]]*)\]\((?!https?:)[^)]*\)", r"\1", body)  # links to this site's posts
        found += [s.strip() + "。" for s in re.split(r"[。！？\n]", body)
                  if text.is_chinese(s) and len(s) > 12]
    return found
