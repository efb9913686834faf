"""Generic code names no family: it loops over the benchmark registry (DESIGN §2)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from support.family_names import builtin_records, family_literals, keys_of
from support.layering import SRC as ROOT

from interp_harness.function_store.benchmark import Benchmark


def test_keys_come_from_the_registry() -> None:
    keys = keys_of(builtin_records())
    assert {"numeric", "neurons", "ravel"} <= keys.families
    assert "neuron" in keys.fixed_datasets


def test_generic_code_names_no_family() -> None:
    found = family_literals(ROOT, keys_of(builtin_records()))
    new = [f"{p}:{line}: {text!r}" for p, line, text in found]
    assert not new, "generic code names a family; ask the registry instead:\n" + "\n".join(new)


def test_checker_reports_family_names(tmp_path: Path) -> None:
    for rel, text in {
        "harness/web/bad.py": '''            """The numeric page (a docstring may say it)."""

            def panel(family):
                if family == "numeric":
                    return f"neuron/{family}"
                return {"ravel": 1}
            ''',
        "evaluator/bad.py": 'ROWS = ("strings", "toy", "neurons-ish", "neuron")\n',
        "function_store/benchmark.py": 'FAMILY = "numeric"  # the registry may\n',
        "function_store/numeric/x.py": 'FAMILY = "numeric"  # a family folder may\n',
        "evaluator/numeric/x.py": 'FAMILY = "numeric"\n',
    }.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    keys = keys_of(
        [
            Benchmark(family="numeric", title="", sources={}),
            Benchmark(family="strings", title="", sources={}),
            Benchmark(family="neurons", title="", sources={}, fixed_datasets=("neuron",)),
            Benchmark(family="ravel", title="", sources={}, fixed_datasets=("ravel",)),
        ]
    )
    assert family_literals(tmp_path, keys) == [
        ("evaluator/bad.py", 1, "neuron"),
        ("evaluator/bad.py", 1, "strings"),
        ("harness/web/bad.py", 4, "numeric"),
        ("harness/web/bad.py", 5, "neuron/"),
        ("harness/web/bad.py", 6, "ravel"),
    ]


def test_web_templates_and_scripts_name_no_family() -> None:
    """The generic pages (templates, static scripts) say what the registry says, never a family
    (a caption once read "numeric targets" on every run page)."""
    import re

    keys = keys_of(builtin_records())
    words = re.compile(
        r"\b(" + "|".join(sorted(keys.families | keys.fixed_datasets)) + r")\b", re.I
    )
    web = ROOT / "harness" / "web"
    found = [
        f"{p.relative_to(ROOT)}:{n}: {m.group(0)}"
        for p in sorted([*web.glob("templates/*.html"), *web.glob("static/*.js")])
        for n, line in enumerate(p.read_text().splitlines(), 1)
        for m in words.finditer(line)
    ]
    assert not found, "a generic page names a family:\n" + "\n".join(found)
