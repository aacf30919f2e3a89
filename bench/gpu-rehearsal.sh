#!/usr/bin/env bash
# Rehearse the GPU run on this machine's CPU, under the GPU machine's versions: Python 3.12, torch 2.11,
# triton 3.6 (run by hand, never in CI; docs/gpu-runbook.md says how long each step took).
#
# API drift between torch 2.11 (the GPU image) and 2.13 (this project's pin) shows here, before a GPU
# is lent: every snippet runs under 2.11 through the very script the GPU machine runs
# (bench/gpu-run.sh with GPU_RUN_REHEARSAL=1: --device cpu, the rehearsal budgets, no GPU checks), on a
# copy of the working tree made the way the device tool makes one, so no committed result is touched.
#
# Steps (each timed; the times go to REHEARSAL_OUT/steps.txt):
#   python  a Python 3.12 from pyenv (installed when missing)
#   env     a virtual environment outside the repository, like the image's /opt/torch/.venv, made by
#           perfblog.generator.run.envs (reused while its Python and requirements are the same):
#           torch==2.11.0 and triton==3.6.0 from PyPI, the CUDA build (several GB of nvidia-* wheels),
#           which runs on a CPU as the image's does on its GPU, and the other packages the GPU image
#           has that `blog run` and the carried wheels need
#   wheels  bench/gpu-wheels.sh: the carried wheels and this project's own wheel, into .whl/
#   copy    the working tree (tracked and untracked files that git does not ignore) and .whl, into a
#           temporary folder: what the device tool sends
#   run     bench/gpu-run.sh in that copy, with this environment's python, OUT=REHEARSAL_OUT/out
#   tests   pytest tests/blog/test_compile_claims.py under torch 2.11 (the in-process claims)
#
#   bash bench/gpu-rehearsal.sh                      # every step; reuses an existing environment
#   REHEARSAL_FRESH=1 bash bench/gpu-rehearsal.sh    # make the environment again from nothing (timed)
#   REHEARSAL_STEPS="copy run" bash bench/gpu-rehearsal.sh   # only these steps
#   bash bench/gpu-rehearsal.sh item_capture model_bench     # arguments go to gpu-run.sh: only these
# Variables: REHEARSAL_VENV (default ~/.cache/perfblog/gpu-rehearsal-py312), REHEARSAL_OUT (default
# a new folder under /tmp), REHEARSAL_PYTHON_VERSION (3.12).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

VERSION=${REHEARSAL_PYTHON_VERSION:-3.12}
VENV=${REHEARSAL_VENV:-$HOME/.cache/perfblog/gpu-rehearsal-py312}
OUT=${REHEARSAL_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-rehearsal.XXXXXX")}
STEPS=${REHEARSAL_STEPS:-python env wheels copy run tests}
TORCH_PIN=(torch==2.11.0 triton==3.6.0)
# What the GPU image has besides torch (the device README's package list) that `blog run`, the
# snippets and the carried wheels import; their versions there are not listed, so pip picks.
IMAGE_PKGS=(numpy jinja2 markupsafe rich pygments markdown-it-py mdurl pyyaml psutil lxml markdown packaging
  python-dateutil typing-extensions attrs click pathspec pytest pillow
  matplotlib pandas)  # not on the image: only rich_outputs imports them, and it never runs there (gpu_s 0)
mkdir -p "$OUT"
: >"$OUT/steps.txt"
COPY=$OUT/tree
SITE=$OUT/site
PY=

timed() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name: $*"
  "$@"
  printf '%-7s %5d s\n' "$name" $((SECONDS - start)) | tee -a "$OUT/steps.txt"
}

find_python() {
  local have
  have=$(pyenv latest "$VERSION" 2>/dev/null || true)
  if [[ -z $have ]]; then
    pyenv install -s "$VERSION"
    have=$(pyenv latest "$VERSION")
  fi
  PY=$(pyenv root)/versions/$have/bin/python$VERSION
  "$PY" --version
}

# The one environment builder (it says whether it made or reused the environment, and its size).
make_env() {
  local fresh=()
  if [[ ${REHEARSAL_FRESH:-0} == 1 ]]; then fresh=(--fresh); fi
  .venv/bin/python -m perfblog.generator.run.envs --python "$PY" --into "$VENV" "${fresh[@]}" \
    "${TORCH_PIN[@]}" "${IMAGE_PKGS[@]}"
}

# The device tool sends tracked files and untracked ones git does not ignore, plus the carried .whl.
copy_tree() {
  rm -rf "$COPY"
  mkdir -p "$COPY"
  git ls-files -z --cached --others --exclude-standard | grep -zv '^snippets/_results/\.lock$' |
    tar --null -T - -cf - | tar -xf - -C "$COPY"
  cp -r .whl "$COPY/.whl"
  du -sh "$COPY" | sed 's/\t.*/ sent (device limit 64 MiB)/'
}

run_gpu_script() {
  (cd "$COPY" && PYTHON="$VENV/bin/python" GPU_RUN_REHEARSAL=1 GPU_RUN_SITE="$SITE" OUT="$OUT/out" \
     bash bench/gpu-run.sh "$@")
}

run_tests() {
  (cd "$COPY" && PYTHONPATH="$SITE" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
     tests/blog/test_compile_claims.py)
}

for step in $STEPS; do
  case $step in
    python) timed python find_python ;;
    env) [[ -n $PY ]] || find_python >/dev/null; timed env make_env ;;
    wheels) timed wheels bash bench/gpu-wheels.sh ;;
    copy) timed copy copy_tree ;;
    run) timed run run_gpu_script "$@" || echo "gpu-run.sh failed: see $OUT/out/gpu-run.log" ;;
    tests) timed tests run_tests || echo "the claim tests failed under this torch (above)" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
"$VENV/bin/python" -c 'import sys, torch, triton; print("rehearsed with python", sys.version.split()[0],
  "torch", torch.__version__, "triton", triton.__version__)' | tee -a "$OUT/steps.txt"
echo "step times: $OUT/steps.txt"
cat "$OUT/steps.txt"
