"""Small helpers shared across test folders (imported as `support` where tests/ is on sys.path,
as `tests.support` elsewhere): a free loopback port, and the rule for a tool scripts/install.sh
installs but a test cannot find."""

from __future__ import annotations

import os
import socket

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require(ok: bool, why: str, opt_out: str) -> None:
    """Fail when a tool scripts/install.sh installs is missing: in CI a skip would hide a broken
    install. An operator on a machine without it sets `opt_out`=1; the tests then skip, saying
    why."""
    if ok:
        return
    if os.environ.get(opt_out) == "1":
        pytest.skip(f"{why} ({opt_out}=1)")
    pytest.fail(f"{why}; run scripts/install.sh, or set {opt_out}=1 to skip these tests")
