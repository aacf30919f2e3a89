#!/usr/bin/env bash
# The GPU run: every snippet on the H200 machine, most valuable first, each within its own budget,
# the whole run within 4 minutes; the results come back however far it got.
#
# The GPU machine (device tool, kind nvidia-h200: Python 3.12, torch 2.11, triton 3.6) has no Jupyter
# packages, no mkdocs and no network; bench/gpu-wheels.sh fetches them here into .whl/, with this
# project's own wheel (`blog` finds its commands through the entry points that installing it brings).
# Steps, each logged and timed:
#   install   the carried wheels into GPU_RUN_SITE (/tmp/site), on PYTHONPATH   (at most 60 s)
#   check     nvidia-smi, torch.cuda, the carried requirements, the perfblog wheel byte for byte
#             against src/ (a stale wheel would run other code than the results' keys name), and
#             `blog` building its parser: a failure here stops the run        (at most 60 s)
#   snippets  one `blog run --force --device cuda STEM` per line of bench/gpu-run-plan.tsv, in its
#             order (snippets missing from the plan come last, 30 s each), each under its own budget;
#             a budget of 0 marks a snippet whose tensors never touch CUDA: not run on the GPU.
#             A snippet starts only if its budget fits in what is left of GPU_RUN_DEADLINE (240 s from
#             the start); after each one the results are packed again into $OUT/gpu-results.tar.gz,
#             so a run cut short still brings back every snippet that finished.
#   harness   bench/harness_accuracy.py (the harness against triton.testing.do_bench; in a rehearsal
#             against torch.utils.benchmark), only if 45 s are left and no stems were given
# $OUT (the device tool's folder) gets gpu-run.log (everything), summary.txt (a line a step and the
# headline values of each result) and gpu-results.tar.gz (snippets/_results/*/cuda-*). It exits 0
# when every planned snippet ran, 1 naming those that failed or did not fit, 2 when nothing could run.
#
# Here, before the device call:
#   bash bench/gpu-wheels.sh                     # about 20 MiB into .whl/, the project wheel included
# The device call (about 4 minutes of the 15 a session has; timeout_s leaves room for a second try):
#   run  command: bash bench/gpu-run.sh   timeout_s: 330   carry: [".whl"]
#   (snippet stems as arguments run only those, in the plan's order: bash bench/gpu-run.sh model_bench)
# Back here, from the repository root (files_at is the folder the tool's reply names):
#   tar -tzf FILES_AT/gpu-results.tar.gz          # only snippets/_results/*/cuda-* paths
#   tar -xzf FILES_AT/gpu-results.tar.gz          # lands in snippets/_results/<stem>/
#   .venv/bin/blog status                         # each snippet: its cuda-nvidia-h200 row
# then read FILES_AT/summary.txt and commit the results (docs/gpu-runbook.md has the whole procedure).
#
# Rehearsal without a GPU (bench/gpu-rehearsal.sh does it under torch 2.11): GPU_RUN_REHEARSAL=1 runs
# on --device cpu with the plan's rehearsal budgets and no deadline, skips the GPU checks and packs
# cpu-* results. PYTHON picks the interpreter, GPU_RUN_SITE the install folder, GPU_RUN_DEADLINE the
# whole run's seconds (0: none), OUT the output folder.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

PY=${PYTHON:-python3}
SITE=${GPU_RUN_SITE:-/tmp/site}
PLAN=bench/gpu-run-plan.tsv
REHEARSAL=${GPU_RUN_REHEARSAL:-0}
if [[ $REHEARSAL == 1 ]]; then
  DEVICE=cpu BUDGET_COLUMN=3 DEADLINE=${GPU_RUN_DEADLINE:-0}
else
  DEVICE=cuda BUDGET_COLUMN=2 DEADLINE=${GPU_RUN_DEADLINE:-240}
fi
UNPLANNED_BUDGET=30
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-run-out.XXXXXX")}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
exec > >(tee -a "$OUT/gpu-run.log") 2>&1
TEE=$!

export PYTHONUNBUFFERED=1 COLUMNS=160
# Marks every process this run starts (kernels inherit it), so that leftovers, and only they, are ended.
export GPU_RUN_ID="gpu-run-$$-$RANDOM"
FAILED=() SKIPPED=() RAN=()

note() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
left() { echo $((DEADLINE - SECONDS)); }

# step NAME BUDGET COMMAND...: run it under a time limit (SIGINT first, so that blog ends its kernel).
step() {
  local name=$1 budget=$2 start rc why
  shift 2
  echo "== $name (at most ${budget} s, $SECONDS s into the run): $*"
  start=$SECONDS
  timeout -s INT -k 5 "$budget" "$@"
  rc=$?
  end_leftovers
  if [[ $rc == 0 ]]; then
    note "ok      $name ($((SECONDS - start)) s of ${budget} s)"
  else
    why="exit $rc"
    [[ $rc == 124 || $rc == 137 ]] && why="over its ${budget} s budget"
    note "FAILED  $name ($((SECONDS - start)) s of ${budget} s): $why"
    FAILED+=("$name")
  fi
  return "$rc"
}

end_leftovers() {
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" ]] && continue
    if grep -qzx "GPU_RUN_ID=$GPU_RUN_ID" "$p/environ" 2>/dev/null; then
      echo "ending a leftover process ${p#/proc/}: $(tr '\0' ' ' 2>/dev/null <"$p/cmdline" | cut -c1-120)"
      kill -9 "${p#/proc/}" 2>/dev/null
    fi
  done
}

# The plan's snippets that exist, in its order, then the unplanned ones; "stem budget" lines.
# Arguments, when given, keep only those stems.
schedule() {
  local stem budget
  declare -A planned=()
  while IFS=$'\t' read -r stem budget; do
    [[ -f snippets/$stem.py ]] || continue
    planned[$stem]=1
    want "$stem" && echo "$stem $budget"
  done < <(grep -v '^#' "$PLAN" | cut -f1,"$BUDGET_COLUMN")
  for stem in $(find snippets -maxdepth 1 -name '*.py' ! -name '_*' -printf '%f\n' | sed 's/\.py$//' | sort); do
    [[ -n ${planned[$stem]:-} ]] || { want "$stem" && echo "$stem $UNPLANNED_BUDGET"; }
  done
}
want() { ((${#ONLY[@]} == 0)) || [[ " ${ONLY[*]} " == *" $1 "* ]]; }

# Pack every result of this device kind; replaced atomically, so a cut-off run keeps the last good pack.
pack() {
  local paths
  mapfile -t paths < <(find snippets/_results -mindepth 2 -maxdepth 2 -name "$DEVICE-*" | sort)
  ((${#paths[@]})) || return 0
  tar -czf "$OUT/.gpu-results.tar.gz" "${paths[@]}" && mv "$OUT/.gpu-results.tar.gz" "$OUT/gpu-results.tar.gz"
}

# The plan's headline values (or verdicts) of each result this run made (the stems given), for the summary.
headlines() {
  "$PY" - "$PLAN" "$DEVICE" "$@" <<'EOF'
import json
import sys
from pathlib import Path

plan, device, ran = Path(sys.argv[1]), sys.argv[2], set(sys.argv[3:])
for line in plan.read_text().splitlines():
    if line.startswith("#") or not line.strip():
        continue
    stem, *_, names = line.split("\t")
    if stem not in ran:
        continue
    for result in sorted(Path("snippets/_results", stem).glob(f"{device}-*.json")):
        data = json.loads(result.read_text())
        prov = data["provenance"]
        gpu = (prov.get("gpu") or {}).get("name") or prov.get("cpu")
        parts = []
        for n in (n for n in names.split(",") if n):
            if n in data.get("verdicts", {}):  # a verdict: its word, the ratio and its interval
                v = data["verdicts"][n]
                parts.append(f"{n}={v['verdict']} {v['ratio']:.3g} ({v['low']:.3g}-{v['high']:.3g})")
                continue
            v = data["values"].get(n, {}).get("value")
            parts.append(f"{n}={v:.3g}" if isinstance(v, float) else f"{n}={v}")
        shown = ", ".join(parts)
        print(f"  {stem}: {gpu}, torch {prov['torch']}, {prov['duration_s']:.0f} s; {shown}")
EOF
}

finish() {
  note "total   $SECONDS s ($DEVICE; deadline ${DEADLINE} s)"
  headlines "${RAN[@]}" | tee -a "$SUMMARY"
  echo "== summary ($OUT)"
  cat "$SUMMARY"
  if ((${#FAILED[@]} + ${#SKIPPED[@]})); then
    echo "gpu-run: failed: ${FAILED[*]:-none}; did not fit: ${SKIPPED[*]:-none}; the rest is in gpu-results.tar.gz"
    leave 1
  fi
  echo "gpu-run: every planned snippet ran"
  leave 0
}

# Exit once tee has written the whole log into $OUT.
leave() {
  exec >&- 2>&-
  wait "$TEE"
  exit "$1"
}

# The fatal part: without the wheels, a GPU or the imports, nothing can run.
fatal() { note "FATAL   $*"; echo "gpu-run: stopped: $*"; leave 2; }

ONLY=("$@")
echo "== gpu-run $(date -u +%FT%TZ) device=$DEVICE python=$PY out=$OUT deadline=${DEADLINE}s"
echo "git: $(git rev-parse HEAD 2>/dev/null || echo 'no repository here: results record git_commit null')"
compgen -G ".whl/perfblog-*.whl" >/dev/null || fatal "no wheels in .whl/: run bench/gpu-wheels.sh here and carry .whl"
step install 60 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$SITE" .whl/*.whl || fatal "the wheels did not install"
export PYTHONPATH="$SITE"

if [[ $DEVICE == cuda ]]; then
  nvidia-smi || fatal "nvidia-smi failed: no usable GPU"
fi
step check 60 "$PY" - "$DEVICE" "$SITE" <<'EOF' || fatal "the environment check failed (above)"
"""Versions, the GPU, the carried requirements, and the perfblog wheel against this tree."""
import importlib.metadata as md
import platform
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

device, site = sys.argv[1], sys.argv[2]
print("python", platform.python_version(), sys.executable)
for name in ("torch", "triton", "jupytext", "nbclient", "ipykernel", "pyzmq", "mkdocs", "rich", "jinja2"):
    try:
        print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"  {name} missing")
# pip installed the wheels with --no-deps: say which requirement the image meets with a wrong version.
# perfblog's own pins (torch 2.13 and the site's packages) are the development machine's, not checked.
carried = [d for d in md.distributions(path=[site]) if d.metadata["Name"] != "perfblog"]
print(f"  {len(carried)} carried distributions in {site}")
for dist in carried:
    for text in dist.requires or []:
        req = Requirement(text)
        if req.marker and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            have = md.version(req.name)
        except md.PackageNotFoundError:
            print(f"  WARNING {dist.metadata['Name']} needs {req}: not installed")
            continue
        if not req.specifier.contains(have, prereleases=True):
            print(f"  WARNING {dist.metadata['Name']} needs {req}, found {have}")

# The results' keys hash src/perfblog; the kernels import the installed copy: they must be the same.
import perfblog  # noqa: E402

installed, tree = Path(perfblog.__file__).parent, Path("src/perfblog")
differ = sorted(str(p.relative_to(tree)) for p in tree.rglob("*.py")
                if "__pycache__" not in p.parts
                and (not (installed / p.relative_to(tree)).is_file()
                     or (installed / p.relative_to(tree)).read_bytes() != p.read_bytes()))
if differ:
    sys.exit(f"the carried perfblog wheel is not this tree ({', '.join(differ[:5])} differ): "
             "run bench/gpu-wheels.sh again")
meta = tomllib.loads(Path("pyproject.toml").read_text())["project"]
declared = {("console_scripts", name): value for name, value in meta["scripts"].items()}
declared |= {(group, name): value for group, eps in meta["entry-points"].items() for name, value in eps.items()}
found = {(ep.group, ep.name): ep.value for ep in md.distribution("perfblog").entry_points}
if found != declared:
    sys.exit(f"the wheel's entry points {sorted(found)} are not pyproject.toml's {sorted(declared)}")
print(f"  perfblog from {installed}: same modules as src/, entry points {', '.join(n for _, n in sorted(found))}")

import jupytext, nbclient, ipykernel, zmq  # noqa: E401,E402,F401  after the warnings that explain a failure
from perfblog import cli  # noqa: E402

cli.build_parser()  # `blog` starts: every subcommand's module imports
if device == "cuda":
    import torch

    assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
    index = torch.cuda.current_device()
    print("cuda", torch.version.cuda, torch.cuda.get_device_name(index), torch.cuda.get_device_capability(index))
EOF

while read -r stem budget; do
  if ((budget == 0)); then
    note "cpu-only $stem: its tensors never touch CUDA, so its CPU result stands (not run)"
    continue
  fi
  if ((DEADLINE > 0 && budget + 10 > $(left))); then
    note "skipped $stem: its ${budget} s budget, and 10 s to stop it, do not fit in the $(left) s left"
    SKIPPED+=("$stem")
    continue
  fi
  step "$stem" "$((budget + 10))" "$PY" -m perfblog.cli run --force --device "$DEVICE" \
    --snippets-dir snippets --timeout-snippet "$budget" "$stem" </dev/null && RAN+=("$stem")  # stdin: the plan
  pack
done < <(schedule)

if ((${#ONLY[@]} == 0)) && ((DEADLINE == 0 || $(left) >= 45)); then
  step harness 40 "$PY" bench/harness_accuracy.py --rounds 5
fi
finish
