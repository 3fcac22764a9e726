"""``memcglab replay`` against the interface of the replay contract.

shared/spec/replay-contract.md fixes the command line, the exit statuses, the
messages and the byte-exact JSON; the kernel logic behind the numbers is tested
in tests/kernel/. Most tests call ``memcglab.cli.main`` in-process; two run the
installed command with the trace on standard input.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from memcglab.cli import main
from memcglab.models import MODEL_NAMES
from tests.contract import EXAMPLE, EXAMPLE_JSON

# Two memcgs charged on CPU 0, one uncharged on CPU 1, CPU 2 untouched.
STOCKED = """memcglab-trace 1
cpus 3
cgroup 1 0
cgroup 2 0
charge 0 1 3
charge 0 2 5
uncharge 1 1 2
"""

# The charge on line 5 stocks its surplus in a new slot: fix 2 without fix 3 loses it.
SURPLUS = """memcglab-trace 1
cpus 2
cgroup 1 0
cgroup 2 1
charge 0 2 3
charge 1 2 3
"""

MULTI = tuple(m for m in MODEL_NAMES if m.startswith("multi"))
CORRECT = tuple(m for m in MODEL_NAMES if m != "multi-fix2")
TOP_KEYS = {"model", "slots", "batch", "seed", "ops", "failed_charges", "set_max_busy",
            "short_uncharges", "warnings", "memcgs", "stocks", "counters"}


@dataclass
class Result:
    rc: int
    out: str
    err: str
    path: str  # the TRACE argument

    @property
    def json(self) -> dict:
        assert self.rc == 0, self.err
        return json.loads(self.out)


@pytest.fixture
def replay_cli(tmp_path, capsys, monkeypatch):
    """Run ``memcglab replay`` in-process on a trace text (a file, or stdin for '-')."""
    count = iter(range(1000))

    def run(text: str | bytes, *options: str, stdin: bool = False) -> Result:
        data = text.encode() if isinstance(text, str) else text
        if stdin:
            path = "-"
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        else:
            path = str(tmp_path / f"t{next(count)}.trace")
            Path(path).write_bytes(data)
        capsys.readouterr()
        try:
            rc = main(["replay", path, *options])
        except SystemExit as exc:  # argparse's own errors
            rc = exc.code
        out, err = capsys.readouterr()
        return Result(rc, out, err, path)

    return run


def _command() -> list[str]:
    script = shutil.which("memcglab", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "memcglab.cli"]


# ----------------------------------------------------------------- exact output

def test_contract_example_byte_for_byte(replay_cli):
    r = replay_cli(EXAMPLE)
    assert (r.rc, r.out, r.err) == (0, EXAMPLE_JSON, "")


def test_contract_example_on_stdin_in_process(replay_cli):
    r = replay_cli(EXAMPLE, stdin=True)
    assert (r.rc, r.out, r.err) == (0, EXAMPLE_JSON, "")


def test_installed_command_reads_stdin():
    done = subprocess.run([*_command(), "replay", "-"], input=EXAMPLE.encode(),
                          capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, EXAMPLE_JSON.encode(), b"")


def test_installed_command_fails_cleanly_on_stdin():
    bad = EXAMPLE.replace("cpu_dead 3", "cpu_dead 4")
    done = subprocess.run([*_command(), "replay", "-", "--check"], input=bad.encode(),
                          capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.startswith(b"-:9: ") and done.stderr.count(b"\n") == 1


@pytest.mark.parametrize("model", CORRECT)
def test_check_does_not_change_the_output(replay_cli, model):
    plain = replay_cli(EXAMPLE, "--model", model)
    checked = replay_cli(EXAMPLE, "--model", model, "--check")
    assert plain.rc == checked.rc == 0 and plain.out == checked.out and checked.err == ""


# ------------------------------------------------------------------- JSON shape

@pytest.mark.parametrize("model", MODEL_NAMES)
def test_json_is_one_sorted_compact_line(replay_cli, model):
    r = replay_cli(STOCKED, "--model", model)
    assert r.rc == 0 and r.err == ""
    obj = r.json
    assert r.out == json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
    assert r.out.count("\n") == 1 and " " not in r.out
    assert set(obj) == TOP_KEYS
    assert set(obj["counters"]) == {"walks", "stock_hits", "evictions"}
    assert list(obj["memcgs"]) == ["0", "1", "2"]  # root "0" included
    for memcg in obj["memcgs"].values():
        assert set(memcg) == {"usage", "watermark", "max_events", "online"}
        assert isinstance(memcg["online"], bool)


def test_memcg_keys_sort_as_strings(replay_cli):
    text = "memcglab-trace 1\ncpus 2\ncgroup 2 0\ncgroup 10 0\ncgroup 1 0\ncgroup 100 10\n"
    for model in ("multi", "pcstock"):
        text_pc = text + "charge 1 100 1\ncharge 1 2 1\ncharge 1 10 1\n"
        obj = replay_cli(text_pc, "--model", model).json
        assert list(obj["memcgs"]) == ["0", "1", "10", "100", "2"]
    stocks = replay_cli(text_pc, "--model", "pcstock").json["stocks"]
    assert stocks[0] == {} and list(stocks[1]) == ["10", "100", "2"]


def _stocked(obj: dict) -> dict[str, int]:
    """Pages per memcg in all per-CPU stocks, whatever the model's shape."""
    total: dict[str, int] = {}
    for cpu in obj["stocks"]:
        pairs = cpu.items() if isinstance(cpu, dict) else (
            (str(slot[0]), slot[1]) for slot in cpu if slot is not None)
        for memcg, nr in pairs:
            total[memcg] = total.get(memcg, 0) + nr
    return total


@pytest.mark.parametrize("model", MULTI)
@pytest.mark.parametrize("slots", ["1", "4"])
def test_multi_stocks_are_slot_lists(replay_cli, model, slots):
    obj = replay_cli(STOCKED, "--model", model, "--slots", slots).json
    assert len(obj["stocks"]) == 3
    for cpu in obj["stocks"]:
        assert isinstance(cpu, list) and len(cpu) == int(slots)
        for slot in cpu:
            assert slot is None or (isinstance(slot, list) and len(slot) == 2
                                    and 0 <= slot[1] <= obj["batch"])
    assert obj["stocks"][2] == [None] * int(slots)
    if model != "multi-fix2":  # held 1 + stocked == usage: pages neither lost nor made
        assert _stocked(obj)["1"] + 1 == obj["memcgs"]["1"]["usage"]
        assert _stocked(obj)["2"] + 5 == obj["memcgs"]["2"]["usage"]


def test_multi_stocks_of_the_hand_worked_trace(replay_cli):
    obj = replay_cli(STOCKED, "--slots", "4").json
    assert obj["stocks"] == [[[1, 61], [2, 59], None, None], [[1, 2], None, None, None],
                             [None] * 4]


def test_single_stocks_are_one_element_lists(replay_cli):
    obj = replay_cli(STOCKED, "--model", "single", "--slots", "4").json
    # memcg 2 replaced memcg 1 on CPU 0; memcg 1 still holds 1 page plus CPU 1's 2
    assert obj["stocks"] == [[[2, 59]], [[1, 2]], [None]]
    assert obj["counters"]["evictions"] == 1
    assert obj["memcgs"]["1"]["usage"] == 3 and obj["memcgs"]["2"]["usage"] == 64


def test_pcstock_stocks_are_dicts_of_nonzero_stocks(replay_cli):
    obj = replay_cli(STOCKED, "--model", "pcstock").json
    assert obj["stocks"] == [{"1": 61, "2": 59}, {"1": 2}, {}]
    drained = replay_cli(STOCKED + "drain_all 2 1\n", "--model", "pcstock").json
    assert drained["stocks"] == [{"2": 59}, {}, {}]  # no zero entries left behind


# ------------------------------------------------------------------ the options

@pytest.mark.parametrize("model", MODEL_NAMES)
def test_options_are_echoed_for_every_model(replay_cli, model):
    default = replay_cli(STOCKED, "--model", model).json
    assert (default["model"], default["slots"], default["seed"], default["batch"]) == (
        model, 7, 0, 64)
    chosen = replay_cli(STOCKED, "--model", model, "--slots", "5", "--seed", "123",
                        "--batch", "100").json
    assert (chosen["model"], chosen["slots"], chosen["seed"], chosen["batch"]) == (
        model, 5, 123, 100)


def test_equals_form_and_last_occurrence_wins(replay_cli):
    obj = replay_cli(STOCKED, "--model=single", "--model", "multi-rr", "--slots=3", "--slots",
                     "2", "--seed", "1", "--seed=2", "--batch=10", "--batch", "20",
                     "--check", "--check").json
    assert (obj["model"], obj["slots"], obj["seed"], obj["batch"]) == ("multi-rr", 2, 2, 20)
    assert all(len(cpu) == 2 for cpu in obj["stocks"])
    assert obj["stocks"][0][0] == [1, 17]  # batch 20: a 3-page charge stocks 17


@pytest.mark.parametrize("model", ["single", "pcstock", "pcstock-v4"])
def test_single_and_pcstock_ignore_slots(replay_cli, model):
    text = STOCKED + "charge 0 1 70\ncharge 2 2 1\ncharge 2 1 1\ncpu_dead 0\n"
    one = replay_cli(text, "--model", model, "--slots", "1").json
    many = replay_cli(text, "--model", model, "--slots", "9").json
    assert (one.pop("slots"), many.pop("slots")) == (1, 9) and one == many


def test_seed_selects_the_victim_stream(replay_cli):
    # 1 slot and 2 memcgs on one CPU: every refill of the other memcg evicts
    text = ("memcglab-trace 1\ncpus 1\ncgroup 1 0\ncgroup 2 0\n"
            + "charge 0 1 1\ncharge 0 2 1\n" * 3)
    for seed in ("0", "18446744073709551615"):
        obj = replay_cli(text, "--slots", "1", "--seed", seed).json
        assert obj["seed"] == int(seed) and obj["counters"]["evictions"] == 5


@pytest.mark.parametrize(("model", "batch"), [
    *((m, "127") for m in MODEL_NAMES),
    ("single", "128"), ("pcstock", "128"), ("single", "524287"), ("pcstock", "524287"),
    ("pcstock-v4", "128"), ("pcstock-v4", "524287"),
    *((m, "1") for m in MODEL_NAMES),
])
def test_batches_accepted(replay_cli, model, batch):
    obj = replay_cli(STOCKED, "--model", model, "--batch", batch).json
    assert obj["batch"] == int(batch)


@pytest.mark.parametrize(("model", "batch", "word"), [
    *((m, "128", "127") for m in MULTI),
    *((m, "524288", "524287") for m in MODEL_NAMES),
    *((m, "0", "batch") for m in MODEL_NAMES),
])
def test_batches_refused(replay_cli, model, batch, word):
    r = replay_cli(STOCKED, "--model", model, "--batch", batch)
    assert (r.rc, r.out) == (2, "") and word in r.err and "batch" in r.err


@pytest.mark.parametrize(("option", "value"), [
    ("--slots", "1"), ("--slots", str(2**24)), ("--seed", "0"), ("--seed", str(2**64 - 1)),
])
def test_range_ends_accepted(replay_cli, option, value):
    # single ignores --slots, so 2^24 slots echo without building them
    obj = replay_cli(STOCKED, "--model", "single", option, value).json
    assert obj[option[2:]] == int(value)


def test_multi_accepts_2_pow_24_slots_before_reading_the_trace(replay_cli):
    # The trace error proves the option passed; a 2^24-slot machine is not built.
    r = replay_cli("memcglab-trace 1\ncpus 0\n", "--slots", str(2**24))
    assert (r.rc, r.out) == (2, "") and r.err.startswith(f"{r.path}:2: ")


@pytest.mark.parametrize(("option", "value"), [
    ("--slots", "0"), ("--slots", str(2**24 + 1)), ("--seed", str(2**64)), ("--seed", "-1"),
    ("--seed", "+5"), ("--seed", "1_000"), ("--seed", "0x10"), ("--seed", "1e3"),
    ("--seed", "\u0663"), ("--seed", ""), ("--slots", " 7"), ("--batch", "6 4"),
    ("--seed", "1" * 5000), ("--model", "Multi"), ("--model", "lru"), ("--model", ""),
])
def test_bad_options_exit_2_with_nothing_on_stdout(replay_cli, option, value):
    for argv in ((option, value), (f"{option}={value}",)):
        r = replay_cli(STOCKED, *argv)
        assert (r.rc, r.out) == (2, ""), argv
        assert option[2:] in r.err and len(r.err) < 300


@pytest.mark.parametrize("argv", [(), ("--bogus",), ("--slots",), ("a.trace", "b.trace")])
def test_argparse_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["replay", *argv])
    out, err = capsys.readouterr()
    assert (exc.value.code, out) == (2, "") and "error" in err


@pytest.mark.parametrize("option", [("--batch", "128"), ("--batch=0",), ("--slots", "0"),
                                    ("--seed", "-1"), ("--model", "none")])
def test_argument_errors_come_before_trace_errors(replay_cli, capsys, tmp_path, option):
    for text in ("not a trace\n", b"", H + "cpus 1\ncharge 0 0 1\n"):
        r = replay_cli(text, *option)
        assert (r.rc, r.out) == (2, "") and r.path not in r.err
        assert r.err.startswith("memcglab replay: error: ")
    missing = str(tmp_path / "missing.trace")
    assert main(["replay", missing, *option]) == 2
    out, err = capsys.readouterr()
    assert out == "" and missing not in err


def test_unreadable_trace_names_the_file(capsys, tmp_path):
    path = str(tmp_path / "missing.trace")
    assert main(["replay", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{path}:")


# ------------------------------------------------------------ malformed traces

H = "memcglab-trace 1\n"
CLI_ERRORS = [  # (trace, line, options): one of each layer of validation
    ("memcglab-trace 1 # v1\ncpus 1\n", 1, ()),
    (H + "cgroup 1 0\n", 2, ()),
    (H + "cpus 1\ncpus 1\n", 3, ()),
    (H + "cpus 8193\n", 2, ()),
    (H + "cpus 1\n\n# x\ncgroup 1 0\nCharge 0 1 1\n", 6, ()),
    (H + "cpus 1\ncgroup 1 0\ncharge 0 1\n", 4, ()),
    (H + "cpus 1\ncgroup 1 0\ncharge 0 1 \u0661\n", 4, ()),
    (H + "cpus 1\ncgroup 1 0\ncharge 0 1 4294967296\n", 4, ()),
    (H + "cpus 1\ncgroup 1 0\ncharge 1 1 1\n", 4, ()),
    (H + "cpus 1\ncgroup 1 0\ncharge 0 0 1\n", 4, ()),
    (H + "cpus 1\ncgroup 1 0\noffline 1\nuncharge 0 1 1\n", 5, ()),
    (H + "cpus 1\ncgroup 1 0\ncgroup 2 1\noffline 1\n", 5, ()),
    (H + "cpus 1\ncgroup 1 0\ncharge 0 1 1 nested\n", 4, ("--model", "single")),
    (H + "cpus 1\ncgroup 1 0 nested\n", 3, ("--model", "single")),
    (b"memcglab-trace 1\r\ncpus 1\r\n#\xe9\r\n", 3, ()),
]


@pytest.mark.parametrize(("text", "line", "options"), CLI_ERRORS)
@pytest.mark.parametrize("stdin", [False, True])
def test_malformed_trace_exits_2_naming_trace_and_line(replay_cli, text, line, options, stdin):
    r = replay_cli(text, *options, "--check", stdin=stdin)
    assert (r.rc, r.out) == (2, "")
    assert r.err.startswith(f"{r.path}:{line}: ") and r.err.count("\n") == 1


def test_nested_is_fine_except_with_single(replay_cli):
    text = H + "cpus 1\ncgroup 1 0\ncharge 0 1 3 nested\nuncharge 0 1 3 nested\n"
    for model in MODEL_NAMES:
        r = replay_cli(text, "--model", model)
        if model == "single":
            assert (r.rc, r.out) == (2, "") and r.err.startswith(f"{r.path}:4: ")
        else:
            assert r.json["failed_charges"] == 0 and r.json["ops"] == 3


def test_the_whole_trace_is_validated_before_replay(replay_cli):
    r = replay_cli(SURPLUS + "offline 0\n", "--model", "multi-fix2", "--check")
    assert (r.rc, r.out) == (2, "") and r.err.startswith(f"{r.path}:7: ")


# --------------------------------------------------------------------- --check

def test_check_violation_exits_1_naming_the_first_broken_operation(replay_cli):
    r = replay_cli(SURPLUS, "--model", "multi-fix2", "--check")
    assert (r.rc, r.out) == (1, "")
    assert r.err.startswith(f"{r.path}:5: ") and r.err.count("\n") == 1
    assert "charge" in r.err and "memcg 2" in r.err
    on_stdin = replay_cli(SURPLUS, "--model", "multi-fix2", "--check", stdin=True)
    assert (on_stdin.rc, on_stdin.out) == (1, "") and on_stdin.err.startswith("-:5: ")


def test_without_check_multi_fix2_replays_its_bug(replay_cli):
    obj = replay_cli(SURPLUS, "--model", "multi-fix2").json
    assert obj["stocks"] == [[[2, 0]] + [None] * 6, [[2, 0]] + [None] * 6]
    assert obj["memcgs"]["2"]["usage"] == 128  # 122 surplus pages in no stock


@pytest.mark.parametrize("model", CORRECT)
def test_correct_models_pass_check_on_the_surplus_trace(replay_cli, model):
    assert replay_cli(SURPLUS, "--model", model, "--check").json["ops"] == 4


# ------------------------------------------------------------------ ops, root

def test_ops_counts_operation_lines_only(replay_cli):
    text = ("memcglab-trace 1\n# header comment\n\ncpus 2   # two\n\n"
            "cgroup 1 0\n# c\ncgroup 2 1 max=9\ncharge 0 2 3\n\t\n"
            "uncharge 0 2 1\nuncharge_direct 1 2 1\ndrain_all 0 1\ncpu_dead 1\n"
            "set_max 2 100\noffline 2\n# trailing comment\n")
    for model in MODEL_NAMES:
        assert replay_cli(text, "--model", model).json["ops"] == 9


def test_a_trace_without_operations(replay_cli):
    obj = replay_cli("memcglab-trace 1\ncpus 1\n").json
    assert obj["ops"] == 0 and obj["memcgs"] == {
        "0": {"max_events": 0, "online": True, "usage": 0, "watermark": 0}}


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_root_uncharges_and_drains_only_count_short_uncharges(replay_cli, model):
    text = H + "cpus 2\nuncharge 1 0 5\nuncharge_direct 0 0 7\ndrain_all 1 0\n"
    obj = replay_cli(text, "--model", model, "--check").json
    assert obj["short_uncharges"] == 12 and obj["warnings"] == 0
    assert obj["memcgs"]["0"]["usage"] == 0 and obj["ops"] == 3
