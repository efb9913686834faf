"""Pluggable text corpora for mining activating sentences (Type II probes), offline by default:
- `python-docs`: sentences from the docstrings of Python's standard library (ships everywhere);
- `released`: the sentences of the released neuron-explanation data;
- `file:<path>`: one sentence per line (operator-chosen path).
"""

from __future__ import annotations

import importlib
import random
import re
import types
from collections.abc import Callable
from pathlib import Path

_STDLIB = (
    "abc argparse asyncio base64 bisect calendar collections contextlib csv dataclasses datetime "
    "decimal difflib email enum fractions functools glob gzip hashlib heapq html http inspect "
    "io itertools json logging math mimetypes operator os pathlib pickle platform pprint queue "
    "random re sched secrets shutil socket sqlite3 statistics string struct subprocess tarfile "
    "tempfile textwrap threading time timeit tokenize typing unittest urllib uuid warnings "
    "weakref xml zipfile zlib"
).split()
_SENT = re.compile(r"(?<=[.!?])\s+")


def python_docs(limit: int = 500, seed: int = 0) -> list[str]:
    sentences: set[str] = set()
    for name in _STDLIB:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        # a module attribute is skipped: a package gains its submodules as attributes when anything
        # in the process imports them, which would make the corpus differ between processes
        attrs = [getattr(mod, a, None) for a in sorted(dir(mod))]
        attrs = [x for x in attrs if not isinstance(x, types.ModuleType)]
        docs = [mod.__doc__ or ""] + [getattr(x, "__doc__", "") or "" for x in attrs[:200]]
        for d in docs:
            if not isinstance(d, str):  # some attributes' __doc__ is a descriptor
                continue
            for s in _SENT.split(" ".join(d.split())):
                if 6 <= len(s.split()) <= 40 and s[0].isupper() and s[-1] in ".!?":
                    sentences.add(s)
    out = sorted(sentences)
    return random.Random(seed).sample(out, min(limit, len(out)))


def released(limit: int = 500, seed: int = 0) -> list[str]:
    from interp_harness.function_store.token_activations import neuron_release as data

    out = sorted({it.text for r in data.load() for it in r.items})
    return random.Random(seed).sample(out, min(limit, len(out)))


CORPORA: dict[str, Callable[[int, int], list[str]]] = {
    "python-docs": python_docs,
    "released": released,
}


def load_corpus(name: str, limit: int = 500, seed: int = 0) -> list[str]:
    if name.startswith("file:"):
        lines = Path(name[5:]).read_text(encoding="utf-8").splitlines()
        return [x.strip() for x in lines if x.strip()][:limit]
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; known: {', '.join(CORPORA)}, file:<path>")
    return CORPORA[name](limit, seed)
