"""Serve a built site on 127.0.0.1 as a static host would: gzip for text, long caching for assets.

GitHub Pages, Netlify and nginx compress HTML, CSS, JS, JSON and SVG; Python's plain http.server does
not, and Lighthouse's simulated mobile network would then charge a 250 KB page for bytes no visitor
downloads. Usage: python bench/serve.py SITE_DIR PORT (serves until killed).
"""

from __future__ import annotations

import functools
import gzip
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt"}


class StaticHost(SimpleHTTPRequestHandler):
    """Files as they are, text gzipped when the client accepts it."""

    def send_head(self) -> BytesIO | None:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not urlsplit(self.path).path.endswith("/"):
                return super().send_head()  # the base class redirects /dir to /dir/
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in COMPRESSED and path.is_file()):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=31536000" if "/assets/" in self.path else "no-cache")
        self.end_headers()
        return BytesIO(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    site, port = sys.argv[1], int(sys.argv[2])
    handler = functools.partial(StaticHost, directory=site)
    ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()


if __name__ == "__main__":
    main()
