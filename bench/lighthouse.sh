#!/usr/bin/env bash
# Lighthouse's SEO category on every indexable page of a built site, served on 127.0.0.1.
# Usage: bench/lighthouse.sh [SITE_DIR]   (default: site/; build it first with `mkdocs build`)
# Needs Debian's chromium and Node 20; installs lighthouse 12.2.3 (the last release for Node 20)
# into $LH_DIR once. Exit 1 when any page scores below 100.
set -euo pipefail
SITE_DIR=${1:-site}
SITE_DIR=${SITE_DIR%/}  # "site/" and "site" alike
LH_DIR=${LH_DIR:-$HOME/.cache/blog-lighthouse}
CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
export CHROME_PATH
if [ ! -x "$LH_DIR/node_modules/.bin/lighthouse" ]; then
  mkdir -p "$LH_DIR" && (cd "$LH_DIR" && npm i -E lighthouse@12.2.3 --no-audit --no-fund >/dev/null)
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$SITE_DIR" >/dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
OUT=$(mktemp -d)
worst=100
while IFS= read -r page; do
  rel=${page#"$SITE_DIR"/}
  grep -qi '<meta name="robots" content="noindex' "$page" && continue  # 404 and drafts: not meant to rank
  url="http://127.0.0.1:$PORT/${rel%index.html}"
  json="$OUT/$(echo "$rel" | tr '/' '_').json"
  "$LH_DIR/node_modules/.bin/lighthouse" "$url" --only-categories=seo --output=json --output-path="$json" \
    --quiet --chrome-flags="--headless --no-sandbox --disable-gpu --disable-background-networking"
  score=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["categories"]["seo"]
fails=[a for a,v in r["audits"].items() if v.get("score") is not None and v["score"]<1 and a in {x["id"] for x in c["auditRefs"]}]
print(round(c["score"]*100), ",".join(fails))' "$json")
  printf '%4s  %s %s\n' "${score%% *}" "$rel" "${score#* }"
  [ "${score%% *}" -lt "$worst" ] && worst=${score%% *}
done < <(find "$SITE_DIR" -name '*.html' -not -path '*/assets/*' | sort)
echo "lowest Lighthouse SEO score: $worst"
[ "$worst" -eq 100 ]
