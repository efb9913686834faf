"""FIND-format `function_code.py` scripts (as FIND's `write_source_code.py` lays them out), ours:
a numeric one for an expression, and the command-line block of a string one. Used by the sandbox
and strings tests and by benchmarks/target_calls.py."""

from __future__ import annotations

from pathlib import Path

from interp_harness.function_store.models import HiddenTruth, PublicMeta, Target, make_canary

FIND_NUMERIC_SCRIPT = """import numpy as np
import scipy.signal
import sys
from scipy.special import gamma, factorial, erf


def function(x):

    return {expr}

if __name__ == '__main__':
    outputs = ''
    for arg in sys.argv[1:]:
        x = float(arg)
        try:
            out = function(x)
        except:
            out = 'None'
        outputs += f'({{arg}}, {{out}}) '
    print(f'Function input - output pairs: {{outputs}}')
"""


def numeric_script(expr: str) -> str:
    return FIND_NUMERIC_SCRIPT.format(expr=expr)


# the command-line block that ends a FIND string function file; a script is its function + this
FIND_STRINGS_MAIN = """
if __name__ == '__main__':
    outputs = ''
    for arg in sys.argv[1:]:
        string = str(arg)
        outputs += f'({arg}, {str(function(string))}) '

    print(f'Function input - output pairs: {outputs}')
"""


def script_target(
    path: Path,
    script: str,
    tid: str = "find-import/numeric/f00001",
    family: str = "numeric",
    **spec: object,
) -> Target:
    """A find-import target (numbers in) whose hidden runner is `script`, written to `path`."""
    path.write_text(script)
    return Target(
        id=tid,
        dataset="find-import",
        family=family,
        variant="clean",
        public=PublicMeta(input_kind="number", prompt_family="numeric"),
        hidden=HiddenTruth(
            runner="script", spec={"path": str(path), **spec}, canary=make_canary(tid)
        ),
    )
