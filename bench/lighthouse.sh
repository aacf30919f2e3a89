#!/usr/bin/env bash
# Lighthouse on every page of a built site: performance, accessibility, best practices and SEO, each
# the median of RUNS runs with Lighthouse's default mobile preset (Moto G Power, simulated slow 4G and
# 4x CPU slowdown), since this machine is shared and noisy. The site is served on 127.0.0.1 by
# bench/serve.py, gzipped as a static host serves it.
#
# Usage: bench/lighthouse.sh [SITE_DIR]   (default: site/; build it first with `make site`)
# Targets (exit 1 when one is missed): SEO 100 on every indexable page; accessibility >= 95 and best
# practices 100 on every page; performance >= 90 on the flagship post ($FLAGSHIP).
# Needs Debian's chromium and Node 20; installs lighthouse 12.2.3 into $LH_DIR once (npm registry).
set -euo pipefail
SITE_DIR=${1:-site}
SITE_DIR=${SITE_DIR%/}  # "site/" and "site" alike
RUNS=${RUNS:-3}
FLAGSHIP=${FLAGSHIP:-torch-compile-fullgraph/index.html}
LH_DIR=${LH_DIR:-$HOME/.cache/blog-lighthouse}
CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
export CHROME_PATH
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$LH_DIR/node_modules/.bin/lighthouse" ]; then
  mkdir -p "$LH_DIR" && (cd "$LH_DIR" && npm i -E lighthouse@12.2.3 --no-audit --no-fund >/dev/null)
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$HERE/serve.py" "$SITE_DIR" "$PORT" &
SERVER=$!
OUT=$(mktemp -d)
trap 'kill $SERVER; rm -rf "$OUT"' EXIT
sleep 1
echo "lighthouse $("$LH_DIR/node_modules/.bin/lighthouse" --version), $("$CHROME_PATH" --version 2>/dev/null)," \
  "mobile preset, median of $RUNS runs; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
while IFS= read -r page; do
  rel=${page#"$SITE_DIR"/}
  url="http://127.0.0.1:$PORT/${rel%index.html}"
  mkdir -p "$OUT/$(dirname "$rel")"
  for run in $(seq "$RUNS"); do
    timeout 300 "$LH_DIR/node_modules/.bin/lighthouse" "$url" --output=json --quiet --output-path="$OUT/$rel.$run.json" \
      --chrome-flags="--headless --no-sandbox --disable-gpu --disable-background-networking"
  done
done < <(find "$SITE_DIR" -name '*.html' -not -path '*/assets/*' | sort)
python3 - "$OUT" "$RUNS" "$FLAGSHIP" <<'EOF'
"""Median per category and page, the audits that failed in most runs, and the targets."""
import json, statistics, sys
from collections import Counter, defaultdict
from pathlib import Path

out, runs, flagship = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
by_page = defaultdict(list)
for path in sorted(out.rglob("*.json")):
    by_page[path.relative_to(out).as_posix().rsplit(".", 2)[0]].append(json.loads(path.read_text()))
missed = []
print(f"{'perf':>5} {'a11y':>5} {'bp':>5} {'seo':>5}  page  (audits failing in most runs)")
for page, reports in sorted(by_page.items()):
    medians, failing = {}, Counter()
    for report in reports:
        for name in CATEGORIES:
            for ref in report["categories"][name]["auditRefs"]:
                audit = report["audits"][ref["id"]]
                passing = 0.9 if name == "performance" else 1  # a metric in Lighthouse's green band passes
                if ref.get("weight", 0) > 0 and audit.get("score") is not None and audit["score"] < passing:
                    failing[ref["id"]] += 1
    for name in CATEGORIES:
        medians[name] = round(100 * statistics.median(r["categories"][name]["score"] for r in reports))
    noindex = not any(r["audits"]["is-crawlable"]["score"] for r in reports)
    fails = sorted(audit for audit, n in failing.items() if n > len(reports) / 2)
    spread = [round(100 * r["categories"]["performance"]["score"]) for r in reports]
    tbt = statistics.median(r["audits"]["total-blocking-time"]["numericValue"] for r in reports)
    dom = reports[0]["audits"]["dom-size"]["numericValue"]
    print(f"{medians['performance']:>5} {medians['accessibility']:>5} {medians['best-practices']:>5} "
          f"{medians['seo']:>5}  {page}{' (noindex)' if noindex else ''}  perf runs {spread}, "
          f"TBT {tbt:,.0f} ms, DOM {dom:,.0f}  {' '.join(fails)}")
    if not noindex and medians["seo"] < 100:
        missed.append(f"{page}: SEO {medians['seo']} < 100")
    if medians["accessibility"] < 95:
        missed.append(f"{page}: accessibility {medians['accessibility']} < 95")
    if medians["best-practices"] < 100:
        missed.append(f"{page}: best practices {medians['best-practices']} < 100")
    if page == flagship and medians["performance"] < 90:
        missed.append(f"{page}: mobile performance {medians['performance']} < 90")
print("targets met" if not missed else "targets missed:\n  " + "\n  ".join(missed))
sys.exit(1 if missed else 0)
EOF
