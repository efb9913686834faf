"""Import of an original FIND dataset folder: a fake folder with function_code.py scripts written
here in FIND's CLI format, run for real as subprocesses (no shell)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.find_scripts import FIND_STRINGS_MAIN, numeric_script

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.function_store.find_import import parse_pairs, script_argv
from interp_harness.function_store.runtime import (
    NoBackboneConfigured,
    RuntimeContext,
    build_runner,
    call_target,
)

# atomic: output contains ", ", parentheses and ") (" followed by the input itself
TRICKY = (
    "import sys\n\n\ndef function(string):\n    return string + ', x) (' + string\n"
    + FIND_STRINGS_MAIN
)
# composed, FIND-style, and raising on an empty input (no try/except: the whole call fails)
COMPOSED = (
    "import sys\n\n\ndef function1(string):\n    return string[::-1]\n\n\n"
    "def function2(string):\n    return string[0] + string\n\n\n"
    "def function(string):\n    return function1(function2(string))\n" + FIND_STRINGS_MAIN
)
NUMERIC = numeric_script("1 / (2.0 * x)")
# an entity module whose backbone address FIND fills in; this one just reports it
ENTITY = """import sys
API = {API_BASE}


def function(word):
    return len(word) / 10 if API.startswith('http://') else -1.0

if __name__ == '__main__':
    outputs = ''
    for arg in sys.argv[1:]:
        outputs += f'({arg}, {function(arg):.4f}) '
    print(f'Function input - output pairs: {outputs}')
"""
SLEEPY = "import sys, time\ntime.sleep(30)\n"


def _write(root: Path, category: str, name: str, code: str, **extra: str) -> Path:
    folder = root / category / name
    folder.mkdir(parents=True)
    (folder / "function_code.py").write_text(code)
    for fname, text in extra.items():
        (folder / fname.replace("_json", ".json").replace("_pt", ".pt")).write_text(text)
    return folder


@pytest.fixture()
def find_root(tmp_path: Path) -> Path:
    _write(tmp_path, "strings", "f00000", TRICKY)
    _write(tmp_path, "strings", "f00001", COMPOSED)
    _write(tmp_path, "strings", "f00002", SLEEPY)
    (tmp_path / "strings" / "unit_test_data.json").write_text(
        json.dumps(
            [
                {
                    "name": "f00001",
                    "test_vec": [[["ab", "x", "q"], ["aba", "xx", "qqq"]]] * 10,
                    "correct_inx": [1, 2, 1, 1, 1, 1, 1, 1, 1, 3],
                }
            ]
        )
    )
    _write(tmp_path, "numeric", "f00000", NUMERIC, mlp_approx_model_pt="")
    _write(tmp_path, "numeric", "f00150", NUMERIC)
    (tmp_path / "numeric" / "func_name_dict.json").write_text(
        json.dumps({"f00150": "noised_function_code.py"})
    )
    _write(tmp_path, "neurons_entities", "f00000", ENTITY, initial_json='["Paris", "L\\u00f3pez"]')
    return tmp_path


def test_script_argv_is_an_argv_list_not_a_shell_line():
    argv = script_argv(
        Path("/x/f00000/function_code.py"), ["a b", "$(touch pwned)", "'q'"], python="python3"
    )
    assert argv == ["python3", "function_code.py", "a b", "$(touch pwned)", "'q'"]


def test_parse_pairs_by_echoed_inputs():
    line = "Function input - output pairs: (a, a, x) (a) (b, b, x) (b) \n"
    assert parse_pairs(line, ["a", "b"]) == ["a, x) (a", "b, x) (b"]
    # a line that is truly ambiguous is cut at the earliest echo of the next input
    line = "Function input - output pairs: (a, 1) (b, 2) (b, 3) \n"
    assert parse_pairs(line, ["a", "b"]) == ["1", "2) (b, 3"]
    line = "Function input - output pairs: (a, 1) (b, x) (b, 2) (c, 3) \n"
    assert parse_pairs(line, ["a", "b", "c"]) == ["1", "x) (b, 2", "3"]
    assert parse_pairs("Function input - output pairs: (a, ) \n", ["a"]) == [""]
    assert parse_pairs("garbage", ["a"]) is None
    assert parse_pairs("Function input - output pairs: (a, 1) \n", ["b"]) is None


def test_catalog_source_lists_imported_targets(find_root):
    catalog = Catalog(CatalogOptions(import_root=find_root))
    ids = [t.id for t in catalog.list(dataset="find-import")]
    assert ids == [
        "find-import/numeric/f00000",
        "find-import/numeric/f00150",
        "find-import/strings/f00000",
        "find-import/strings/f00001",
        "find-import/strings/f00002",
        "find-import/entities/f00000",
    ]
    mlp, noised = (
        catalog.get("find-import/numeric/f00000"),
        catalog.get("find-import/numeric/f00150"),
    )
    assert (mlp.variant, mlp.public.prompt_family) == ("mlp", "numeric_mlp")
    assert (noised.variant, noised.public.prompt_family, noised.public.input_kind) == (
        "noised",
        "numeric",
        "number",
    )
    s1 = catalog.get("find-import/strings/f00001")
    assert (
        s1.variant == "composed" and catalog.get("find-import/strings/f00000").variant == "atomic"
    )
    assert len(s1.unit_tests) == 10 and s1.unit_tests[-1].correct == 3
    assert s1.hidden.code == COMPOSED and s1.hidden.canary
    ent = catalog.get("find-import/entities/f00000")
    assert ent.exemplars == ["Paris", "López"] and ent.public.prompt_family == "neurons_entities"


def test_no_folder_configured_gives_no_targets(monkeypatch):
    monkeypatch.delenv("HARNESS_FIND_ROOT", raising=False)
    assert Catalog().list(dataset="find-import") == []


def test_strings_outputs_with_commas_and_parentheses(find_root):
    t = Catalog(CatalogOptions(import_root=find_root)).get("find-import/strings/f00000")
    inputs = ["a", "hello world", "$(echo hi)", "(", "a"]
    outs = call_target(t, inputs)
    assert [o.input for o in outs] == inputs
    assert [o.output for o in outs] == [s + ", x) (" + s for s in inputs]


def test_failing_input_empties_the_call_with_stderr_line(find_root):
    t = Catalog(CatalogOptions(import_root=find_root)).get("find-import/strings/f00001")
    assert [o.output for o in call_target(t, ["ab", "xyz"])] == ["baa", "zyxx"]
    outs = call_target(t, ["ab", ""])
    assert all(o.output is None for o in outs)
    assert all(o.error == "no output: IndexError: string index out of range" for o in outs)


def test_numeric_script(find_root):
    t = Catalog(CatalogOptions(import_root=find_root)).get("find-import/numeric/f00150")
    outs = call_target(t, ["2", "0", "-4"])
    assert [o.output for o in outs] == ["0.25", "None", "-0.125"]
    bad = call_target(t, ["2", "abc"])  # float('abc') is outside FIND's try: no output at all
    assert all(o.error and "ValueError" in o.error for o in bad)


def test_timeout(find_root, monkeypatch):
    monkeypatch.setenv("HARNESS_SCRIPT_TIMEOUT", "1")
    t = Catalog(CatalogOptions(import_root=find_root)).get("find-import/strings/f00002")
    outs = call_target(t, ["a"])
    assert outs[0].error == "timed out after 1s"


def test_placeholders_need_a_backbone_and_are_filled_in_a_copy(find_root, monkeypatch):
    monkeypatch.delenv("HARNESS_BACKBONE_URL", raising=False)
    t = Catalog(CatalogOptions(import_root=find_root)).get("find-import/entities/f00000")
    with pytest.raises(NoBackboneConfigured):
        build_runner(t)
    runner = build_runner(t, RuntimeContext(extra={"backbone_url": "http://127.0.0.1:9/v1"}))
    assert [o.output for o in runner.call(["Paris", "Rome"])] == ["0.5000", "0.4000"]
    original = (find_root / "neurons_entities" / "f00000" / "function_code.py").read_text()
    assert "{API_BASE}" in original  # the user's folder is untouched


def test_runs_with_this_interpreter():
    assert script_argv(Path("f.py"), ["1"])[0] == sys.executable
