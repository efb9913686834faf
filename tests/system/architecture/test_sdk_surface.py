"""The public SDK, `interp_harness.sdk`, is the one import of plugin authors: the toy plugin and the
docs' examples import nothing else of ours, each name resolves, and the names an agent or a runner
uses load no part that its sandbox lacks."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import interp_harness.sdk as sdk

ROOT = Path(__file__).resolve().parents[3]
SDK = "interp_harness.sdk"
TOY = ROOT / "tests" / "system" / "plugins" / "toy_plugin" / "toy_benchmark"
# (doc, module) -> why a doc example may import more than the SDK
DOC_INTERNALS = {
    ("docs/scale-out.md", "interp_harness.model_services.backbone"): (
        "an operator's Ray Serve script that hosts our model server, not a plugin"
    ),
    ("docs/scale-out.md", "interp_harness.model_services.backbone.server"): (
        "an operator's Ray Serve script that hosts our model server, not a plugin"
    ),
}


def internal_imports(source: str) -> list[str]:
    """Modules of ours other than the SDK that `source` imports (absolute imports)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        out += [n for n in names if n.split(".")[0] == "interp_harness" and n != SDK]
    return out


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.M | re.S)


def test_the_checker_finds_a_planted_internal_import() -> None:
    planted = (
        "from interp_harness.sdk import Agent\n"
        "from interp_harness.agents.base import AgentReply\n"
        "import interp_harness.function_store.models as m\n"
        "from . import sibling\n"
    )
    assert internal_imports(planted) == [
        "interp_harness.agents.base",
        "interp_harness.function_store.models",
    ]
    doc = f"text\n```python\n{planted}```\n```bash\nimport nothing\n```\n"
    assert python_blocks(doc) == [planted]


def test_the_toy_plugin_imports_only_the_sdk() -> None:
    files = sorted(TOY.glob("*.py"))
    assert len(files) >= 6
    bad = {f.name: got for f in files if (got := internal_imports(f.read_text()))}
    assert not bad, f"the toy plugin imports internals (use {SDK}): {bad}"
    assert any(SDK in f.read_text() for f in files)


def test_doc_examples_import_only_the_sdk() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    seen, bad = 0, []
    for doc in docs:
        rel = doc.relative_to(ROOT).as_posix()
        for block in python_blocks(doc.read_text(encoding="utf-8")):
            try:
                got = internal_imports(block)
            except SyntaxError:  # a fragment (an excerpt with "..."), not a program
                continue
            seen += 1
            bad += [(rel, m) for m in got if (rel, m) not in DOC_INTERNALS]
    assert seen >= 5
    assert not bad, f"doc examples import internals (use {SDK}): {bad}"


def test_every_public_name_resolves() -> None:
    assert dir(sdk) == sdk.__all__
    for name in sdk.__all__:
        assert getattr(sdk, name) is not None, name
    with pytest.raises(AttributeError, match="has no 'Catalog'"):
        sdk.Catalog  # noqa: B018 - an internal name is not part of the API


@pytest.mark.parametrize(
    ("names", "may_load"),
    [
        # an agent in its agent host, where only `agents` (and the SDK) are bound
        (["Agent", "AgentReply", "Message", "ToolSpec", "AgentOptions"], {"agents"}),
        # a runner in the target service: no orchestrator, no evaluator there
        (["Target", "CallOutput", "register_runner", "Benchmark"], {"agents", "function_store"}),
    ],
)
def test_names_load_only_the_part_their_sandbox_has(names: list[str], may_load: set[str]) -> None:
    code = (
        f"import sys, json\nfrom interp_harness.sdk import {', '.join(names)}\n"
        "print(json.dumps(sorted({m.split('.')[1] for m in sys.modules "
        "if m.startswith('interp_harness.')})))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)) - {"sdk"} <= may_load
