#!/usr/bin/env bash
# Build the documentation site with warnings as errors.
#
# usage: .ci/docs.sh RESULTS
# RESULTS is the --out directory of a `memcglab reproduce --quick` run: its executed
# notebooks (RESULTS/NN_name/NN_name.ipynb) are copied into docs/studies/_executed/ and
# rendered as they are, never executed again. Needs `pip install -e '.[docs]'` (or the
# docs extra beside an installed memcglab). The site is written to docs/_build/html.
set -euo pipefail
cd "$(dirname "$0")/.."
results=${1:?usage: .ci/docs.sh RESULTS (the --out of memcglab reproduce --quick)}

notebooks=()
for nb in "$results"/[0-9][0-9]_*/[0-9][0-9]_*.ipynb; do
    [ -f "$nb" ] && notebooks+=("$nb")
done
if [ ${#notebooks[@]} -eq 0 ]; then
    echo ".ci/docs.sh: no executed notebooks in $results (expected NN_name/NN_name.ipynb);" \
         "run: memcglab reproduce --quick --out $results" >&2
    exit 2
fi
executed=docs/studies/_executed
rm -rf "$executed" docs/_api docs/_build
mkdir -p "$executed"
cp "${notebooks[@]}" "$executed/"
n=${#notebooks[@]}
echo "rendering $n executed notebooks from $results"
sphinx-build -W --keep-going -q -b html docs docs/_build/html
echo "site: docs/_build/html/index.html"
