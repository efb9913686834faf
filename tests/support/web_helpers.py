"""What the web tests share besides fixtures (a uniquely named module: every test folder's
conftest is importable as `conftest`, so tests must not import from it)."""

from __future__ import annotations

import os
from pathlib import Path

from support import TESTS

TOKEN = "web-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHROMIUM = os.environ.get("HARNESS_TEST_CHROMIUM", "/usr/bin/chromium")


def artifacts_dir() -> Path:
    """Screenshots go here ($HARNESS_TEST_ARTIFACTS, default tests/harness/web/artifacts: git-ignored)."""
    d = Path(os.environ.get("HARNESS_TEST_ARTIFACTS", TESTS / "harness" / "web" / "artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def login(page, base: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(base + "/ui/login")
    page.get_by_label("Token").fill(TOKEN)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(base + "/")
