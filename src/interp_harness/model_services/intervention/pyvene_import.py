"""pyvene, imported once without its start-up line: on import it tries nnsight (an optional
backend we do not use) and prints "nnsight is not detected..." on stdout, a stray line in
`harness sae build`'s output and on a server's stdout."""

from __future__ import annotations

import contextlib
import io
import sys
from types import ModuleType


def import_pyvene() -> ModuleType:
    """The `pyvene` module; its import's prints are dropped (its warnings and errors are not)."""
    if "pyvene" not in sys.modules:
        with contextlib.redirect_stdout(io.StringIO()):
            import pyvene  # noqa: F401 - registered in sys.modules
    return sys.modules["pyvene"]
