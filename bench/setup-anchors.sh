#!/bin/sh
# Installs make bench's anchors from PyPI into a virtual environment (default .venv/bench, which
# bench/bench.sh finds by itself): ctranslate2 and numpy; with --torch also PyPI's torch 2.x (its
# default wheels pull the CUDA libraries: several GB of downloads, docs/BENCH.md; they run on the
# CPU). Debian's torch 1.13 (python3-torch) is the other PyTorch anchor and needs no venv.
#   bench/setup-anchors.sh [--torch] [VENV_DIR]
set -eu
torch=""
[ "${1:-}" = "--torch" ] && torch=torch && shift
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$(dirname "$here")/.venv/bench}
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet ctranslate2 numpy $torch
"$venv/bin/python" -c 'import ctranslate2; print("ctranslate2", ctranslate2.__version__)'
[ -z "$torch" ] || "$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'
echo "setup-anchors: $venv ready; bench/bench.sh uses it (or set CT2_PYTHON / TORCH_PYPI_PYTHON)"
