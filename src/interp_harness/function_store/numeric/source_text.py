"""Source text of a numeric function file, laid out like FIND's `function_code.py` (its
`write_source_code.py`).

Written by us from the released files' layout: the imports, `def function(x):`
with the variant's body, and the CLI that prints `None` on exceptions. Blank lines may differ from
the released files; statements and expressions match.
"""

from __future__ import annotations

from interp_harness.function_store.numeric.expr import Program

_IMPORTS = (
    "import numpy as np\n"
    "import scipy.signal\n"
    "import sys\n"
    "from scipy.special import gamma, factorial, erf\n"
)

# The CLI of the released numeric files: float() outside the try, 'None' on any exception.
_CLI = (
    "if __name__ == '__main__':\n"
    "    outputs = ''\n"
    "    for arg in sys.argv[1:]:\n"
    "        x = float(arg)\n"
    "        try:\n"
    "            out = function(x)\n"
    "        except:\n"
    "            out = 'None'\n"
    "        outputs += f'({arg}, {out}) '\n"
    "    print(f'Function input - output pairs: {outputs}')\n"
)


def render_source(program: Program) -> str:
    body = "\n".join(program.body_lines())
    return f"{_IMPORTS}\n\ndef function(x):\n{body}\n\n\n{_CLI}"


def render_mlp_source(weights_file: str = "mlp_approx_model.pt") -> str:
    """A wrapper equivalent to the released `load_mlp.py`, in our own words: a
    1-64-ReLU-1 MLP whose weights sit next to the file; no try/except around the inputs."""
    return (
        "import os\n"
        "import sys\n"
        "import torch\n"
        "from torch import nn\n\n\n"
        "class MLP(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.layers = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Linear(64, 1))\n\n"
        "    def forward(self, x):\n"
        "        return self.layers(x)\n\n\n"
        "def function(x):\n"
        "    model = MLP()\n"
        "    here = os.path.dirname(os.path.abspath(__file__))\n"
        f"    model.load_state_dict(torch.load(os.path.join(here, '{weights_file}')))\n"
        "    return model(torch.tensor(x).reshape(-1, 1).float()).item()\n\n\n"
        "if __name__ == '__main__':\n"
        "    outputs = ''\n"
        "    for arg in sys.argv[1:]:\n"
        "        x = float(arg)\n"
        "        outputs += f'({arg}, {str(function(x))}) '\n"
        "    print(f'Function input - output pairs: {outputs}')\n"
    )
