#!/usr/bin/env bash
# Fetch, HERE, the wheels that bench/gpu-run.sh installs on the GPU machine (no network there).
#
# The GPU image (Python 3.12.3, torch 2.11, triton 3.6) has no Jupyter packages. `blog run` needs
# jupytext, nbclient and ipykernel, and its command modules import mkdocs (the plugin's config schema);
# this downloads them and every dependency of theirs that the image lacks, as Python 3.12 x86-64
# wheels, into .whl/ (ignored by git; the device call carries it). It also builds this project's own
# wheel: `blog` and the plugins run from it as a user installs them (its script and entry points);
# gpu-run.sh checks there that the wheel's modules are byte for byte this tree's src/.
# The versions are those pinned and tested here (.venv); compiled ones (pyzmq, tornado, wcwidth,
# rpds-py) come as cp312 manylinux wheels. Everything else they need is already on the image
# (IMAGE below, copied from the device README's package list): it is not carried, since a second
# version beside the image's would shadow it.
# `blog run` itself starts with the image's packages: rich, jinja2, pyyaml, lxml, psutil, click.
#
#   bash bench/gpu-wheels.sh          # then: du -sh .whl; the device call names .whl in carry
#
# It checks, from each wheel's METADATA, that every requirement (Python 3.12, Linux) is met by a
# carried wheel or an image package, and exits 1 naming any that is not.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
DEST=.whl

WHEELS=(
  # what `blog run` imports
  jupytext==1.19.6 nbclient==0.11.0 ipykernel==7.4.0
  # the kernel and its client
  ipython==9.18.1 ipython-pygments-lexers==1.1.1 jupyter-client==8.10.0 jupyter-core==5.9.1
  comm==0.2.3 debugpy==1.8.22 matplotlib-inline==0.2.2 nest-asyncio2==1.7.4 traitlets==5.16.1
  pyzmq==27.3.0 tornado==6.6.1 platformdirs==4.14.9
  # IPython's own needs
  jedi==0.20.1 parso==0.8.7 pexpect==4.9.0 ptyprocess==0.7.0 prompt-toolkit==3.0.53 wcwidth==0.9.4
  stack-data==0.6.3 asttokens==3.0.2 executing==2.3.0 pure-eval==0.2.4
  # notebooks: nbformat validates with jsonschema; jupytext parses Markdown with mdit-py-plugins
  nbformat==5.11.1 fastjsonschema==2.22.3 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
  referencing==0.37.0 rpds-py==2026.9.1 mdit-py-plugins==0.7.0
  # `blog run` imports mkdocs.config (perfblog.generator.config); babel, its optional extra, stays behind
  mkdocs==1.6.1 mkdocs-get-deps==0.2.2 ghp-import==2.1.0 mergedeep==1.3.4 pyyaml-env-tag==1.1 watchdog==7.1.0
  # `blog` builds every command family's parser: the seo commands import Protego (robots.txt), the
  # renderer imports nh3 (the sanitizer)
  protego==0.7.0 nh3==0.3.8
  # the snippets extra, which the engine checks for as it starts (generator/needs.py): 10 MiB of MathJax
  django-static-mathjax==3.2.2.1
)

# On the GPU image already (the device README's list, 2026-11-17): requirements these satisfy.
IMAGE="attrs markdown-it-py mdurl packaging psutil pygments python-dateutil pyyaml typing-extensions
  jinja2 markupsafe rich lxml numpy markdown pytest torch triton click pathspec pillow"
# This project's own wheel. Its requirements are part of the closure check, except the image's torch,
# triton and numpy (the GPU run uses the image's versions, not this machine's pins) and what only a site
# build imports (SITE_ONLY; the rehearsal proves `blog run` starts without them). A dependency added to
# pyproject.toml therefore fails this script until it is carried here or listed there.
SELF=perfblog
SITE_ONLY="mkdocs-material pymdown-extensions rjieba pypinyin"

rm -rf "$DEST.new"
trap 'rm -rf "$DEST.new"' EXIT  # never leave a half set where the device call would carry it
mkdir -p "$DEST.new"
"$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d "$DEST.new" "${WHEELS[@]}"
# Built from a copy of the tree as it is now (uncommitted edits too: the device call sends those), so
# that setuptools' build/ folder never lands in the working tree.
mkdir "$DEST.new/src"
cp -r pyproject.toml src "$DEST.new/src/"
"$PYTHON" -m pip wheel -q --disable-pip-version-check --no-deps -w "$DEST.new" "$DEST.new/src"
rm -rf "$DEST.new/src"

# Check the set is closed: every requirement met by a carried wheel or an image package.
"$PYTHON" - "$DEST.new" "$IMAGE" "$SELF" "$SITE_ONLY" <<'EOF'
import re
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

folder, image = Path(sys.argv[1]), {canonicalize_name(n) for n in sys.argv[2].split()}
own = canonicalize_name(sys.argv[3])
not_checked = {canonicalize_name(n) for n in ["torch", "triton", "numpy", *sys.argv[4].split()]}
env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
       "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64",
       "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}
carried, needs = {}, []
for wheel in sorted(folder.glob("*.whl")):
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))
        meta = Parser().parsestr(zf.read(name).decode())
        if any(n.endswith(".pth") for n in zf.namelist()):
            sys.exit(f"{wheel.name} ships a .pth file, which a --target install on PYTHONPATH ignores")
    dist = canonicalize_name(meta["Name"])
    if dist in carried:
        sys.exit(f"two versions of {dist}: keep one (pip install stops on two)")
    carried[dist] = Version(meta["Version"])
    for text in meta.get_all("Requires-Dist") or []:
        req = Requirement(text)
        if not (dist == own and canonicalize_name(req.name) in not_checked):
            needs.append((dist, req))
missing = []
for dist, req in needs:
    if req.marker and not req.marker.evaluate(env):
        continue
    name = canonicalize_name(req.name)
    if name in carried:
        if not req.specifier.contains(carried[name], prereleases=True):
            missing.append(f"{dist} needs {req}, carried {carried[name]}")
    elif name not in image:
        missing.append(f"{dist} needs {req}: neither carried nor on the image")
if missing:
    sys.exit("the wheel set is not closed:\n  " + "\n  ".join(missing))
print(f"{len(carried)} wheels, every requirement met by a carried wheel or the image")
EOF

rm -rf "$DEST"
mv "$DEST.new" "$DEST"
du -ch "$DEST"/*.whl | tail -1 | sed 's/total/in .whl (carry limit 64 MiB with the working tree)/'
