"""The blog's look is the blog's: the seo plugin adds head tags, cards, sitemaps, the feed and
the audit, the snippets plugin nothing to a page without snippet output (no stylesheet, no MathJax beside
the blog's, the blog's reading time); what a reader sees changes only where mkdocs.yml asks for it, by
name.

Real Material blogs of other people (tests/data/blogs) and a small plain one are built with and
without the plugins; the `<body>` of every page must be the same. With every look option on, the bodies
differ exactly by the documented additions (`ADDITIONS`, one entry per option, docs/existing-blog.md).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import blogs
import lxml.html
import material
import pytest
from mkdocs.config import load_config

from perfblog.core import project
from perfblog.seo import feed, highlight, related, theme
from perfblog.seo.config import SeoConfig

#: Cards and the audit write no page markup; off, the builds are quicker.
#: Blogs whose site has no home page (fbruzzesi's blog index is blog/index.html).
WITHOUT_HOME = ("fbruzzesi",)
QUICK = {"seo_cards": False, "seo_audit": False}

PLAIN_BLOG = {
    "mkdocs.yml": """\
site_name: Plain notes
site_url: https://plain.example.org/notes/
site_description: Plain notes on plain things, as the site describes itself.
theme:
  name: material
  language: en
  font: {text: Ubuntu, code: JetBrains Mono}
  features: [content.code.copy]
markdown_extensions: [pymdownx.highlight, pymdownx.superfences]
plugins:
  - search
  - blog: {blog_dir: ., post_url_format: "{slug}"}
""",
    "docs/index.md": "Sponsored: the fastest VPN in town, a banner that is not what this site is about.\n",
    "docs/posts/first.md": """\
---
date: 2024-05-02
description: Copying arrays without copying them twice, with a few numbers to show it.
---

# Copying arrays

A post about [copying arrays](second.md) and why copying arrays twice costs time.

```python
def copy(values: list[int]) -> list[int]:
    return [value + 1 for value in values]  # copying arrays
```
""",
    "docs/posts/second.md": """\
---
date: 2024-05-03
pin: true
description: Copying arrays again, this time in place, and what it saves on large arrays.
---

# Copying arrays in place

Copying arrays in place saves copying arrays twice.
""",
}

#: Each look option and how it changes a page's body, as data: `plain(body)` and `ours(body)` undo the
#: documented change on the page without and with the plugin, after which the two must be equal.
Edit = Callable[[lxml.html.HtmlElement], None]


def _drop(xpath: str) -> Edit:
    def edit(body: lxml.html.HtmlElement) -> None:
        for element in body.xpath(xpath):
            before = element.getprevious()
            if before is not None and not (before.tail or "").strip():  # the line it stood on goes too
                before.tail, element.tail = element.tail, None
            element.drop_tree()
    return edit


def _unset(xpath: str, attribute: str) -> Edit:
    def edit(body: lxml.html.HtmlElement) -> None:
        for element in body.xpath(xpath):
            element.attrib.pop(attribute, None)
    return edit


def _retag(xpath: str, tag: str) -> Edit:
    def edit(body: lxml.html.HtmlElement) -> None:
        for element in body.xpath(xpath):
            element.tag = tag
    return edit


def _unwrap_lean_spans(body: lxml.html.HtmlElement) -> None:
    for span in body.xpath("//pre//span[@class]"):
        if span.get("class") in highlight.PLAIN:
            span.drop_tag()


def _without_copy_feature(body: lxml.html.HtmlElement) -> None:
    for script in body.xpath("//script[@id='__config']"):
        shown = json.loads(script.text)
        shown["features"] = [f for f in shown["features"] if f != theme.COPY_FEATURE]
        script.text = json.dumps(shown)


def _compared(option: str) -> bool:
    return OVERRIDES_COMPARED or option not in theme.TEMPLATES


def _keep(body: lxml.html.HtmlElement) -> None:
    return None


ADDITIONS: dict[str, tuple[Edit, Edit]] = {  # option: (edit of plain's body, edit of ours)
    "seo_related": (_keep, _drop(f"//nav[@class='{related.BLOCK_CLASS}']")),
    "seo_copy_buttons_after_load": (_without_copy_feature,
                                    _drop(f"//script[contains(@src, '{theme.COPY_SCRIPT}')]")),
    "seo_lean_highlighting": (_unwrap_lean_spans, _unwrap_lean_spans),  # not in Material's excerpts
    "seo_search_dialog_name": (_keep, _unset("//div[@data-md-component='search']", "aria-label")),
    "seo_pin_list_item": (_keep, _retag("//li[@class='md-pin']", "span")),
}
#: The template overrides are Material 9.8's partials with one change each: under an older Material they
#: also bring 9.8's markup of the partial (docs/existing-blog.md says so), so the bodies are compared
#: with them only under 9.8 or later (the oldest-versions lane runs 9.5.18).
OVERRIDES_COMPARED = tuple(int(n) for n in material.__version__.split(".")[:2]) >= (9, 8)
#: Options that change the head only (the stylesheet, fonts) or pages in another language than the site's.
HEAD_ONLY = ("seo_local_fonts", *theme.STYLES, "seo_page_language_words")
EVERY_LOOK_OPTION = {option: True for option in (*ADDITIONS, *HEAD_ONLY)}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _with_seo(root: Path, options: dict[str, object]) -> None:
    """Both plugins added, as README's "Install into an existing site" says: `snippets` with its defaults
    and `seo` with ``options``."""
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    config.write_text(blogs.add_plugins(text, ["snippets", f"seo: {json.dumps(options)}"]), encoding="utf-8")


def _built(root: Path) -> Path:
    done = blogs.build(root)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "site"


def _pages(site: Path) -> dict[str, lxml.html.HtmlElement]:
    """Every HTML page of a built site, parsed (a page without <body>, e.g. a copied partial, whole)."""
    return {path.relative_to(site).as_posix(): lxml.html.document_fromstring(path.read_bytes())
            for path in sorted(site.rglob("*.html"))}  # fmt: skip


def _body(doc: lxml.html.HtmlElement, edits: list[Edit] = ()) -> str:
    """The page's body serialized, after `edits` to a copy of it."""
    body = doc.find("body")
    body = copy.deepcopy(doc if body is None else body)
    for edit in edits:
        edit(body)
    return lxml.html.tostring(body, encoding="unicode")


@pytest.fixture(scope="module",
                params=[*(pytest.param(name, marks=pytest.mark.blogs) for name in blogs.BLOGS), "plain"])
def pair(request, tmp_path_factory) -> tuple[str, Path, Path]:
    """A blog built as it is and with the seo plugin added with its defaults: the two site folders."""
    name = request.param
    where = tmp_path_factory.mktemp(name)
    if name == "plain":
        before = _write(where / "before", PLAIN_BLOG)
        after = _write(where / "after", PLAIN_BLOG)
    else:
        before = blogs.copy(name, where / "before", ours=False)
        after = blogs.copy(name, where / "after", ours=False)
    _with_seo(after, QUICK)
    return name, _built(before), _built(after)


@pytest.mark.mkdocs
def test_every_page_body_is_the_blogs_own(pair):
    name, before, after = pair
    plain, ours = _pages(before), _pages(after)
    assert set(ours) == set(plain)
    changed = [page for page in plain if _body(plain[page]) != _body(ours[page])]
    assert changed == [], f"{name}: the plugins changed the body of {changed[:5]}"
    assert not (after / "_snippets").exists()  # no stylesheet, report or MathJax for a blog without snippets


@pytest.mark.mkdocs
def test_the_home_description_is_site_description(pair):
    name, _, after = pair
    if name in WITHOUT_HOME:
        assert not (after / "index.html").exists()
        return
    config = load_config(str(after.parent / "mkdocs.yml"))
    home = lxml.html.document_fromstring((after / "index.html").read_bytes())
    assert home.xpath("//head/meta[@name='description']/@content") == [config.site_description]


@pytest.mark.mkdocs
def test_the_blogs_font_stays(pair):
    name, before, after = pair
    font_of = {
        page: (doc.xpath("//head/link[contains(@href, 'fonts.googleapis.com')]/@href"),
               [s.text for s in doc.xpath("//head/style") if "--md-text-font" in (s.text or "")])
        for page, doc in _pages(after).items()
    }  # fmt: skip
    expected = {page: (doc.xpath("//head/link[contains(@href, 'fonts.googleapis.com')]/@href"),
                       [s.text for s in doc.xpath("//head/style") if "--md-text-font" in (s.text or "")])
                for page, doc in _pages(before).items()}  # fmt: skip
    assert font_of == expected
    if name in ("plain", "fbruzzesi"):  # the blogs that name a font (liyedong says `font: false`)
        assert all(links for links, _ in font_of.values())


@pytest.fixture(scope="module")
def every_option(tmp_path_factory) -> tuple[Path, Path]:
    """The plain blog as it is and with every look option on (what the example blog turns on)."""
    where = tmp_path_factory.mktemp("every-option")
    before = _write(where / "before", PLAIN_BLOG)
    after = _write(where / "after", PLAIN_BLOG)
    options = {option: on for option, on in EVERY_LOOK_OPTION.items() if _compared(option)}
    _with_seo(after, {**QUICK, **options})
    return _built(before), _built(after)


@pytest.mark.mkdocs
def test_with_every_look_option_on_the_bodies_differ_only_by_the_documented_additions(every_option):
    before, after = every_option
    plain, ours = _pages(before), _pages(after)
    for option, (on_plain, on_ours) in ADDITIONS.items():  # each addition is there to be undone
        if option in theme.TEMPLATES and not OVERRIDES_COMPARED:
            continue
        undone = [p for p in plain if (_body(plain[p], [on_plain]) != _body(plain[p])
                                       or _body(ours[p], [on_ours]) != _body(ours[p]))]
        assert undone, option
    undo_plain = [edit for option, (edit, _) in ADDITIONS.items() if _compared(option)]
    undo_ours = [edit for option, (_, edit) in ADDITIONS.items() if _compared(option)]
    changed = [p for p in plain if _body(plain[p], undo_plain) != _body(ours[p], undo_ours)]
    assert changed == []


@pytest.mark.mkdocs
def test_local_fonts_keep_the_blogs_families_ahead_of_a_system_stack(every_option):
    _, after = every_option
    home = lxml.html.document_fromstring((after / "index.html").read_bytes())
    assert not home.xpath("//head/link[contains(@href, 'fonts.googleapis.com')]")
    stylesheet = (after / theme.STYLESHEET).read_text(encoding="utf-8")
    assert f'--md-text-font: "Ubuntu", {theme.TEXT_STACK};' in stylesheet
    assert f'--md-code-font: "JetBrains Mono", {theme.CODE_STACK};' in stylesheet
    assert "text-decoration: underline" in stylesheet  # seo_underline_links, among the parts asked for


# --- without a build ---------------------------------------------------------------------------------


def _config(tmp_path: Path, theme_yaml: str = "{name: material}", plugins: str = "[search]"):
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\ntheme: {theme_yaml}\nplugins: {plugins}\n",
                                         encoding="utf-8")
    return load_config(str(tmp_path / "mkdocs.yml"))


def _options(**given: object) -> SeoConfig:
    options = SeoConfig()
    options.load_dict(given)
    errors, _ = options.validate()
    assert not errors
    return options


def test_by_default_the_theme_is_left_as_the_blog_set_it(tmp_path):
    config = _config(tmp_path, "{name: material, font: {text: Ubuntu}, features: [content.code.copy]}")
    dirs, css, scripts = list(config.theme.dirs), list(config.extra_css), list(config.extra_javascript)
    changes = theme.apply(config, _options())
    assert changes == theme.Changes()
    assert config.theme["font"] == {"text": "Ubuntu"} and config.theme["features"] == ["content.code.copy"]
    assert list(config.theme.dirs) == dirs
    assert (list(config.extra_css), list(config.extra_javascript)) == (css, scripts)
    changes.write(tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_google_fonts_go_only_when_asked_and_then_the_families_lead_a_local_stack(tmp_path):
    config = _config(tmp_path, '{name: material, font: {text: "Ubuntu\\"; x", code: Fira Code}}')
    changes = theme.apply(config, _options(seo_local_fonts=True))
    assert config.theme["font"] is False and config.extra_css == [theme.STYLESHEET]
    assert f'--md-text-font: "Ubuntu x", {theme.TEXT_STACK};' in changes.stylesheet  # nothing ends it early
    assert f'--md-code-font: "Fira Code", {theme.CODE_STACK};' in changes.stylesheet


def test_a_blog_without_google_fonts_gets_the_system_stack_alone(tmp_path):
    config = _config(tmp_path, "{name: material, font: false}")
    changes = theme.apply(config, _options(seo_local_fonts=True, seo_contrast=True))
    assert f"--md-text-font: {theme.TEXT_STACK};" in changes.stylesheet
    assert changes.stylesheet.index("--md-text-font") < changes.stylesheet.index("--md-code-hl-comment-color")


def test_template_overrides_come_after_the_blogs_own_custom_dir(tmp_path):
    (tmp_path / "overrides").mkdir()
    config = _config(tmp_path, "{name: material, custom_dir: overrides}")
    theme.apply(config, _options(seo_search_dialog_name=True, seo_pin_list_item=True))
    dirs = [Path(d).name for d in config.theme.dirs]
    assert dirs[:3] == ["overrides", "search-dialog-name", "pin-list-item"]
    theme.apply(config, _options(seo_search_dialog_name=True))  # `serve` sets a config up again
    assert [Path(d).name for d in config.theme.dirs].count("search-dialog-name") == 1


def test_a_theme_other_than_materials_is_never_changed(tmp_path):
    config = _config(tmp_path, "{name: mkdocs}")
    assert theme.apply(config, _options(**EVERY_LOOK_OPTION)) == theme.Changes()
    assert config.extra_css == []


def test_the_materialx_fork_gets_the_changes_it_asks_for_as_material_does(tmp_path):
    config = _config(tmp_path, "{name: material, font: {text: LXGW WenKai}}")
    config.theme.name = "materialx"  # the fork's wheel cannot be installed beside Material's (tests/blogs.py)
    changes = theme.apply(config, _options(seo_local_fonts=True))
    assert config.theme["font"] is False and '"LXGW WenKai", ' in changes.stylesheet


def test_materialx_is_material_and_its_plugins_are_found_with_or_without_their_prefix():
    def config(theme_name: str, plugins: dict[str, object]) -> SimpleNamespace:
        wrapped = {name: SimpleNamespace(config={"named": name}) for name in plugins}
        return SimpleNamespace(theme=SimpleNamespace(name=theme_name), plugins=wrapped)

    assert project.is_material(config("materialx", {})) and project.is_material(config("material", {}))
    assert not project.is_material(config("readthedocs", {}))
    for named in ("materialx/blog", "material/blog", "blog"):
        assert project.material_plugin_config(config("materialx", {named: 1}), "blog") == {"named": named}
    assert project.material_plugin_config(config("materialx", {"tags": 1}), "blog") is None


@pytest.mark.parametrize(("option", "plugins", "written"), [
    (None, {}, True), (None, {"rss": 1}, False), (None, {"material/rss": 1}, False),
    (True, {"rss": 1}, True), (False, {}, False),
])
def test_no_second_feed_beside_a_feed_plugin_unless_asked(option, plugins, written):
    config = SimpleNamespace(plugins={name: SimpleNamespace(config={}) for name in plugins})
    assert feed.wanted(option, config) is written


def test_the_related_block_goes_where_seo_related_place_says():
    page, context = SimpleNamespace(content="<p>post</p>"), {}
    related.PLACES["template"](page, context, "<nav>block</nav>")
    assert page.content == "<p>post</p>" and context == {related.CONTEXT: "<nav>block</nav>"}
    related.PLACES["end"](page, context, "<nav>block</nav>")
    assert page.content == "<p>post</p><nav>block</nav>"


def test_each_look_option_is_off_by_default():
    defaults = _options()
    assert not any(defaults[option] for option in EVERY_LOOK_OPTION)
    assert set(EVERY_LOOK_OPTION) == {
        "seo_related", "seo_local_fonts", *theme.STYLES, *theme.TEMPLATES,
        "seo_copy_buttons_after_load", "seo_lean_highlighting",
    }



@pytest.mark.mkdocs
def test_the_blogs_template_places_the_related_block_when_seo_related_place_says_template(tmp_path):
    comments = "<section class=after>{{ seo_related or '' }}</section>\n"
    root = _write(tmp_path / "blog", {**PLAIN_BLOG, "overrides/partials/comments.html": comments})
    config = root / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "  name: material\n", "  name: material\n  custom_dir: overrides\n"), encoding="utf-8")
    _with_seo(root, {**QUICK, "seo_related": True, "seo_related_place": "template"})
    post = lxml.html.document_fromstring((_built(root) / "copying-arrays" / "index.html").read_bytes())
    (block,) = post.xpath(f"//nav[@class='{related.BLOCK_CLASS}']")
    assert block.getparent().get("class") == "after"  # where the template put it, and only there
    assert [a.text for a in block.xpath(".//a")] == ["Copying arrays in place"]
