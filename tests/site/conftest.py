"""A real headless browser for the site tests: Debian's Chromium, driven by Playwright.

Playwright never downloads a browser here: Chromium is launched by its executable
path (CI installs it with apt, see .ci/run). A missing Chromium fails these tests
rather than skipping them.
"""

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("SITE_TEST_ARTIFACTS", REPO / "build" / "test-artifacts" / "site"))


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium is not on PATH: install it with `apt-get install -y chromium` (.ci/run does)")
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context (fresh localStorage); fails the test on any console error."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    problems = []
    pg.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    pg.problems = problems
    yield pg
    context.close()
    assert problems == [], problems
