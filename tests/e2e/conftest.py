"""End-to-end tests: a real browser and server. ``-m e2e`` selects them, ``-m 'not e2e'`` skips."""

from __future__ import annotations


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "e2e: drives a real JupyterLab in headless Chromium (needs /usr/bin/chromium)"
    )
