"""The baseline: today's findings, accepted, so that `--strict` fails only on new ones (as linters do).

`blog seo baseline` writes every finding of a build to `seo-baseline.json` beside mkdocs.yml (or
`seo_baseline`). A finding is known by its identity: its rule, its page and its message with every
number taken out, so a page that grows by a paragraph (a word count, a size, a line) keeps its findings
known. Identities are counted: a page with three images without alt text, baselined, fails again when
a fourth is added. The file is sorted JSON, one identity per line, to review in a diff.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from perfblog.core.fsio import atomic_write, read_json
from perfblog.seo.errors import ConfigError
from perfblog.seo.registry import Finding

#: The default file, beside mkdocs.yml (`seo_baseline` moves it).
FILE = "seo-baseline.json"
VERSION = 1
_MAX_BYTES = 64 << 20
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

Identity = tuple[str, str, str]  # (rule, page, key)


def identity(finding: Finding) -> Identity:
    """What a finding is known by across builds: rule, page, and its English message without numbers."""
    return finding.rule, finding.page, " ".join(_NUMBER.sub("#", finding.message).split())


@dataclass(frozen=True)
class Baseline:
    """The accepted findings, each identity with how many times it was found."""

    known: Counter[Identity]

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> Baseline:
        return cls(Counter(map(identity, findings)))

    @classmethod
    def load(cls, path: Path) -> Baseline | None:
        """The baseline at ``path``; None when there is none. A file that is not one is a ConfigError."""
        if not path.is_file():
            return None
        try:
            data = read_json(path, limit=_MAX_BYTES)
            entries = data["findings"] if isinstance(data, dict) and data.get("version") == VERSION else None
            known = Counter({(e["rule"], e["page"], e["key"]): int(e.get("count", 1)) for e in entries})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}: not a baseline of `blog seo baseline` ({exc}); write it "
                              f"again") from exc
        return cls(known)

    def save(self, path: Path) -> None:
        entries = [{"rule": r, "page": p, "key": k, **({"count": n} if n > 1 else {})}
                   for (r, p, k), n in sorted(self.known.items())]
        lines = ",\n".join("    " + json.dumps(e, ensure_ascii=False) for e in entries)
        text = f'{{\n  "version": {VERSION},\n  "findings": [\n{lines}\n  ]\n}}\n' if entries else (
            f'{{\n  "version": {VERSION},\n  "findings": []\n}}\n')
        atomic_write(path, text.encode("utf-8"))

    def new(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings beyond what the baseline knows (of an identity found n times, all past the n-th)."""
        left = Counter(self.known)
        fresh = []
        for finding in findings:
            key = identity(finding)
            if left[key] > 0:
                left[key] -= 1
            else:
                fresh.append(finding)
        return fresh
