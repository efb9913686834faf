"""The start of a hostile lab cell, shared by the bwrap and Docker lab tests: it reads every
process's environment and command line it can see, prints `FOUND` when `secret` is anywhere in
them (else `nothing found`), then one line per module: `<name> importable` or `<name> missing`."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

# Our own package under every name it has had, and what the orchestrator imports: none of them
# may be importable in a lab.
OURS = ("interp_harness", "interp_harness.harness", "interp_harness.agents", "harness",
        "agents", "function_store", "evaluator", "httpx", "pydantic")  # fmt: skip
LAB_PACKAGES = ("numpy", "scipy.optimize", "matplotlib.pyplot")


@contextmanager
def loopback_listener() -> Iterator[int]:
    """Something listening on the host's loopback while a cell tries to reach it: its port."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def secret_and_imports_cell(secret: str, modules: tuple[str, ...]) -> str:
    return f"""
import importlib, os, socket
found = {{}}
for p in os.listdir('/proc'):
    for what in ('environ', 'cmdline'):
        try:
            found[p + '/' + what] = open('/proc/' + p + '/' + what, 'rb').read().decode('latin-1')
        except OSError:
            pass
found['env'] = dict(os.environ)
print('FOUND' if {secret!r} in repr(found) else 'nothing found')
for m in {modules!r}:
    try:
        importlib.import_module(m)
        print(m, 'importable')
    except ImportError:
        print(m, 'missing')
"""
