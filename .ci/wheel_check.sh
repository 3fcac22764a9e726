#!/usr/bin/env bash
# Install memcglab like any scientific Python package and use it from an empty directory:
# build the wheel from a clean copy of the tree, install it (not editable) into a fresh
# virtual environment, then run the user's commands in a new temporary directory.
#
# usage: .ci/wheel_check.sh WORKDIR
# Leaves WORKDIR/dist (the wheel), WORKDIR/venv, WORKDIR/results (the output of
# `memcglab reproduce --quick --only 05`), WORKDIR/predict.json (one shipped scenario's
# prediction) and WORKDIR/validate (`memcglab validate --quick --out`).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(realpath -m "${1:?usage: .ci/wheel_check.sh WORKDIR}")
rm -rf "$work/src" "$work/dist" "$work/venv" "$work/results" "$work/predict.json" \
    "$work/validate" "$work/cache"
mkdir -p "$work/src"

step() { printf '\n== %s\n' "$*"; SECONDS=0; }
took() { printf '== %ss\n' "$SECONDS"; }

step "copy the tree (tracked and untracked, not ignored: no stale build/)"
git ls-files -z --cached --others --exclude-standard |
    python3 -c 'import os, shutil, sys
dst = sys.argv[1]
for p in sys.stdin.read().split("\0"):
    if p and os.path.isfile(p):
        os.makedirs(os.path.join(dst, os.path.dirname(p)), exist_ok=True)
        shutil.copy2(p, os.path.join(dst, p))' "$work/src"
took

step "build the wheel"
python3 -m pip wheel -q --no-deps -w "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/memcglab-*.whl)
python3 -c 'import os, sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
print(f"{os.path.basename(sys.argv[1])}: {len(names)} files, {os.path.getsize(sys.argv[1])} bytes")
for need in ("memcglab/_notebooks/01_single_vs_multi.ipynb", "memcglab/_examples/example.trace",
             "memcglab/_data/published/claims.csv"):
    assert need in names, f"the wheel lacks {need}"' "$wheel"
took

step "install it, not editable, into a fresh virtual environment"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel"
took

# Everything below runs from an empty directory, with no checkout in sight.
run=$(mktemp -d)
cd "$run"
export PATH="$work/venv/bin:$PATH"

# One study from the installed wheel proves the packaged notebooks, data and engine; the
# test suite reproduces every study (quick) from the checkout, and CI's docs render that.
step "memcglab reproduce --quick --only 05 (in $run)"
# (--timeout: a fresh install compiles the engine first, about 100 s, beside CI's tests)
memcglab reproduce --quick --only 05 --no-progress --timeout 900 --out "$work/results"
test -f "$work/results/report.md" && test -f "$work/results/05_history/result.json"
took

step "memcglab notebooks"
memcglab notebooks
ls memcglab-notebooks/*.ipynb >/dev/null
took

step "memcglab replay on the shipped example trace"
trace=$(python -c 'from memcglab.resources import example_trace; print(example_trace())')
memcglab replay "$trace" --model multi --check
took

# The fold calibrations of validate are fitted afresh, as on a new user's machine.
export MEMCGLAB_CACHE="$work/cache"

step "memcglab predict on a shipped scenario file"
scenario=$(python -c 'from memcglab.resources import data_dir
print(data_dir() / "scenarios" / "study06" / "tcp_rr-72cpu-multi_vs_v4.toml")')
memcglab predict "$scenario" > "$work/predict.json"
python - "$work/predict.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, f"predict printed {len(lines)} lines, not one"
out = json.loads(lines[0])
keys = ["schema", "name", "file", "metric", "change_pct", "base", "new", "band",
        "calibration", "points", "seed", "memcglab"]
assert list(out) == keys, f"predict's keys {list(out)} are not the contract's {keys}"
kernel = ["ops_per_s", "walks_per_op", "charges_per_op", "uncharges_per_op", "profile",
          "bottleneck"]
assert out["base"]["conditioning"] == "none", out["base"]["conditioning"]
for k in ("base", "new"):
    got = [x for x in out[k] if x != "conditioning"]
    assert got == kernel, f"predict's {k} keys {list(out[k])}"
print(f"change {out['change_pct']}, calibration {out['calibration'][:20]}...")
PY
took

step "memcglab validate --quick --out"
python -c 'import importlib.util as u; print("tabulate importable:", u.find_spec("tabulate") is not None)'
memcglab validate --quick --out "$work/validate" > "$work/validate.md"
for f in scoreboard.parquet summary.csv profiles.parquet buildup.csv; do
    test -s "$work/validate/$f" || { echo "validate wrote no $f" >&2; exit 1; }
done
ls "$work"/validate/calibration-without-*.json >/dev/null
grep -q '^## Summary' "$work/validate.md"
took

step "python -m memcglab --version"
python -m memcglab --version
took
rm -rf "$run"
