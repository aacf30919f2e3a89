"""`blog submit ENGINE`: send the built sitemap's new or changed URLs to one search engine.

Without --yes this is a dry run that prints exactly the requests it would send (secrets as ***).
Exit codes: 0 done (also when Baidu's quota stops the run: the rest waits for the next run),
1 the engine gave no usable answer after retries, 2 bad input or an engine refusal (token, key, site).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from perfblog.seo.errors import EngineUnavailableError, SubmitError
from perfblog.seo.indexnow_key import KEY_FILE, ensure_key
from perfblog.seo.submit.baidu import BaiduSubmitter
from perfblog.seo.submit.base import Backoff, Submitter, make_plan, run_submission
from perfblog.seo.submit.google import GoogleSubmitter
from perfblog.seo.submit.indexnow import IndexNowSubmitter
from perfblog.seo.submit.sitemaps import read_sitemap
from perfblog.seo.submit.state import SubmitState
from perfblog.seo.submit.transport import DEFAULT_TIMEOUT_S, Transport, UrllibTransport

ENGINES = ("baidu", "indexnow", "google")
DEFAULT_STATE = Path(".blog/submit-state.json")


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog submit` to the `blog` parser."""
    parser = sub.add_parser(
        "submit",
        help="send new or changed URLs of the built sitemap to Baidu, IndexNow or Google",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("engine", choices=ENGINES, help="where to submit")
    parser.add_argument(
        "-f", "--config", type=Path, default=Path("mkdocs.yml"), help="MkDocs config (default: %(default)s)"
    )
    parser.add_argument(
        "--sitemap", type=Path, help="the built sitemap or index (default: <site_dir>/sitemap.xml)"
    )
    parser.add_argument(
        "--state", type=Path, default=DEFAULT_STATE, help="what was accepted (default: %(default)s)"
    )
    parser.add_argument("--site", help="the site URL (default: site_url of the config)")
    parser.add_argument("--endpoint", help="the engine's base address (for tests or another IndexNow engine)")
    parser.add_argument("--yes", action="store_true", help="really send (without it: print the plan only)")
    parser.add_argument("--limit", type=_positive, help="send at most N URLs this run (baidu, indexnow)")
    parser.add_argument(
        "--token-file",
        type=Path,
        help="baidu: file holding the push token, outside the repository "
        "(default: the BAIDU_PUSH_TOKEN variable)",
    )
    parser.add_argument(
        "--key-file",
        type=Path,
        help=f"indexnow: the key file (default: the seo plugin's seo_indexnow_key_file, else {KEY_FILE})",
    )
    parser.add_argument(
        "--credentials",
        type=Path,
        help="google: service-account JSON (default: GOOGLE_APPLICATION_CREDENTIALS)",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per request (default: %(default)s)"
    )
    parser.set_defaults(handler=handle)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def handle(args: argparse.Namespace) -> int:
    """Run `blog submit` with the default transport; engine outages exit 1, bad input raises (exit 2)."""
    try:
        submit(args, transport=UrllibTransport(args.timeout))
    except EngineUnavailableError as exc:
        print(f"blog: error: {exc}", file=sys.stderr)
        return 1
    return 0


def submit(
    args: argparse.Namespace,
    *,
    transport: Transport,
    backoff: Backoff | None = None,
    environ: Mapping[str, str] = os.environ,
) -> None:
    """Plan and (with --yes) send; the transport and backoff are parameters so tests can choose them."""
    config_dir = args.config.parent
    config = load_mkdocs_config(args.config)
    site = args.site or config.get("site_url")
    if not site:
        raise SubmitError(f"{args.config}: no site_url; set it or pass --site URL")
    if urlsplit(site).scheme not in ("http", "https") or not urlsplit(site).hostname:
        raise SubmitError(f"--site {site!r}: give an absolute http(s) URL such as https://blog.example.com/")
    if not site.endswith("/"):
        site += "/"
    site_dir = config_dir / str(config.get("site_dir") or "site")
    sitemap = args.sitemap or site_dir / "sitemap.xml"
    root = site_dir if sitemap.resolve().is_relative_to(site_dir.resolve()) else sitemap.parent
    if args.engine == "google" and args.limit:
        raise SubmitError("--limit does not apply to google: Google takes the whole sitemap")

    entries = read_sitemap(sitemap, site_url=site, root=root)
    state = SubmitState.load(args.state)
    submitter = _submitter(
        args,
        config,
        site=site,
        root=root,
        sitemap=sitemap,
        transport=transport,
        backoff=backoff or Backoff(),
        environ=environ,
    )
    plan = make_plan(args.engine, entries, state.accepted(args.engine), args.limit)
    run_submission(submitter, plan, state, send=args.yes, out=sys.stdout)


def _submitter(
    args: argparse.Namespace,
    config: Mapping[str, Any],
    *,
    site: str,
    root: Path,
    sitemap: Path,
    transport: Transport,
    backoff: Backoff,
    environ: Mapping[str, str],
) -> Submitter:
    endpoint = {"endpoint": args.endpoint} if args.endpoint else {}
    if args.engine == "baidu":
        token = baidu_token(args.token_file, repo=args.config.parent, environ=environ)
        if args.yes and not token:
            raise SubmitError("baidu: no push token: set BAIDU_PUSH_TOKEN or pass --token-file PATH")
        return BaiduSubmitter(site=site, token=token, transport=transport, backoff=backoff, **endpoint)
    if args.engine == "indexnow":
        key_file = args.key_file or args.config.parent / str(
            seo_plugin_options(config).get("seo_indexnow_key_file") or KEY_FILE
        )
        made = not key_file.exists()
        key = ensure_key(key_file)
        if made:
            print(
                f"indexnow: made a new key in {key_file}; commit it, then build and deploy the site "
                f"(the seo plugin publishes it as {key}.txt) before submitting"
            )
        return IndexNowSubmitter(
            site=site, key=key, site_dir=root, transport=transport, backoff=backoff, **endpoint
        )
    relative = (
        sitemap.resolve().relative_to(root.resolve()).as_posix()
        if sitemap.resolve().is_relative_to(root.resolve())
        else sitemap.name
    )
    return GoogleSubmitter(
        site=site,
        sitemap_url=site + relative,
        robots_path=root / "robots.txt",
        credentials=args.credentials,
        transport=transport,
        backoff=backoff,
        **endpoint,
    )


def baidu_token(token_file: Path | None, *, repo: Path, environ: Mapping[str, str]) -> str | None:
    """The push token from `token_file` (which must lie outside the repository) or BAIDU_PUSH_TOKEN."""
    if token_file is None:
        return environ.get("BAIDU_PUSH_TOKEN", "").strip() or None
    if token_file.resolve().is_relative_to(repo.resolve()):
        raise SubmitError(
            f"--token-file {token_file}: keep the token file outside the repository ({repo.resolve()}), "
            "so that it is never committed"
        )
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmitError(f"--token-file {token_file}: cannot read it ({type(exc).__name__})") from None
    if not token:
        raise SubmitError(f"--token-file {token_file}: the file is empty")
    return token


class _TolerantLoader(yaml.SafeLoader):
    """Safe YAML that reads MkDocs' `!!python/name:` and `!ENV` tags as plain values, running nothing."""


def _tolerate(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", _tolerate)
_TolerantLoader.add_multi_constructor("!", _tolerate)


def load_mkdocs_config(path: Path) -> Mapping[str, Any]:
    """The MkDocs config as plain data; a missing file is empty (then --site is needed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmitError(f"{path}: cannot read it: {exc}") from exc
    try:
        data = yaml.load(text, Loader=_TolerantLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise SubmitError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    return data if isinstance(data, dict) else {}


def seo_plugin_options(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The options given to the `seo` plugin in the config's `plugins` list (or mapping)."""
    plugins = config.get("plugins") or []
    items = (
        plugins.items()
        if isinstance(plugins, dict)
        else (next(iter(p.items())) if isinstance(p, dict) and p else (p, {}) for p in plugins)
    )
    for name, options in items:
        if name == "seo":
            return options if isinstance(options, dict) else {}
    return {}
