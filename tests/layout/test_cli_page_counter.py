"""``memcglab layout page_counter --era E`` typed as a user types it, for the four layouts.

Each test starts the installed ``memcglab`` script (the one beside this interpreter;
``python -m memcglab`` where there is none) in an empty directory with no PYTHONPATH,
and checks the exit status, what is printed where, and that nothing is written. The
expected offsets and lines are the hand-worked ones of test_page_counter_layouts.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
SCRIPT = shutil.which("memcglab", path=str(BIN))
MEMCGLAB = [SCRIPT] if SCRIPT else [sys.executable, "-m", "memcglab"]
HAVE_GCC = shutil.which("gcc") is not None


def memcglab(*args: str, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MEMCGLAB_PLUGINS")}
    env["PATH"] = path if path is not None else f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([*MEMCGLAB, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def rows(out: str) -> dict[str, tuple[int, int, str]]:
    """member -> (offset, size, lines) from the pahole view."""
    got = {}
    for line in out.splitlines():
        m = re.search(r"(\w+);\s+/\*\s+(\d+)\s+(\d+)\s+(L[\d-]+)?\s*\*/", line)
        if m:
            got[m.group(1)] = (int(m.group(2)), int(m.group(3)), m.group(4) or "")
    return got


# era: (usage's line header, parent's row, sizeof) worked out by hand from the C text
EXPECTED = {
    "v5.11": ("min low high max parent emin min_usage", (40, 8, "L0"), 112),
    "v5.12": ("min low high max emin min_usage children_min_usage", (104, 8, "L1"), 112),
    "v6.1": ("nothing", (160, 8, "L2"), 192),
    "aligned": ("nothing", (160, 8, "L2"), 192),
}


@pytest.mark.skipif(not HAVE_GCC, reason="--gcc needs gcc on PATH")
@pytest.mark.parametrize("era", list(EXPECTED))
def test_each_layout_prints_gcc_checked(tmp_path, era):
    done = memcglab("layout", "page_counter", "--era", era, "--gcc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    others, parent, size = EXPECTED[era]
    out = done.stdout
    assert f"/* page_counter, era {era}: " in out.splitlines()[0]
    assert f"/* usage's line L0 also holds: {others} */" in out
    assert re.search(r"/\* gcc check \(gcc .*\): \d+ offsets; sizeof, _Alignof and all "
                     r"offsetof agree \*/", out)
    got = rows(out)
    assert got["usage"] == (0, 8, "L0")
    assert got["parent"] == parent
    assert f"/* size: {size}, cachelines: {-(-size // 64)}, members:" in out
    assert list(tmp_path.iterdir()) == []


def test_the_source_line_cites_the_blob_or_mail(tmp_path):
    cites = {"v5.11": "85bd413e784e", "v5.12": "0d3001e2690a", "v6.1": "78a1c934e416",
             "aligned": "CANn89iLSWm-c4XE79rUsxzOp3VwXVDhOEPTQnWgeQ48UwM=u7Q"}
    for era, cite in cites.items():
        done = memcglab("layout", "page_counter", "--era", era, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert cite in done.stdout.splitlines()[1]


@pytest.mark.parametrize("argv, needle", [
    (["--era", "v5.13"], "unknown era 'v5.13' for page_counter; valid: v5.10, v5.11, v5.12, "
                         "aligned, v6.1, v6.16"),
    (["--era", "v6.1", "--placement", "0x10"],
     "--placement 0x10: page_counter v6.1 is 64-byte aligned"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, argv, needle):
    done = memcglab("layout", "page_counter", *argv, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("memcglab layout: error:")
    assert needle in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_gcc_without_gcc_on_path_is_a_usage_error(tmp_path):
    done = memcglab("layout", "page_counter", "--era", "v5.12", "--gcc", cwd=tmp_path,
                    path=str(BIN))
    assert done.returncode == 2 and done.stdout == ""
    assert "gcc not found on PATH" in done.stderr and done.stderr.count("\n") == 1


def test_gcc_applies_to_catalogue_structs_only(tmp_path):
    h = tmp_path / "mine.h"
    h.write_text("struct mine { long a; };")
    done = memcglab("layout", "mine", "--file", str(h), "--gcc", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert "--gcc checks catalogue structs" in done.stderr
