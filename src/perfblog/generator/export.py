"""`blog export POST --to juejin|zhihu|csdn|markdown`: a built post as self-contained Markdown to syndicate.

Chinese technical writers earn links back by cross-posting to 掘金, 知乎 and CSDN with a line naming
the original. The export renders the post's embeds as plain Markdown from the same stored results the
build showed (code and outputs as fences, tables as Markdown tables, values as text, charts as the PNGs
the build drew), makes every relative link absolute on the site, and adds the platform's "原文链接"
line. The targets differ only in their `Target` entry: where that line goes and how it reads, and which
front matter survives (the platforms' editors take none; plain Markdown keeps a few known keys).

The post must be built and unchanged since (the build's report holds each page's URL and source hash),
and published: a draft is refused. The same post, results and site give the same bytes. Each export is
recorded (URL, target, date, file) in `.blog/export-state.json`; `blog export --list` shows them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import posixpath
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import yaml
from mkdocs.utils.meta import get_data

from perfblog.core import state
from perfblog.core.cli import add_project_option, load_project
from perfblog.core.conventions import SNIPPETS_PLUGIN
from perfblog.core.escape import markdown_text as inert
from perfblog.core.project import Project, front_matter_line
from perfblog.core.urls import readable
from perfblog.generator import terminal
from perfblog.generator.build import REPORT, STATE_REPORT
from perfblog.generator.config import settings_of
from perfblog.generator.errors import ExportError
from perfblog.generator.render import embeds, history
from perfblog.generator.render.embeds import Embeds, Resolved
from perfblog.generator.render.render import Renderer
from perfblog.generator.run.engine import Engine
from perfblog.generator.source import hidden
from perfblog.generator.store.content import (
    ChartRecord,
    DisplayOutput,
    ErrorOutput,
    Output,
    StreamOutput,
    TableRecord,
)
from perfblog.generator.store.resolve import Mode
from perfblog.generator.store.versions import VersionOutcome, version_outcomes

STATE_FILE = "export-state.json"  # in the site's state folder (.blog/ beside mkdocs.yml)
STATE_VERSION = 1


@dataclass(frozen=True)
class Target:
    """Where a post is syndicated: the origin line's template (``{title}``, ``{url}``, ``{site}``, and
    ``{link}``: the URL as a reader reads it, linking to ``{url}``) and place, and the front matter the
    platform keeps (none: its editor shows YAML as text)."""

    name: str
    platform: str
    origin: str
    origin_first: bool
    front_matter: tuple[str, ...] = ()


#: The targets, by name; a new platform is one entry.
TARGETS = {t.name: t for t in (
    Target("juejin", "掘金", "> 原文链接：[{title}]({url})", origin_first=True),
    Target("zhihu", "知乎", "原文链接：{link}", origin_first=False),
    Target("csdn", "CSDN", "> 原文链接：{link}", origin_first=True),
    Target("markdown", "Markdown", "原文链接：[{title}]({url})", origin_first=False,
           front_matter=("title", "description", "date", "tags", "categories")),
)}  # fmt: skip


@dataclass(frozen=True)
class Exported:
    """One export: the Markdown, the post's source (relative to mkdocs.yml) and its URL on the site."""

    post: str
    url: str
    target: Target
    text: str


class ExportRenderer(Renderer):
    """The embeds as plain Markdown, images and charts as absolute URLs of the built site."""

    def __init__(self, lookup: embeds.Lookup, site_url: str, site_dir: Path,
                 versions: Callable[[str], tuple[VersionOutcome, ...]] | None = None) -> None:
        super().__init__(lookup, flavor=MarkdownEmbeds, versions=versions)
        self.site_url = site_url
        self.site_dir = site_dir


class MarkdownEmbeds(Embeds):
    """Each embed function as plain Markdown that shows what the site's page shows.

    What a result holds is untrusted, here as on the site: its text is made inert (`sanitize.text`:
    punctuation as character references, which Markdown shows as written and never reads as markup),
    its code and outputs are fenced.
    """

    r: ExportRenderer
    histories = history.MarkdownHistories

    def code(self, snippet: str, cell: str) -> str:
        res = self._get(snippet)
        found = self._code_cell(res, cell)
        shown = hidden.split(found.source, res.snippet.where, found.line + 1)
        fenced = embeds.fence(shown.code, "python")
        if shown.hidden:  # the page folds these lines; a platform without folding shows them after a label
            fenced += f"\n\n{inert(self.words.checks)}\n\n{embeds.fence(shown.hidden, 'python')}"
        return _block(fenced, _footer(res, f"{res.snippet.stem} · {found.key}"))

    def output(self, snippet: str, cell: str) -> str:
        res = self._get(snippet)
        found = self._code_cell(res, cell)
        stored = self._result_cell(res, found.key)
        if stored is None:
            raise ExportError(f"output of {res.snippet.stem} · {found.key}: no stored result to export")
        parts = [self._one(res, out, found.key) for out in stored.outputs]
        return _block("\n\n".join(p for p in parts if p) or "(no output)",
                      _footer(res, f"{res.snippet.stem} · {found.key}"))

    def _one(self, res: Resolved, out: Output, cell: str) -> str:
        if isinstance(out, StreamOutput):
            fenced = embeds.fence(terminal.plain(out.text).rstrip("\n"), "text")  # colour codes dropped
            return f"stderr:\n\n{fenced}" if out.name == "stderr" else fenced
        if isinstance(out, ErrorOutput):  # the page shows this line; its folded traceback stays there
            return embeds.fence(f"{out.ename}: {out.evalue}".rstrip(), "text")
        return self._display(res, out, cell)

    def _display(self, res: Resolved, out: DisplayOutput, cell: str) -> str:
        data = out.data
        for mime in ("image/png", "image/jpeg", "image/gif", "image/svg+xml"):
            if mime in data:
                path = embeds.stored_image(res.snippet.stem, res.status.device_class, data[mime])
                return f"![output of {res.snippet.stem} · {cell}]({self._published(path)})"
        # A result is untrusted: its text view, else its markup's source shown as code, never as markup.
        for mime, lang in (("text/plain", "text"), ("text/markdown", "markdown"), ("text/html", "html")):
            if mime in data:
                return embeds.fence(terminal.plain(data[mime]), lang)
        return ""

    def table(self, snippet: str, name: str, fmt: str = "") -> str:
        res = self._get(snippet)
        rec = self._shown(res, TableRecord, name)
        head = "| " + " | ".join(embeds.cell_text(c, "", inert) for c in rec.columns) + " |"
        rule = "| " + " | ".join("---" for _ in rec.columns) + " |"
        rows = ["| " + " | ".join(embeds.cell_text(v, fmt, inert) for v in row) + " |" for row in rec.rows]
        caption = f"{inert(rec.caption)}\n\n" if rec.caption else ""
        return _block(caption + "\n".join([head, rule, *rows]), _footer(res, f"{res.snippet.stem} · {name}"))

    def chart(self, snippet: str, name: str) -> str:
        res = self._get(snippet)
        rec = self._shown(res, ChartRecord, name)
        png = self._published(embeds.chart_png(res.snippet.stem, res.status.device_class, name))
        image = f"![{inert(rec.alt)}]({png})"
        caption = f"\n\n{inert(rec.title)}" if rec.title else ""
        return _block(image + caption, _footer(res, f"{res.snippet.stem} · {name}"))

    def value(self, snippet: str, name: str, fmt: str = "") -> str:
        res = self._get(snippet)
        rec = self._shown(res, embeds.ValueRecord, name)
        try:
            text = format(rec.value, embeds.checked_format(fmt))
        except (ValueError, TypeError) as exc:
            raise ExportError(f"value '{name}' of snippet '{snippet}' ({rec.value!r}) "
                              f"cannot take format {fmt!r}: {exc}") from exc
        if not isinstance(rec.value, int | float) or isinstance(rec.value, bool):
            text = inert(text)  # a formatted number is digits and signs; recorded text may be anything
        text = f"{text} {inert(rec.unit)}" if rec.unit else text
        return f"{text} (stale)" if res.status.state == "stale" else text

    def verdict(self, snippet: str, name: str, subject: str | None = None, baseline: str | None = None,
                expect: str | None = None) -> str:
        res, rec = self._judged(snippet, name, expect)
        if rec is None:
            raise ExportError(f"verdict {res.snippet.stem} · {name}: no stored result to export")
        text = self._clause(rec, subject, baseline, _label)
        return f"{text} (stale)" if res.status.state == "stale" else text

    def provenance(self, snippet: str) -> str:
        res = self._get(snippet)
        return f"\n{_footer(res, res.snippet.stem)}\n"

    def _shown(self, res: Resolved, kind: type[embeds.R], name: str) -> embeds.R:
        rec = self._record(res, kind, name)
        if rec is None:
            raise ExportError(f"{kind.KIND} {res.snippet.stem} · {name}: no stored result to export")
        return rec

    def _published(self, path: str) -> str:
        """The absolute URL of a file the build wrote into the site; it must be there."""
        if not (self.r.site_dir / path).is_file():
            raise ExportError(f"{self.r.site_dir / path} is not in the built site; run `mkdocs build` "
                              f"(with the snippets plugin's chart_pngs on) before exporting")
        return self.r.site_url + path


def _footer(res: Resolved, what: str) -> str:
    """The provenance line every block embed ends with, as on the page (a stale mark when stale); what
    the result file says (device, CPU, versions) and why it is stale are inert text, never markup."""
    result = res.status.result
    if result is None:
        raise ExportError(f"snippet {res.snippet.stem}: no stored result to export")
    lead = f"{what} · "
    stale = f"stale ({inert(res.status.why)}) · " if res.status.state == "stale" else ""
    return f"*{stale}{lead}{inert(embeds.provenance_line(result))}*"


def _label(text: str) -> str:
    """A verdict's label with its `code` spans as Markdown: the post's, or the names the result recorded
    when the post gives none, so the spans stay code on one line and the rest is inert text."""
    return "".join(f"`{' '.join(part.split())}`" if i % 2 else inert(part)
                   for i, part in enumerate(text.split("`")))


def _block(body: str, foot: str) -> str:
    return f"\n{body}\n\n{foot}\n"


# --- the post -----------------------------------------------------------------------------------------------


#: Characters a glob pattern acts on: a post is named, never matched.
GLOB = frozenset("*?[]")


def find_post(project: Project, name: str) -> Path:
    """Any page of the site by its file stem (``torch-compile-fullgraph``) or its path (as given, or
    relative to mkdocs.yml's folder or to docs_dir); never a pattern. A stem that several pages share
    names the one in the posts folder when only one is there, else it is an error listing them."""
    if GLOB & set(name):
        raise ExportError(f"POST {name!r}: give one page's file stem or path, without any of * ? [ ]")
    layout = project.layout
    given = Path(name)
    if given.suffix == ".md":
        for path in (given, layout.root / given, layout.docs_dir / given):
            if path.is_file():
                return path.resolve()
    stem = given.name.removesuffix(".md")
    found = sorted(p for p in layout.docs_dir.rglob(f"{stem}.md") if p.is_file())
    if len(found) > 1:
        posts = [p for p in found if p.resolve().is_relative_to(layout.posts_dir.resolve())]
        if len(posts) != 1:
            named = ", ".join(p.relative_to(layout.docs_dir).as_posix() for p in found)
            raise ExportError(f"POST {name!r}: {len(found)} pages have that stem ({named}); give its path")
        found = posts
    if not found:
        raise ExportError(f"no page {name!r} in {layout.docs_dir} (give its file stem or path)")
    return found[0]


def _report(project: Project, site_dir: Path) -> dict[str, Any]:
    """The last build's report: in the site, or, for a build that embedded no snippet, in the state folder
    when it describes this site (``build.finish``)."""
    options = project.plugin_config(SNIPPETS_PLUGIN)
    configured = getattr(options, "report_path", "") or ""
    path = project.layout.root / configured if configured else site_dir / REPORT
    kept = project.layout.state_dir / STATE_REPORT
    if not configured and not path.exists() and kept.exists():
        report = _read_report(kept)
        if report.get("site_dir") == str(site_dir.resolve()):
            return report
    return _read_report(path)


def _read_report(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExportError(f"{path}: no build report; run `mkdocs build` before exporting") from None
    except (OSError, ValueError) as exc:
        raise ExportError(f"{path}: cannot read the build report: {exc}") from exc


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.M | re.S)
_INLINE_LINK = re.compile(r"(\]\(\s*<?)([^)\s>]+)")
_REFERENCE = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*<?)(\S+?)(>?)(?=\s|$)", re.M)
_COMMENT = re.compile(r"^<!--.*?-->\n?", re.M | re.S)


def outside_code(markdown: str, change: Callable[[str], str]) -> str:
    """``markdown`` with ``change`` applied to everything but fenced code blocks, which stay as written."""
    pieces, at = [], 0
    for fence in _FENCE.finditer(markdown):
        pieces.append(change(markdown[at:fence.start()]))
        pieces.append(fence.group(0))
        at = fence.end()
    pieces.append(change(markdown[at:]))
    return "".join(pieces)


def absolute_links(markdown: str, resolve: Callable[[str], str]) -> str:
    """Every link and image target outside code blocks, through ``resolve``."""
    return outside_code(markdown, lambda text: _links_in(text, resolve))


def _tidy(text: str) -> str:
    """No trailing spaces, no run of more than one blank line."""
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", text))


def _links_in(text: str, resolve: Callable[[str], str]) -> str:
    text = _INLINE_LINK.sub(lambda m: m.group(1) + resolve(m.group(2)), text)
    return _REFERENCE.sub(lambda m: m.group(1) + resolve(m.group(2)) + m.group(3), text)


def _resolver(src_uri: str, page_url: str, site_url: str, files: Mapping[str, str]) -> Callable[[str], str]:
    """Link targets as the built site has them: a page or file of the site by its URL, else absolute."""

    def resolve(target: str) -> str:
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            return target
        if not parts.path:
            return urljoin(page_url, target)  # #fragment: the post itself
        wanted = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), parts.path))
        published = files.get(wanted.lstrip("/"))
        if published is None:
            return urljoin(page_url, target)
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        return urljoin(site_url, published) + fragment

    return resolve


def export_post(project: Project, name: str, target: Target, site_dir: Path | None = None) -> Exported:
    """Render the built post ``name`` for ``target``; refuses drafts and posts changed since the build."""
    if not project.site_url:
        raise ExportError(f"{project.config_file}: no site_url; the export's links and 原文链接 need it")
    site_dir = site_dir or project.layout.site_dir
    source = find_post(project, name)
    root = project.layout.root
    post = source.relative_to(root).as_posix() if source.is_relative_to(root) else str(source)
    raw = source.read_bytes()
    markdown, meta = get_data(raw.decode("utf-8-sig"))
    if meta.get("draft"):
        raise ExportError(f"{post}{front_matter_line(source, 'draft')}: a draft is not exported; publish it "
                          f"(remove draft: true) and build the site first")
    report = _report(project, site_dir)
    built = (report.get("pages") or {}).get(post)
    if built is None:
        raise ExportError(f"{post}: not in the last build of {site_dir}; run `mkdocs build` first")
    if built.get("sha256") != hashlib.sha256(raw).hexdigest():
        raise ExportError(f"{post}: changed since the last build; run `mkdocs build` before exporting")
    url = project.site_url + built["url"]
    engine = Engine(replace(settings_of(project.plugin_config(SNIPPETS_PLUGIN), project.layout),
                            mode=Mode.FROZEN))
    snippets: dict[str, Resolved] = {}

    def lookup(stem: str, _post: str) -> Resolved:
        if stem not in snippets:
            snippet = engine.snippet(stem)
            snippets[stem] = Resolved(snippet, engine.shown(snippet))
        return snippets[stem]

    records = engine.settings.results_dir
    body = ExportRenderer(lookup, project.site_url, site_dir,
                          lambda stem: version_outcomes(records, stem)).render(markdown, post)
    src_uri = source.relative_to(project.layout.docs_dir).as_posix()
    resolve = _resolver(src_uri, url, project.site_url, report.get("files") or {})
    body = absolute_links(_COMMENT.sub("", body), resolve)
    title = str(meta.get("title") or _first_heading(markdown) or source.stem)
    return Exported(post, url, target, compose(body, meta, target, title=title, url=url, site=project))


def _first_heading(markdown: str) -> str | None:
    found = re.search(r"^#\s+(.+?)\s*#*\s*$", markdown, re.M)
    return found.group(1) if found else None


def compose(body: str, meta: Mapping[str, Any], target: Target, *, title: str, url: str,
            site: Project) -> str:
    """The exported file: kept front matter, the origin line first or last, the body; tidy blank lines."""
    site_name = str(getattr(site.config, "site_name", "") or "")
    # The title is text in the link's text: `x](https://evil.example/) [y` must not move the link.
    shown = readable(url)  # 原文链接 reads in Chinese; the link itself stays the valid URL
    link = url if shown == url else f"[{inert(shown)}]({url})"
    origin = target.origin.format(title=inert(title), url=url, site=inert(site_name), link=link)
    parts = []
    kept = {key: _plain(meta[key]) for key in target.front_matter if key in meta}
    if target.front_matter:
        kept["canonical_url"] = url
        dumped = yaml.safe_dump(kept, allow_unicode=True, sort_keys=False, width=10_000)
        parts.append(f"---\n{dumped}---")
    body = outside_code(body.strip(), _tidy)
    parts.extend([origin, body] if target.origin_first else [body, origin])
    return "\n\n".join(parts) + "\n"


def _plain(value: Any) -> Any:
    """Front-matter values YAML writes back the same way (dates as ISO text)."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value.isoformat() if hasattr(value, "isoformat") else value


# --- the command --------------------------------------------------------------------------------------------


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog export` to the `blog` parser."""
    parser = sub.add_parser(
        "export", help="a built post as self-contained Markdown for 掘金, 知乎, CSDN or any Markdown site",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("post", nargs="?", metavar="POST", help="the post's file stem or path")
    parser.add_argument("--to", choices=list(TARGETS), help="the platform the Markdown is for")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="where to write it ('-' for stdout; default: .blog/export/POST.TARGET.md)")
    parser.add_argument("--site-dir", type=Path, metavar="DIR",
                        help="the built site (default: site_dir of mkdocs.yml)")
    parser.add_argument("--list", action="store_true", help="list where each post was exported, and stop")
    add_project_option(parser)
    parser.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    """Write the export and record it; exit 2 on a draft, an unbuilt or changed post, bad input."""
    project = load_project(args)
    state_path = project.layout.state_dir / STATE_FILE
    if args.list:
        _print_list(state.load(state_path, STATE_VERSION, "export state", ExportError))
        return 0
    if not args.post or not args.to:
        raise ExportError("give POST and --to TARGET (or --list)")
    exported = export_post(project, args.post, TARGETS[args.to], args.site_dir)
    if args.output == Path("-"):
        sys.stdout.write(exported.text)
        written = "-"
    else:
        path = args.output or project.layout.state_dir / "export" / f"{Path(args.post).stem}.{args.to}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(exported.text, encoding="utf-8")
        written = str(path)
        print(f"exported {exported.post} for {exported.target.platform}: {path} "
              f"(原文链接 {readable(exported.url)})")
    record(state_path, exported, written)
    return 0


def record(path: Path, exported: Exported, written: str, at: datetime | None = None) -> None:
    """Note the export in the state file: post -> target -> {url, at, file}."""
    data = state.load(path, STATE_VERSION, "export state", ExportError)
    posts = data.setdefault("posts", {})
    posts.setdefault(exported.post, {})[exported.target.name] = {
        "url": exported.url, "at": (at or datetime.now(UTC)).isoformat(timespec="seconds"), "file": written,
    }
    data.pop("version", None)
    state.save(path, data, STATE_VERSION, "export state", ExportError)


def _print_list(data: Mapping[str, Any]) -> None:
    rows = [(post, target, entry["at"], entry["url"])
            for post, targets in sorted((data.get("posts") or {}).items())
            for target, entry in sorted(targets.items())]
    if not rows:
        print("no post has been exported yet")
    for post, target, at, url in rows:
        print(f"{post}\t{target}\t{at}\t{url}")
