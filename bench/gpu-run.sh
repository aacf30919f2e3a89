#!/usr/bin/env bash
# Run every snippet on the GPU machine with the project's own command; bring the results back.
#
# The GPU machine (device tool, kind nvidia-h200: Python 3.12.3, torch 2.11, triton 3.6) has no
# Jupyter packages and no network; bench/gpu-wheels.sh fetches them here into .whl/ first.
# Steps, each logged, timed and bounded (budgets in seconds; override by the variables named):
#   install  the wheels into /tmp/site (the device README's pip line); PYTHONPATH=/tmp/site:$PWD
#   check    nvidia-smi, torch.cuda, the carried imports: a failure here stops the run
#   run      `python3 -m perfblog.core.cli run --device cuda` on every snippet    GPU_RUN_BUDGET_RUN=400
#   pack     snippets/_results/*/cuda-*.json and their -files/ into $OUT/gpu-results.tar.gz
#   status   `python3 -m perfblog.core.cli status`
#   tests    pytest tests/test_compile_claims.py tests/test_bench_harness.py   GPU_RUN_BUDGET_TESTS=90
#            (CPU-safe claims under torch 2.11: the version-compatibility check)
#   harness  bench/harness_accuracy.py: harness vs triton.testing.do_bench      GPU_RUN_BUDGET_HARNESS=120
# It exits 1 naming every failed step (results that did succeed are packed all the same), 2 when
# nothing could run (no wheels, no GPU, an import fails). $OUT gets gpu-run.log (all output),
# summary.txt (one line a step) and gpu-results.tar.gz.
#
# Here, before the device call (about 15 MiB of wheels):
#   bash bench/gpu-wheels.sh
# The device call: about 8 minutes at worst (run 400 s + install, checks, tests and harness about
# 90 s); timeout_s 600 is only the backstop, and the results are packed as soon as `run` ends:
#   run  command: bash bench/gpu-run.sh   timeout_s: 600   carry: [".whl"]
#   (snippet stems as arguments run only those: bash bench/gpu-run.sh cuda_graphs model_bench)
# Back here, from the repository root (files_at is the folder the tool's reply names):
#   tar -tzf FILES_AT/gpu-results.tar.gz          # only snippets/_results/*/cuda-* paths
#   tar -xzf FILES_AT/gpu-results.tar.gz          # lands in snippets/_results/<stem>/
#   .venv/bin/blog status                         # each snippet: its cuda-nvidia-h200 row fresh, shown
#   .venv/bin/blog show cuda_graphs               # provenance names the H200, torch 2.11
# then read FILES_AT/summary.txt and gpu-run.log (harness ratios, test outcome) and commit the results.
#
# Rehearsal on a machine without a GPU (tests the wheels, the steps and the packing, never for
# results): GPU_RUN_REHEARSAL=1 runs on --device cpu, packs cpu-* results, skips the GPU checks;
# PYTHON picks the interpreter, GPU_RUN_SNIPPETS_DIR a snippets folder, GPU_RUN_STEPS the steps after
# check ("run pack status tests harness"), GPU_RUN_SITE the install folder, OUT the output folder.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

PY=${PYTHON:-python3}
SITE=${GPU_RUN_SITE:-/tmp/site}
SNIPPETS=${GPU_RUN_SNIPPETS_DIR:-snippets}
STEPS=${GPU_RUN_STEPS:-run pack status tests harness}
REHEARSAL=${GPU_RUN_REHEARSAL:-0}
if [[ $REHEARSAL == 1 ]]; then DEVICE=cpu; else DEVICE=cuda; fi
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-run-out.XXXXXX")}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
exec > >(tee -a "$OUT/gpu-run.log") 2>&1
TEE=$!

export PYTHONUNBUFFERED=1 COLUMNS=160
# Marks every process this run starts (kernels inherit it), so that leftovers, and only they, are ended.
export GPU_RUN_ID="gpu-run-$$-$RANDOM"
FAILED=()

note() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

# step NAME BUDGET COMMAND...: run it under a time limit (SIGINT first, so blog ends its kernels).
step() {
  local name=$1 budget=$2 start rc
  shift 2
  echo "== $name (at most ${budget} s): $*"
  start=$SECONDS
  if declare -F "$1" >/dev/null; then "$@"; else timeout -s INT -k 20 "$budget" "$@"; fi
  rc=$?
  end_leftovers
  if [[ $rc == 0 ]]; then
    note "ok      $name ($((SECONDS - start)) s)"
  else
    local why="exit $rc"
    [[ $rc == 124 || $rc == 137 ]] && why="over its ${budget} s budget"
    note "FAILED  $name ($((SECONDS - start)) s): $why"
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

# The results of this device kind, as paths from the snippets folder's parent: snippets/_results/...
# shellcheck disable=SC2317  # results and pack are called through step
results() {
  (cd "$SNIPPETS/.." && find "$(basename "$SNIPPETS")/_results" -mindepth 2 -maxdepth 2 -name "$DEVICE-*" | sort)
}

# shellcheck disable=SC2317
pack() {
  local paths jsons total
  mapfile -t paths < <(results)
  if ((${#paths[@]} == 0)); then
    echo "no $DEVICE-* results under $SNIPPETS/_results"
    return 1
  fi
  tar -czf "$OUT/gpu-results.tar.gz" -C "$SNIPPETS/.." "${paths[@]}" || return 1
  jsons=$(printf '%s\n' "${paths[@]}" | grep -c '\.json$')
  total=$(find "$SNIPPETS" -maxdepth 1 -name '*.py' ! -name '_*' | wc -l)
  note "packed  $jsons $DEVICE result(s) for $total snippet(s) ($(du -h "$OUT/gpu-results.tar.gz" | cut -f1))"
  local stem missing=()
  for stem in $(find "$SNIPPETS" -maxdepth 1 -name '*.py' ! -name '_*' -printf '%f\n' | sed 's/\.py$//' | sort); do
    compgen -G "$SNIPPETS/_results/$stem/$DEVICE-*.json" >/dev/null || missing+=("$stem")
  done
  ((${#missing[@]})) && note "missing $DEVICE results: ${missing[*]}"
  tar -tzf "$OUT/gpu-results.tar.gz"
}

finish() {
  echo "== summary ($OUT)"
  cat "$SUMMARY"
  if ((${#FAILED[@]})); then
    echo "gpu-run: FAILED: ${FAILED[*]} (see gpu-run.log); whatever succeeded is in gpu-results.tar.gz"
    leave 1
  fi
  echo "gpu-run: all steps ok"
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

echo "== gpu-run $(date -u +%FT%TZ) device=$DEVICE python=$PY out=$OUT"
echo "git: $(git rev-parse HEAD 2>/dev/null || echo 'no repository here: results record git_commit null')"
compgen -G ".whl/*.whl" >/dev/null || fatal "no wheels in .whl/: run bench/gpu-wheels.sh here and carry .whl"
step install 90 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$SITE" .whl/*.whl || fatal "the wheels did not install"
export PYTHONPATH="$SITE:$PWD"

if [[ $DEVICE == cuda ]]; then
  nvidia-smi || fatal "nvidia-smi failed: no usable GPU"
fi
step check 90 "$PY" - "$DEVICE" "$SITE" <<'EOF' || fatal "the environment check failed (above)"
"""Versions, the GPU, and every carried requirement against what this interpreter has."""
import importlib.metadata as md
import platform
import sys

from packaging.requirements import Requirement

device, site = sys.argv[1], sys.argv[2]
print("python", platform.python_version(), sys.executable)
for name in ("torch", "triton", "jupytext", "nbclient", "ipykernel", "pyzmq", "rich", "jinja2", "pyyaml"):
    try:
        print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"  {name} missing")
# pip installed the wheels with --no-deps: say which requirement the image meets with a wrong version.
carried = list(md.distributions(path=[site]))
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
import jupytext, nbclient, ipykernel, zmq  # noqa: E401,F401  after the warnings that explain a failure
from perfblog.generator import cli

cli.build_parser()  # `blog` starts: every subcommand's module imports
if device == "cuda":
    import torch

    assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
    index = torch.cuda.current_device()
    print("cuda", torch.version.cuda, torch.cuda.get_device_name(index), torch.cuda.get_device_capability(index))
EOF

for name in $STEPS; do
  case $name in
    run) step run "${GPU_RUN_BUDGET_RUN:-400}" "$PY" -m perfblog.core.cli run --device "$DEVICE" \
           --snippets-dir "$SNIPPETS" "$@" ;;
    pack) step pack 60 pack ;;
    status) step status 60 "$PY" -m perfblog.core.cli status --snippets-dir "$SNIPPETS" ;;
    tests) step tests "${GPU_RUN_BUDGET_TESTS:-90}" "$PY" -m pytest -q -p no:cacheprovider \
             tests/test_compile_claims.py tests/test_bench_harness.py ;;
    harness) step harness "${GPU_RUN_BUDGET_HARNESS:-120}" "$PY" bench/harness_accuracy.py ;;
    *) fatal "unknown step $name in GPU_RUN_STEPS" ;;
  esac
done
finish
