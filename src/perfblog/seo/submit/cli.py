"""`blog submit ENGINE`: send the built sitemap's new or changed URLs to one search engine.

Without --yes this is a dry run that prints exactly the requests it would send (secrets as ***).
Exit codes: 0 done (also when Baidu's quota stops the run: the rest waits for the next run),
1 the engine gave no usable answer after retries, 2 bad input or an engine refusal (token, key, site).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from perfblog.core.cli import add_project_option, load_project
from perfblog.core.project import is_example_url, normalise_url
from perfblog.seo.errors import EngineUnavailableError, SubmitError
from perfblog.seo.submit import baidu, google, indexnow
from perfblog.seo.submit.base import Backoff, Context, Engine, make_plan, run_submission
from perfblog.seo.submit.sitemaps import read_sitemap
from perfblog.seo.submit.state import SubmitState
from perfblog.seo.submit.transport import DEFAULT_TIMEOUT_S, Transport, UrllibTransport

#: The engines `blog submit` knows, by name; a new engine is its module's `ENGINE` entry, added here.
ENGINES: dict[str, Engine] = {e.name: e for e in (baidu.ENGINE, indexnow.ENGINE, google.ENGINE)}
STATE_FILE = "submit-state.json"  # in the site's state folder (.blog/ beside mkdocs.yml)


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog submit ENGINE` to the `blog` parser, each engine with the shared options and its own."""
    parser = sub.add_parser(
        "submit",
        help="send new or changed URLs of the built sitemap to Baidu, IndexNow or Google",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    engines = parser.add_subparsers(dest="engine", required=True, metavar="ENGINE", help="where to submit")
    for engine in ENGINES.values():
        one = engines.add_parser(engine.name, help=engine.help, description=f"{engine.help}.\n\n{__doc__}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        _shared_options(one)
        if engine.takes_limit:
            one.add_argument("--limit", type=_positive, help="send at most N URLs this run, newest first")
        else:
            one.set_defaults(limit=None)
        engine.add_options(one)
        one.set_defaults(handler=handle)


def _shared_options(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument(
        "--sitemap", type=Path, help="the built sitemap or index (default: <site_dir>/sitemap.xml)"
    )
    parser.add_argument(
        "--state", type=Path, help=f"what was accepted (default: .blog/{STATE_FILE} beside mkdocs.yml)"
    )
    parser.add_argument("--site", help="the site URL (default: site_url of the config)")
    parser.add_argument("--endpoint", help="the engine's base address (for tests or another IndexNow engine)")
    parser.add_argument("--yes", action="store_true", help="really send (without it: print the plan only)")
    parser.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S,
        help="seconds one request may take in all, its answer read to the end (default: %(default)s)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


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
    project = load_project(args)
    site = args.site or project.site_url
    if not site:
        raise SubmitError(f"{project.config_file}: no site_url; set it or pass --site URL")
    if urlsplit(site).scheme not in ("http", "https") or not urlsplit(site).hostname:
        raise SubmitError(f"--site {site!r}: give an absolute http(s) URL such as https://blog.example.com/")
    site = normalise_url(site)
    if is_example_url(site):  # the sitemap's URLs would name a domain that is not the site's
        print(f"blog submit: warning: {site} is an example domain, not a real site: set site_url in "
              f"{project.config_file.name} (or pass --site) to the deployed address first", file=sys.stderr)
    if args.endpoint is not None:
        try:
            endpoint = urlsplit(args.endpoint)
            valid = endpoint.scheme in ("http", "https") and bool(endpoint.hostname)
        except ValueError:
            valid = False
        if not valid:
            raise SubmitError(f"--endpoint {args.endpoint!r}: give an absolute http(s) URL")
    site_dir = project.layout.site_dir
    sitemap = args.sitemap or site_dir / "sitemap.xml"
    root = site_dir if sitemap.resolve().is_relative_to(site_dir) else sitemap.parent

    entries = read_sitemap(sitemap, site_url=site, root=root)
    state = SubmitState.load(args.state or project.layout.state_dir / STATE_FILE)
    context = Context(
        site=site, root=root, sitemap=sitemap, repo=project.layout.root, seo=project.plugin_config("seo"),
        endpoint=args.endpoint, send=args.yes, transport=transport, backoff=backoff or Backoff(),
        environ=environ,
    )  # fmt: skip
    submitter = ENGINES[args.engine].submitter(args, context)
    plan = make_plan(args.engine, entries, state.accepted(args.engine), args.limit, submitter.refuses)
    run_submission(submitter, plan, state, send=args.yes, out=sys.stdout)
