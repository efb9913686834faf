"""The python-docs corpus is the same text in every process: what else the process has imported
(a submodule becomes an attribute of its package, e.g. `email.mime` after `import email.mime.text`)
must not change it, since SAE builds and catalogs are keyed by their options, not their texts."""

from __future__ import annotations

import json
import subprocess
import sys

_PRINT = (
    "import json; from interp_harness.function_store.token_activations.corpus import python_docs; "
    "print(json.dumps(python_docs(2000, 0)))"
)
_EXTRA = (
    "import email.mime.text, xml.etree.ElementTree, unittest.mock, http.server, "
    "urllib.request, logging.handlers, concurrent.futures, json.tool, os.path, asyncio.subprocess"
)


def _corpus(prelude: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{prelude}; {_PRINT}" if prelude else _PRINT],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout)


def test_python_docs_does_not_depend_on_what_the_process_imported() -> None:
    bare = _corpus("")
    assert len(bare) > 500
    assert _corpus(_EXTRA) == bare
