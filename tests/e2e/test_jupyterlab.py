"""JupyterLab end to end: open a study notebook in headless Chromium, run all, no errors.

What CI needs: Debian's ``chromium`` package (``/usr/bin/chromium``) and the
``playwright`` PyPI package, which drives the system browser through
``executable_path``; no browser download (``playwright install``) is used or needed.
The test skips, saying why, where either is missing.

The notebook is ``notebooks/05_*.ipynb`` (the quickest study, about 12 s of kernel
work; the browser's part is the same for every study, and the quick reproduction runs
all seven through papermill), copied into a temporary root with
``quick=True`` injected by papermill (``prepare_only``: parameters only, nothing
executed), so the repository's file is never touched and the run stays short.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
# JupyterLab 4 renders both tracebacks and stderr text with this MIME type; either is
# an error output as far as a study notebook is concerned.
ERROR_OUTPUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


def pick_notebook() -> Path:
    studies = sorted((REPO / "notebooks").glob("05_*.ipynb"))
    assert studies, "notebooks/05_*.ipynb is missing: the end-to-end test opens study 5"
    return studies[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare(notebook: Path, root: Path) -> Path:
    """Copy ``notebook`` into ``root``, with ``quick=True`` if it takes that parameter."""
    import papermill

    target = root / notebook.name
    if "quick" in papermill.inspect_notebook(str(notebook)):
        papermill.execute_notebook(str(notebook), str(target), parameters={"quick": True},
                                   prepare_only=True, progress_bar=False)
    else:
        shutil.copy(notebook, target)
    return target


def wait_for_server(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"jupyter lab did not answer {url} within {timeout:g} s")


@pytest.fixture
def lab(tmp_path):
    """A private JupyterLab on 127.0.0.1: random port, random token, temporary root."""
    root = tmp_path / "root"
    root.mkdir()
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")):
        env[var] = str(tmp_path / sub)  # no user settings or saved layouts leak in
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class="
         "jupyterlab.handlers.announcements.NeverCheckForUpdate",
         # CI containers often run as root, which jupyter refuses without this flag
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for_server(f"{base}/api/status?token={token}", proc, timeout=40)
        except (RuntimeError, TimeoutError) as exc:
            log.flush()
            tail = (tmp_path / "lab.log").read_text()[-2000:]
            raise RuntimeError(f"{exc}; its log ends:\n{tail}") from None
        yield base, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.skipif(not CHROMIUM.exists(),
                    reason="needs Debian's chromium at /usr/bin/chromium (apt install chromium)")
def test_run_all_cells_in_jupyterlab_shows_outputs_and_no_errors(lab, tmp_path):
    base, token, root = lab
    notebook = prepare(pick_notebook(), root)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM),
            headless=True, args=CHROMIUM_ARGS,
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{base}/lab/tree/{notebook.name}?token={token}")
            page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
            # the kernel is ready once the status bar reports it idle
            page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for()
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt")
            n_code = prompts.count()
            # Done when every code cell's prompt holds an execution count, or when a cell
            # failed (Lab then stops) and nothing is still queued ("[*]"). Study 5's quick
            # run replays its traces in about 12 s (longer on a loaded 2-core machine);
            # the wait is a liveness bound, not a speed check.
            page.wait_for_function(
                """([n, errorSelector]) => {
                    const ps = [...document.querySelectorAll(
                        '.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];
                    const done = ps.length === n && ps.every(p => /\\[\\d+\\]/.test(p.textContent));
                    const pending = ps.some(p => p.textContent.includes('*'));
                    return done || (!pending && document.querySelector(errorSelector) !== null);
                }""", arg=[n_code, ERROR_OUTPUT], timeout=240_000)
            errors = page.locator(ERROR_OUTPUT)
            assert errors.count() == 0, errors.first.inner_text()
            outputs = page.locator(".jp-NotebookPanel .jp-OutputArea-output")
            assert outputs.count() > 0
            # the conclusion study 5 generates from this run's numbers is among the outputs
            assert "breaks conservation at the first refill" in " ".join(
                outputs.all_inner_texts())
        finally:
            browser.close()
