"""The Jupyter kernel's own output goes to the run's kernel.log, not the sweep's terminal.

A kernel killed while it shuts down may log a traceback from its sockets (CI saw one
bury the one-line stop report); the run's directory keeps it instead.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from memcglab.sweep.runner import _drop_if_empty
from memcglab.sweep.stopping import RunHandle


def test_a_kernels_own_log_lines_land_in_the_log_file(tmp_path):
    log = tmp_path / "kernel.log"
    manager = RunHandle("kernel-log-test").kernel_manager_class(log)(kernel_name="python3")

    async def start_and_read() -> str:
        # DEBUG makes the kernel log its start-up (profile, config search) to its stderr
        await manager.start_kernel(extra_arguments=["--IPKernelApp.log_level=DEBUG"])
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and "[IPKernelApp]" not in log.read_text():
                await asyncio.sleep(0.1)
            return log.read_text()
        finally:
            await manager.shutdown_kernel(now=True)

    assert "[IPKernelApp]" in asyncio.run(start_and_read())


def test_an_empty_log_is_dropped_and_a_written_one_kept(tmp_path):
    empty, written = tmp_path / "empty.log", tmp_path / "written.log"
    empty.write_bytes(b"")
    written.write_text("Traceback ...\n")
    for path in (empty, written, tmp_path / "absent.log"):
        _drop_if_empty(path)
    assert not empty.exists() and written.read_text() == "Traceback ...\n"
    assert not Path(tmp_path / "absent.log").exists()
