"""A FIND-format numeric `function_code.py` (as `write_source_code.py` writes it), ours."""

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
