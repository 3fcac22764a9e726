"""docs/extending.md runs as written, from top to bottom, in a directory of its files.

The page is a sequence of blocks: a ``code-block`` with a ``:caption:`` is a file (a
caption ``NAME (last line)`` replaces that file's last line), a ``console`` block is
shell commands (``$ ...``) each followed by its exact output (stdout and stderr
together; ``...`` matches anything, as in doctest), and a ``python`` block of ``>>>``
examples is a doctest sharing one namespace with the page's other examples. Each block
runs in order, so the policy example is replayed as a Python-only plugin (faithful
replay, ``memcglab replay --policy``, refused by name by the compiled engine), then
with its compiled twin (both engines, the differential test, study 2's code path),
and the stock design as a plugin model.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memcglab import registry

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "extending.md"
_BLOCK = re.compile(r"^```(\{code-block\} (\w+)\n:caption: ([^\n]+)\n\n|console\n|python\n)"
                    r"(.*?)^```\n", re.S | re.M)
_CHECKER = doctest.OutputChecker()


def blocks(text: str) -> list[tuple[str, str, str]]:
    """(kind, caption, body) of every runnable block of the page, in order."""
    out = []
    for m in _BLOCK.finditer(text):
        head, caption, body = m.group(1), m.group(3), m.group(4)
        if caption:
            out.append(("file", caption, body))
        elif head == "console\n":
            out.append(("console", "", body))
        elif ">>>" in body:
            out.append(("doctest", "", body))
    return out


def _commands(body: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        else:
            pairs[-1][1].append(line)
    return [(cmd, "\n".join(lines) + "\n") for cmd, lines in pairs]


def _run_console(body: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{cwd}{os.pathsep}{ROOT}"}
    env.pop("MEMCGLAB_PLUGINS", None)
    bindir = Path(sys.executable).parent
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    for cmd, want in _commands(body):
        done = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=600)
        assert _CHECKER.check_output(want, done.stdout, doctest.ELLIPSIS), \
            f"$ {cmd}\nwant:\n{want}got:\n{done.stdout}"


@pytest.fixture
def page_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("MEMCGLAB_PLUGINS", raising=False)
    yield tmp_path
    for name in ("fewest", "nostock"):
        registry.unregister_policy(name)
        registry.unregister_model(name)
    for module in ("fewest_policy", "nostock"):
        sys.modules.pop(module, None)


def test_the_page_runs_from_top_to_bottom(page_dir: Path) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    parser = doctest.DocTestParser()
    globs: dict = {}
    kinds = []
    for number, (kind, caption, body) in enumerate(blocks(PAGE.read_text())):
        kinds.append(kind)
        if kind == "file" and caption.endswith(" (last line)"):
            path = page_dir / caption.removesuffix(" (last line)")
            lines = path.read_text().rstrip("\n").split("\n")
            path.write_text("\n".join([*lines[:-1], body.strip("\n")]) + "\n")
        elif kind == "file":
            (page_dir / caption).write_text(body)
        elif kind == "console":
            _run_console(body, page_dir)
        else:
            test = parser.get_doctest(body, globs, f"extending.md block {number}", str(PAGE), 0)
            result = runner.run(test, clear_globs=False)
            globs = test.globs  # DocTest copies its globs: carry them to the next block
            assert result.failed == 0, f"block {number} of docs/extending.md failed"
    assert kinds.count("console") >= 5 and kinds.count("doctest") >= 4
    assert {"fewest_policy.py", "evict.trace", "test_fewest.py", "nostock.py"} <= \
        {p.name for p in page_dir.iterdir()}


def test_the_compiled_twin_the_page_quotes_is_the_engines() -> None:
    text = PAGE.read_text()
    source = (ROOT / "memcglab" / "engine" / "native" / "victims.c").read_text()
    quoted = re.search(r"```c\n(if \(policy == V_FEWEST\).*?)```", text, re.S).group(1)
    assert all(line.strip() in source for line in quoted.splitlines())
    from memcglab.engine.state import VICTIMS

    assert "fewest" in VICTIMS


def test_the_page_is_in_the_table_of_contents() -> None:
    assert "\nextending\n" in (PAGE.parent / "index.md").read_text()
