"""Every command of the README's "Commands" section, run as a user runs it.

Each test starts the installed ``memcglab`` script (the one beside this interpreter;
``python -m memcglab`` where there is none) as a subprocess, in an EMPTY temporary
directory, with no ``PYTHONPATH`` and no plugins: nothing from the checkout is on the
path but what the install itself provides. The arguments are the README's (its examples
where it gives one), in their quick or small forms, and each test checks the exit status
and the form of what the command prints and writes.

Already covered elsewhere, and not repeated here:

* ``python -m memcglab`` with ``--help``, a bad command, and ``notebooks DIR``:
  ``tests/test_cli.py`` (with ``PYTHONPATH`` set to the checkout);
* ``memcglab replay -`` (stdin) through the installed script: ``tests/test_replay_cli.py``;
* ``memcglab predict``'s options, errors and determinism: ``tests/scenario/test_predict.py``
  (from the test run's directory); a plugin's design: ``tests/scenario/test_plugin_design.py``;
* ``memcglab probe``'s errors (no gcc on PATH): ``tests/probe/test_cli.py``;
* ``memcglab reproduce`` stopped by a signal: ``tests/test_reproduce_interrupt.py``;
  ``memcglab sweep`` stopped and resumed: ``tests/sweep/test_interrupt.py``;
* the installed wheel, from an empty directory: ``.ci/wheel_check.sh``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pytest

from memcglab.resources import data_dir, example_trace, study_notebooks
from memcglab.scenario.output import PROFILE_FUNCTIONS

BIN = Path(sys.executable).parent
SCRIPT = shutil.which("memcglab", path=str(BIN))
MEMCGLAB = [SCRIPT] if SCRIPT else [sys.executable, "-m", "memcglab"]
#: the replay contract's output keys (docs/replay-contract.md, "Output")
REPLAY_KEYS = ["batch", "counters", "failed_charges", "memcgs", "model", "ops", "seed",
               "set_max_busy", "short_uncharges", "slots", "stocks", "warnings"]
#: the scenario contract's output keys, in its order (docs/scenario-contract.md, "Output")
PREDICT_KEYS = ["schema", "name", "file", "metric", "change_pct", "base", "new", "band",
                "calibration", "points", "seed", "memcglab"]
KERNEL_KEYS = ["ops_per_s", "walks_per_op", "charges_per_op", "uncharges_per_op", "profile",
               "bottleneck"]
#: the README's predict example
STUDY06_TCP_RR = data_dir() / "scenarios" / "study06" / "tcp_rr-72cpu-multi_vs_v4.toml"


def user_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: this venv's bin first on PATH, no PYTHONPATH, no
    plugins (the test run's own settings must not help the command find anything)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MEMCGLAB_PLUGINS", "PYTEST_XDIST_WORKER")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def memcglab(*args: str, cwd: Path, timeout: float = 300,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``memcglab ARGS...`` in ``cwd``, as a user types it."""
    return subprocess.run([*MEMCGLAB, *args], cwd=cwd, env=env or user_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    """An empty working directory."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd


def band(b: dict) -> bool:
    return list(b) == ["median", "low", "high"] and b["low"] <= b["median"] <= b["high"]


# --version; python -m memcglab -------------------------------------------------------


def test_version_from_the_script_and_from_python_dash_m(empty):
    want = f"memcglab {version('memcglab')}\n"
    for command in (MEMCGLAB, [sys.executable, "-m", "memcglab"]):
        done = subprocess.run([*command, "--version"], cwd=empty, env=user_env(),
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == (0, want, ""), command
    assert list(empty.iterdir()) == []


# replay ------------------------------------------------------------------------------


@pytest.fixture
def examples(empty: Path) -> Path:
    """The README's ``examples/example.trace``, copied from the shipped one."""
    (empty / "examples").mkdir()
    shutil.copy(example_trace(), empty / "examples" / "example.trace")
    return empty


@pytest.mark.parametrize("engine", ["faithful", "compiled"])
def test_replay_prints_the_contracts_json_line(examples, engine):
    done = memcglab("replay", "examples/example.trace", "--engine", engine, cwd=examples)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1
    out = json.loads(done.stdout)
    assert list(out) == REPLAY_KEYS
    assert (out["model"], out["slots"], out["batch"], out["seed"]) == ("multi", 7, 64, 0)
    assert done.stdout == json.dumps(out, sort_keys=True, separators=(",", ":")) + "\n"


@pytest.mark.parametrize("engine", ["faithful", "compiled"])
def test_replay_check_finds_the_historic_leak(examples, engine):
    # the README's example: exit 1, nothing on stdout, one line naming the trace's line
    done = memcglab("replay", "examples/example.trace", "--model", "multi-fix2", "--check",
                    "--engine", engine, cwd=examples)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("examples/example.trace:5: conservation broken after "
                                  "operation 3 (charge)")
    assert done.stderr.count("\n") == 1
    fine = memcglab("replay", "examples/example.trace", "--model", "multi", "--check",
                    "--policy", "lru", "--slots", "2", "--seed", "3", "--batch", "32",
                    "--refill", "not-in-irq", "--engine", engine, cwd=examples)
    assert fine.returncode == 0, fine.stderr
    out = json.loads(fine.stdout)
    assert (out["slots"], out["seed"], out["batch"], out["policy"]) == (2, 3, 32, "lru")


# predict -----------------------------------------------------------------------------


def test_predict_answers_a_shipped_scenario_from_an_empty_directory(empty):
    done = memcglab("predict", str(STUDY06_TCP_RR), cwd=empty)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    out = json.loads(done.stdout)
    assert list(out) == PREDICT_KEYS
    assert out["file"] == str(STUDY06_TCP_RR) and out["metric"] == "ops_per_s"
    assert out["calibration"].startswith("default:") and out["points"] == 512
    assert out["memcglab"] == version("memcglab") and band(out["change_pct"])
    # revision 2: the base's conditioning comes first (none: the file gives no base run)
    assert out["base"]["conditioning"] == "none"
    assert set(out["band"]) == {"model_error", "alternatives", "hardware", "work"}
    for kernel in ("base", "new"):
        keys = [k for k in out[kernel] if k != "conditioning"]
        assert keys == KERNEL_KEYS
        assert band(out[kernel]["ops_per_s"])
        assert list(out[kernel]["profile"]) == list(PROFILE_FUNCTIONS)
    assert list(empty.iterdir()) == []
    # --out: the same object, in a JSON list, in a file relative to the directory
    written = memcglab("predict", str(STUDY06_TCP_RR), "--out", "p.json", cwd=empty)
    assert written.returncode == 0 and written.stdout == "", written.stderr
    assert json.loads((empty / "p.json").read_text()) == [out]


# validate ----------------------------------------------------------------------------


@pytest.fixture
def without_tabulate(tmp_path: Path) -> dict[str, str]:
    """A user's environment in which ``import tabulate`` fails, as in a fresh install of
    the wheel (pandas' ``to_markdown`` needs it; memcglab does not depend on it)."""
    shadow = tmp_path / "no-tabulate"
    shadow.mkdir()
    (shadow / "tabulate.py").write_text("raise ImportError('tabulate is not installed')\n")
    return user_env(PYTHONPATH=str(shadow))


def test_validate_quick_writes_its_tables_without_tabulate(empty, without_tabulate):
    done = memcglab("validate", "--quick", "--out", "board", cwd=empty, env=without_tabulate,
                    timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.rstrip().endswith("written to board")
    out = empty / "board"
    board = pd.read_parquet(out / "scoreboard.parquet")
    sources = sorted(set(board["case"].str.partition("/")[0]))
    assert len(board) >= 10 and len(sources) >= 4
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["scoreboard.parquet", "summary.csv", "profiles.parquet", "proper_scores.parquet",
         "proper_summary.csv", "run.json", "buildup.csv", "not_scored.csv",
         *(f"calibration-without-{s}.json" for s in sources)])
    proper = pd.read_csv(out / "proper_summary.csv")
    # memcglab, memcglab with the base run given, and the three fair baselines
    assert len(proper) == 5 and proper.notna().all().all()
    summary = pd.read_csv(out / "summary.csv", index_col="method")
    assert "memcglab" in summary.index and "coverage" in summary.columns
    profiles = pd.read_parquet(out / "profiles.parquet")
    assert len(profiles) > 0 and {"ratio", "within", "printed_zero"} <= set(profiles.columns)
    # the build-up, read from the committed runs, beside this run's scores
    buildup = pd.read_csv(out / "buildup.csv")
    assert {"kept", "rejected", "dropped"} <= set(buildup["decision"].dropna())
    assert json.loads((out / f"calibration-without-{sources[0]}.json").read_text())["kind"] \
        == "memcglab calibration"
    text = done.stdout
    assert text.startswith("# Leave-one-source-out scoreboard\n")
    head = text.split("## Summary\n\n", 1)[1].splitlines()[0]
    assert head == "| method | " + " | ".join(summary.columns) + " |"
    assert "\n## The model built up (the committed runs" in text
    assert "printed memcg rows" in text  # the profile goal, counted
    # the cases the model cannot price are listed, not silently dropped
    refused = pd.read_csv(out / "not_scored.csv")
    assert len(refused) == 8 and set(refused["case"]).isdisjoint(board["case"])
    assert "Not scored: 8 development cases the model cannot price yet" in text
    assert "- page_counter_relayout/malloc1_A-P100: cgroups.version: 1 is not priced" in text


def test_no_shipped_code_or_notebook_needs_tabulate():
    # pandas' to_markdown imports tabulate, which memcglab does not depend on: a fresh
    # install has no tabulate (validate crashed there); render tables without it
    import memcglab
    from memcglab.resources import notebooks_dir

    package = Path(memcglab.__file__).parent
    files = [*package.rglob("*.py"), *notebooks_dir().glob("*.ipynb")]
    assert [str(f) for f in files if ".to_markdown(" in f.read_text(encoding="utf-8")] == []


# sweep -------------------------------------------------------------------------------


def test_sweep_of_a_study_by_name(empty):
    # the README's example in its quick form, one run (each run executes the notebook)
    args = ["sweep", "02_policy_and_slots", "-p", "slots", "7", "-p", "profile",
            "butt-netperf-72cpu", "-p", "quick", "true", "--out", "sweep"]
    done = memcglab(*args, cwd=empty, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"1 run: 0 already done, 1 executed, 0 failed; table: "
                     r".*sweep/results\.parquet", done.stdout + done.stderr)
    table = pd.read_parquet(empty / "sweep" / "results.parquet")
    assert list(table["slots"]) == [7] and list(table["profile"]) == ["butt-netperf-72cpu"]
    assert (empty / "sweep" / "sweep.json").is_file()
    again = memcglab(*args, cwd=empty)  # the same command resumes: nothing left to run
    assert again.returncode == 0 and "1 already done, 0 executed" in again.stdout + again.stderr


# layout ------------------------------------------------------------------------------


def test_layout_of_a_catalogue_struct(empty):
    listed = memcglab("layout", "--list", cwd=empty)
    assert listed.returncode == 0 and "memcg_stock_pcp" in listed.stdout
    placed = memcglab("layout", "memcg_stock_pcp", "--era", "v6.16", "--config", "CONFIG_SMP=y",
                      "--placement", "0x1000", cwd=empty)
    assert placed.returncode == 0, placed.stderr
    assert "struct memcg_stock_pcp {" in placed.stdout
    assert "placed at 0x1000" in placed.stdout
    slots = memcglab("layout", "memcg_stock_pcp", "--slot-table", cwd=empty)
    assert slots.returncode == 0, slots.stderr
    assert slots.stdout.split()[:3] == ["slots", "sizeof", "lookup_bytes"]
    wrong = memcglab("layout", "no_such_struct", cwd=empty)
    assert wrong.returncode == 2 and wrong.stdout == "" and wrong.stderr.count("\n") == 1
    assert list(empty.iterdir()) == []


# probe -------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("gcc") is None or len(os.sched_getaffinity(0)) < 2,
                    reason="the probe needs gcc and two CPUs")
def test_probe_writes_a_profile_a_scenario_and_load_profile_take(empty):
    for _attempt in range(2):
        done = memcglab("probe", "--quick", "--out", "my.toml", "--cpus", "0,1", cwd=empty)
        if done.returncode == 0:
            break
        # a busy machine can make the probe refuse its own figures (exit 1), as in
        # tests/probe/test_cli.py; anything else is a failure
        assert done.returncode == 1 and not (empty / "my.toml").exists(), done.stderr
    else:
        pytest.skip("memcglab probe refused its measurements twice on this busy machine")
    assert sorted(p.name for p in empty.iterdir()) == ["my-c2c.png", "my.toml"]
    # the README: pass the path to a scenario ([machine] profile = "my.toml")
    scenario = STUDY06_TCP_RR.read_text()
    scenario = re.sub(r'(?m)^profile = ".*"$', 'profile = "my.toml"', scenario)
    assert 'profile = "my.toml"' in scenario
    (empty / "mine.toml").write_text(scenario)
    predicted = memcglab("predict", "mine.toml", "--points", "16", cwd=empty)
    assert predicted.returncode == 0, predicted.stderr
    assert list(json.loads(predicted.stdout)) == PREDICT_KEYS


# notebooks ---------------------------------------------------------------------------


def test_notebooks_copies_them_into_the_current_directory(empty):
    done = memcglab("notebooks", cwd=empty)
    assert done.returncode == 0, done.stderr
    assert "open them with: jupyter lab memcglab-notebooks" in done.stdout
    copied = sorted(p.name for p in (empty / "memcglab-notebooks").glob("*.ipynb"))
    assert copied == [nb.name for nb in study_notebooks()]
    again = memcglab("notebooks", "--force", cwd=empty)
    assert again.returncode == 0, again.stderr


# reproduce ---------------------------------------------------------------------------


def test_reproduce_one_quick_study_into_results(empty):
    # study 5 is the fastest (about 13 s); without --out the results go to ./results
    done = memcglab("reproduce", "--quick", "--only", "05", cwd=empty, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"1 of 1 notebooks ran in \d+ s; report: .*results/report\.md",
                     done.stdout)
    out = empty / "results"
    assert {"report.md", "report.html", "results.parquet", "claims.parquet",
            "05_history"} <= {p.name for p in out.iterdir()}
    assert json.loads((out / "05_history" / "result.json").read_text())
    assert (out / "05_history" / "05_history.ipynb").is_file()
    assert len(pd.read_parquet(out / "results.parquet")) == 1
