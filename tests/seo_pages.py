"""The audit's deliberately broken pages: one clean post and, per rule, the edit that breaks it.

`tests/data/seo/post.html` is a clean post (the audit finds nothing in it). Each row of `BROKEN`
names a rule and the smallest edit of that post that should make the audit report it, so a test
reads "this defect yields this rule id". `write_site` lays the pages out as a built site, one folder
per rule, with the robots.txt and sitemap.xml the site-wide rules read. Rules about robots.txt and
sitemap.xml themselves have a row in `BROKEN_FILES`: a site of the clean post with that file broken.
Every registered rule has exactly one of these rows (a test checks it both ways).

To look at them with the real command:

    python tests/seo_pages.py /tmp/broken-site && blog seo audit /tmp/broken-site
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from string import Template

POST = Template((Path(__file__).parent / "data" / "seo" / "post.html").read_text(encoding="utf-8"))
FILE = "torch-compile-fullgraph.html"
SITE = "https://example.org/"

# Pieces of post.html the edits below change. `$name` makes titles and descriptions unique per page.
TITLE = "torch.compile 图断裂：$name"
DESCRIPTION = "用 torch.compile 的 fullgraph=True 找出图断裂，看清 Dynamo 在哪里退回 Python，以及整图编译带来的速度差异（$name）。"  # noqa: E501
H1 = "<h1>torch.compile 的 fullgraph 模式与图断裂</h1>\n"
OUTBOUND = '<a href="https://pytorch.org/docs/stable/torch.compiler.html">PyTorch 官方的编译器文档</a>'
HOME_LINK = '<a href="../index.html">整图编译入门</a>'
INTERNAL = f'{HOME_LINK}和<a href="../about.html">测量方法说明</a>'
PADDING = (
    "<p>性能分析的第一步永远是测量：先固定输入形状和批量大小，预热几轮，再重复多次取中位数，同时记录波动范围。"
    "只有当测量足够稳定时，优化前后的差异才有意义，否则我们看到的可能只是噪声，而不是真正的改进。"
    "在共享的机器上，其他进程也会干扰结果，所以最好在空闲的时候运行，并且同步设备之后再读取时间。</p>\n"
)

Edit = Callable[[str], str]


def replace(old: str, new: str) -> Edit:
    """Replace every occurrence of `old` (which must occur): a title also stands in og:title and JSON-LD."""

    def edit(html: str) -> str:
        assert old in html, f"post.html has no {old!r}"
        return html.replace(old, new)

    return edit


def drop(old: str) -> Edit:
    return replace(old, "")


def cut(start: str, end: str) -> Edit:
    """Remove everything from `start` up to, not including, `end`."""

    def edit(html: str) -> str:
        head, _, rest = html.partition(start)
        assert rest and end in rest, f"post.html has no {start!r} … {end!r}"
        return head + end + rest.split(end, 1)[1]

    return edit


def in_head(tag: str) -> Edit:
    return replace("</head>", f"{tag}\n</head>")


def in_article(html: str) -> Edit:
    return replace("</article>", f"{html}\n</article>")


@dataclass(frozen=True)
class Broken:
    """A page in folder `rule` that breaks `rule`; `also` are findings the breakage implies."""

    rule: str
    edits: tuple[Edit, ...] = ()
    also: frozenset[str] = frozenset()
    file: str = FILE
    name: str = ""  # fills $name (default: the rule), which keeps titles and descriptions unique
    twin: str = ""  # pages with the same twin share $own, their own paragraph (default: the path)

    @property
    def path(self) -> str:
        return f"{self.rule}/{self.file}"

    def html(self) -> str:
        template = POST.template
        for edit in self.edits:
            template = edit(template)
        own = own_text(self.twin or self.path)
        return Template(template).substitute(name=self.name or self.rule, path=self.path, own=own)


def breaks(rule: str, *edits: Edit, also: tuple[str, ...] = (), file: str = FILE, name: str = "",
           twin: str = "") -> Broken:
    return Broken(rule, edits, frozenset(also), file, name, twin)


def own_text(key: str) -> str:
    """A paragraph no other broken page has (unless it is its twin): first sentences of OI-wiki
    pages (tests/data/corpus), 400 characters, so that the broken pages, which share the rest of
    their text, are not near-duplicates of each other."""
    keys = list(dict.fromkeys(b.twin or b.path for b in BROKEN))
    return _PARAGRAPHS[keys.index(key)]


def _paragraphs() -> list[str]:
    """Per OI-wiki page, its first lines of plain prose (no markup, math or links), 400 characters."""
    corpus = Path(__file__).parent / "data" / "corpus" / "oiwiki" / "docs"
    paragraphs = []
    for source in sorted(corpus.rglob("*.md")):
        body = source.read_text(encoding="utf-8").split("\n---\n", 1)[1]
        lines = [x for x in body.splitlines() if x and not re.search(r"[^\w，、。．：；（）「」 ]", x)]
        text = "".join(lines)
        if len(text) >= 400:
            paragraphs.append(text[:400])
    return paragraphs


_PARAGRAPHS = _paragraphs()


SAME_TITLE = replace(TITLE, "torch.compile 与图断裂")
SAME_DESCRIPTION = replace(DESCRIPTION, "torch.compile 的 fullgraph 把图断裂变成错误，本文逐一修复并测速。")
SECOND = "torch-compile-fullgraph-2.html"
LONG_TITLE = "torch.compile 的 fullgraph 模式与图断裂：一次编译整个模型、找出每一处退回 Python 的地方"
STUFFED = "torch.compile, 图断裂, fullgraph, PyTorch, 编译, 加速, 教程"
GENERIC_LINK = '<p>想了解 Inductor 的细节，<a href="https://pytorch.org/">点击这里</a>。</p>'
EMPTY_LINKS = '<p><a href="">空链接</a> <a href="javascript:void(0)">脚本链接</a></p>'
# High density without evidence of stuffing: 80 different short sentences, each naming the keyphrase.
TOPICS = [
    "卷积", "注意力", "归一化", "激活", "采样", "损失", "优化器", "嵌入", "池化", "残差",
    "编码器", "解码器", "分词", "推理", "训练", "量化", "剪枝", "蒸馏", "调度", "缓存",
    "梯度", "权重", "张量", "算子", "内核", "图层", "前向", "反向", "显存", "延迟",
    "吞吐", "精度", "形状", "批量", "通道", "步长", "填充", "掩码", "索引", "切片",
]
DENSE = "<p>" + "".join(f"torch.compile 加速{t}。torch.compile 编译{t}。" for t in TOPICS) + "</p>"
BAD_JSONLD = '<script type="application/ld+json">{"@type": "BlogPosting",}</script>'  # trailing comma
JSONLD = next(line for line in POST.template.splitlines() if "application/ld+json" in line) + "\n"
CANONICAL = '<link rel="canonical" href="https://example.org/$path">\n'
STEP = "torch-compile-fullgraph-step-{}.html"  # a chain of clean posts: home -> 1 -> 2 -> 3 -> DEEP
DEEP = f"link-depth-deep/{FILE}"
SELF = '<link rel="alternate" hreflang="zh-CN" href="https://example.org/$path">'
ENGLISH = f'<link rel="alternate" hreflang="en" href="{SITE}hreflang-not-reciprocal/{SECOND}">'
GOOGLE_FONTS = '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto:300,400,700">'

BROKEN = (
    breaks("clean"),
    breaks("title-missing", drop(f"<title>{TITLE}</title>\n"), also=("keyword-missing-title",)),
    breaks("title-too-long", replace(TITLE, LONG_TITLE)),
    breaks("title-duplicate", SAME_TITLE),
    breaks("title-duplicate", SAME_TITLE, file=SECOND, name="title-duplicate-2"),
    breaks(
        "description-missing",
        drop(f'<meta name="description" content="{DESCRIPTION}">\n'),
        also=("keyword-missing-description",),
    ),
    breaks("description-too-short", replace(DESCRIPTION, "torch.compile 简介")),
    breaks("description-too-long", replace("，以及整图编译", "并逐一修复，" * 6 + "以及整图编译")),
    breaks("description-duplicate", SAME_DESCRIPTION),
    breaks("description-duplicate", SAME_DESCRIPTION, file=SECOND, name="description-duplicate-2"),
    breaks("keyword-density-low", in_article(PADDING * 12)),
    breaks("keyword-density-high", in_article(DENSE)),
    breaks("keyword-stuffing", in_article("<p>" + "torch.compile 很快，" * 25 + "</p>")),  # 6.6 %: evidence
    breaks("keyword-missing-title", replace(TITLE, "fullgraph 模式与图断裂：看清所有退回 Python 的地方")),
    breaks("keyword-missing-description", replace("用 torch.compile 的 fullgraph", "打开 fullgraph")),
    breaks("keyword-missing-intro", replace("<p>本文用 torch.compile 编译", "<p>本文编译")),
    breaks("keyword-missing-h2", replace('id="why">为什么 torch.compile 会出现', 'id="why">为什么会出现')),
    breaks("keyword-missing-slug", file="tu-duan-lie.html"),  # spells the title's 图断裂, not torch.compile
    breaks("keyword-missing-alt", replace('alt="使用 torch.compile 前后', 'alt="编译前后')),
    breaks("keywords-meta-stuffed", replace("torch.compile, 图断裂, fullgraph", STUFFED)),
    breaks("canonical-missing", drop(CANONICAL)),
    breaks("canonical-not-absolute", replace('canonical" href="https://example.org/', 'canonical" href="/')),
    breaks("lang-missing", replace('<html lang="zh-CN">', "<html>")),
    breaks("h1-missing", drop(H1)),
    breaks("h1-multiple", in_article(H1)),
    breaks("image-alt-missing", in_article('<p><img src="../other.png" width="64" height="64"></p>')),
    breaks("image-size-missing", replace(' width="640" height="360"', "")),
    breaks("page-thin", replace('"og:type" content="article"', '"og:type" content="website"'), drop(JSONLD),
           cut("<p>本文用", "</article>")),
    breaks("title-h1-mismatch", replace(H1, "<h1>动态形状下的重新编译</h1>\n")),
    breaks("heading-skip", in_article('<h4>一个细节</h4><p>先看清是哪一行触发了断裂。</p>')),
    breaks("dom-too-large", in_article("<div>" + "<i></i>" * 5000 + "</div>")),
    breaks("page-too-heavy", in_head('<script src="../heavy.js"></script>')),
    breaks("link-broken", in_article('<p>另见<a href="../gone/torch-compile-fullgraph.html">旧文</a>。</p>')),
    breaks("link-fragment-missing", in_article('<p>回到<a href="#no-such-heading">开头</a>。</p>')),
    breaks("canonical-not-built", replace('href="https://example.org/$path', 'href="https://example.org/gone/')),
    breaks("content-near-duplicate", twin="twins"),
    breaks("content-near-duplicate", file=SECOND, name="content-near-duplicate-2", twin="twins"),
    breaks("link-text-generic", in_article(GENERIC_LINK)),
    breaks("link-empty-href", in_article(EMPTY_LINKS)),
    breaks("internal-links-none", drop(f"，以及本站的 {INTERNAL}")),
    breaks("internal-links-few", replace(INTERNAL, HOME_LINK)),
    breaks("orphan-post"),  # the home page lists it only in a post excerpt and a related-posts block
    *(breaks("clean", in_article(f'<p>接下来读<a href="{STEP.format(i + 1)}">排查的第 {i + 1} 步</a>。</p>'),
             file=STEP.format(i), name=f"clean-step-{i}") for i in (1, 2)),
    breaks("clean", in_article(f'<p>最后读<a href="../{DEEP}">排查的最后一步</a>。</p>'), file=STEP.format(3),
           name="clean-step-3"),
    breaks("link-depth-deep"),  # linked only from step 3 of a chain that starts on the home page
    breaks("outbound-links-none", replace(f"参考 {OUTBOUND}，以及", "以及")),
    breaks("content-too-thin", cut("<p>每一次截断", "<p>参考 ")),
    breaks("noindex-in-sitemap", in_head('<meta name="robots" content="noindex, follow">')),
    breaks("jsonld-invalid", in_head(BAD_JSONLD)),
    breaks("jsonld-recommended-missing", replace(', "image": ["https://example.org/chart.png"]', "")),
    breaks("hreflang-invalid", in_head(SELF), in_head(SELF.replace('"zh-CN"', '"zh_CN"'))),
    breaks("hreflang-missing", in_head(f'<link rel="alternate" hreflang="en" href="{SITE}en/{FILE}">')),
    breaks("hreflang-not-reciprocal", in_head(SELF), in_head(ENGLISH)),  # the English page lists neither
    breaks("hreflang-not-reciprocal", file=SECOND, name="hreflang-not-reciprocal-2"),
    breaks("lang-mismatch", replace('<html lang="zh-CN">', '<html lang="en">')),
    breaks("render-blocking-third-party", in_head(GOOGLE_FONTS)),
    breaks("og-missing", drop('<meta property="og:url" content="https://example.org/$path">\n')),
    breaks("placeholder-unfilled", replace("（$name）。", "（$name）待填写。")),
    breaks("robots-blocks-crawler"),  # ROBOTS_TXT disallows it for Baiduspider
    breaks(
        "robots-blocks-crawler",
        in_head('<meta name="baiduspider" content="noindex">'),
        file="torch-compile-fullgraph-meta.html",
        name="robots-blocks-crawler-meta",
    ),
)

HUB = Template("""<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<title>$title</title>
<meta name="description" content="$description">
<link rel="canonical" href="https://example.org/$url">
<meta property="og:type" content="website">
<meta property="og:title" content="$title">
<meta property="og:description" content="$description">
<meta property="og:url" content="https://example.org/$url">
</head>
<body>
<header><nav><a href="index.html">首页</a> <a href="about.html">关于</a></nav></header>
<main><article>
<h1>$title</h1>
$body
</article></main>
</body>
</html>
""")


@dataclass(frozen=True)
class Hub:
    """A page that is no post (the home page, an about page): it links the posts, and is clean itself."""

    path: str
    title: str
    description: str
    body: str

    def html(self) -> str:
        url = self.path.removesuffix("index.html")
        return HUB.substitute(title=self.title, description=self.description, url=url, body=self.body)


def _home_body() -> str:
    """The home page's text links every broken page but the orphan and the deep one's chain beyond step 1;
    it lists the orphan only where links do not count: a post excerpt and a related-posts block."""
    unlinked = {"orphan-post", "link-depth-deep"}
    hidden = {f"clean/{STEP.format(i)}" for i in (2, 3)}
    links = "".join(f'<li><a href="{b.path}">第 {n} 篇：{b.name or b.rule}</a></li>'
                    for n, b in enumerate(BROKEN, 1) if b.rule not in unlinked and b.path not in hidden)
    orphan = f"orphan-post/{FILE}"
    return (
        "<p>这个测试站点收录 torch.compile 图断裂排查的各种写法，每一篇都故意破坏一条审计规则。</p>\n"
        f"<ul>{links}</ul>\n"
        f'<div class="md-post md-post--excerpt"><h2><a href="{orphan}">列表里的孤立文章</a></h2></div>\n'
        f'<nav class="blog-related"><h2>相关文章</h2><ul><li><a href="{orphan}">孤立文章</a></li></ul></nav>'
    )


HUBS = (
    Hub("index.html", "图断裂排查测试站点",
        "一个测试用的站点首页：收录 torch.compile 图断裂排查的文章，每一篇都故意破坏一条 SEO 审计规则。",
        _home_body()),
    Hub("about.html", "测量方法说明",
        "本站怎样测量 torch.compile 的性能：预热、重复多次取中位数、记录波动范围，并注明设备与版本。",
        "<p>每个数字都先预热几轮，再重复多次取中位数，同时记录波动范围和置信区间；设备型号、PyTorch 版本和"
        "提交哈希写在每个结果旁边。共享机器上的测量只在同一次运行里比较比值，不跨机器比较绝对时间。</p>"
        "<p>编译时间单独计时，不混进稳态的单次耗时；显存看峰值，而不是某一刻的占用。每条结论都附有可以"
        "重新运行的代码片段，换一台机器跑一遍，就能核对文中的数字。</p>"
        '<p>回到<a href="index.html">测试站点首页</a>，查看所有文章。</p>'),
)

#: The home page of a site of the clean post alone (where a site-wide file is what is broken).
SMALL_HOME = Hub(
    "index.html", HUBS[0].title, HUBS[0].description,
    HUBS[0].body.split("\n", 1)[0] + f'\n<p>{_PARAGRAPHS[-1]}</p>\n<p><a href="clean/{FILE}">第一篇</a></p>',
)

ROBOTS_TXT = f"""User-agent: *
Allow: /

User-agent: Baiduspider
Disallow: /robots-blocks-crawler/{FILE}

Sitemap: {SITE}sitemap.xml
"""


@dataclass(frozen=True)
class BrokenFile:
    """A site-wide file (robots.txt, sitemap.xml) whose content breaks `rule`."""

    rule: str
    name: str
    content: str

    def write_site(self, root: Path) -> Path:
        """The clean post, published with this broken file."""
        write_clean_site(root)
        (root / self.name).write_text(self.content, encoding="utf-8")
        return root


BROKEN_FILES = (
    BrokenFile("robots-txt-invalid", "robots.txt", "User-agent: *\nDisalow: /drafts/\n"),
    BrokenFile("sitemap-url-not-built", "sitemap.xml", (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{SITE}clean/{FILE}</loc></url><url><loc>{SITE}gone/</loc></url></urlset>\n"
    )),
    BrokenFile("sitemap-invalid", "sitemap.xml", f"<urlset><url><loc>{SITE}clean/{FILE}</loc></url>\n"),
)


#: Every page `write_site` writes.
PAGES: tuple[Broken | Hub, ...] = (*BROKEN, *HUBS)


def at(path: str) -> Broken | Hub:
    """The page written at `path`, relative to the site."""
    (page,) = (b for b in PAGES if b.path == path)
    return page


def expected(path: str) -> set[str]:
    """The rule ids the audit must report for the page at `path` (relative to the site), and no more."""
    page = at(path)
    return set() if isinstance(page, Hub) or page.rule == "clean" else {page.rule, *page.also}


def page(rule: str) -> str:
    """The HTML of the (first) page that breaks `rule`; `page("clean")` is the clean post."""
    return next(b for b in BROKEN if b.rule == rule).html()


def write_clean_site(root: Path) -> Path:
    """The clean post, a home page that links it and the about page: a site the audit finds clean."""
    (root / "clean").mkdir(parents=True)
    (root / "clean" / FILE).write_text(page("clean"), encoding="utf-8")
    for hub in (SMALL_HOME, *HUBS[1:]):
        (root / hub.path).write_text(hub.html(), encoding="utf-8")
    return root


def write_site(root: Path) -> Path:
    """Write every page under `root`, with a robots.txt and a sitemap.xml listing every page."""
    for broken in PAGES:
        target = root / broken.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(broken.html(), encoding="utf-8")
    (root / "robots.txt").write_text(ROBOTS_TXT, encoding="utf-8")
    (root / "heavy.js").write_text("//" + "x" * 1_700_000 + "\n", encoding="utf-8")  # page-too-heavy loads it
    urls = "".join(f"<url><loc>{SITE}{b.path}</loc></url>\n" for b in PAGES)
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n',
        encoding="utf-8",
    )
    return root


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/seo_pages.py OUT_DIR")
    print(write_site(Path(sys.argv[1])))
