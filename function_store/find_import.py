"""Import of an original FIND dataset folder, served by running its own scripts (runner "script").

Layout (FIND's `find_dataset/`, e.g. the unzipped Zenodo FIND-dataset.zip):
`<root>/<category>/fNNNNN/function_code.py` (+ `mlp_approx_model.pt`, `initial.json` where present),
categories numeric, strings, neurons_entities, neurons_relations. Targets are
`find-import/<family>/fNNNNN`. A call runs `python3 function_code.py ARG...` in the function's folder
like FIND's interpreter does, but as an argv list with no shell (an input is never parsed by a
shell), with a timeout, and parses FIND's `Function input - output pairs: (a, b) ...` line back
into one CallOutput per input. `script_argv` is the one place the command is built, so a sandbox
backend can wrap it.

Release check (spec §0): the only known copy of the Zenodo FIND-dataset.zip holds an OLD (June 2023)
string set and OLD relation prompts. Paired with the current (Sept 2023) unit tests they are wrong
in silence (in 961 of 1000 string functions none of the 10 unit tests reproduce). So before a
folder's functions meet unit tests, `stale_strings_reason` runs a few of them on their own tests'
correct inputs and `stale_relations_reason` looks for the current prompt wording; a mismatch makes
the targets unavailable with a reason that says what to do instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from agents.protocol.reply import HEADER, split_outputs
from function_store.catalog import CatalogOptions, register_source
from function_store.datasets import DATASETS, DataUnavailable, data_path
from function_store.models import (
    CallOutput,
    Family,
    HiddenTruth,
    PublicMeta,
    Target,
    UnitTest,
    make_canary,
)
from function_store.neural.prompts import relation_template
from function_store.runtime import NoBackboneConfigured, RuntimeContext, register_runner
from function_store.service.isolation import sandbox_env, script_gate

CATEGORY_FAMILY: dict[str, Family] = {
    "numeric": "numeric",
    "strings": "strings",
    "neurons_entities": "entities",
    "neurons_relations": "relations",
}
FAMILY_CATEGORY: dict[str, str] = {f: c for c, f in CATEGORY_FAMILY.items()}
SCRIPT = "function_code.py"
DEFAULT_TIMEOUT_S = 60.0
# The neuron files carry placeholders FIND substitutes when it copies them (spec §4).
PLACEHOLDERS = ("{API_BASE}", "{LLAMA_PATH}")


def find_root(options: CatalogOptions | None = None) -> Path | None:
    """The configured original FIND dataset folder: `options.import_root`, else HARNESS_FIND_ROOT."""
    if options is not None and options.import_root:
        return Path(options.import_root).expanduser()
    env = os.environ.get("HARNESS_FIND_ROOT")
    return Path(env).expanduser() if env else None


# --- command and output -------------------------------------------------------------------


def default_python() -> str:
    """The interpreter for FIND scripts: HARNESS_SCRIPT_PYTHON, else this one (a python3 that has
    numpy/scipy/torch, which the scripts import)."""
    return os.environ.get("HARNESS_SCRIPT_PYTHON") or sys.executable


def script_argv(path: Path, inputs: Sequence[str], python: str | None = None) -> list[str]:
    """FIND's `python function_code.py ARG...` as an argv list, to run with cwd = path's folder.
    Each input is one argv element, verbatim: nothing is split, quoted or expanded."""
    return [python or default_python(), Path(path).name, *inputs]


def script_env() -> dict[str, str]:
    """A FIND script's whole environment (a script is third-party target code): no user
    site-packages, since HOME may be a writable /tmp."""
    return sandbox_env(
        {"PYTHONIOENCODING": "utf-8", "PYTHONNOUSERSITE": "1"},
        home=tempfile.gettempdir(),
        python=default_python(),
    )


def parse_pairs(stdout: str, inputs: Sequence[str]) -> list[str] | None:
    """Split FIND's output line into one output per input, or None if it does not parse (the
    protocol's reader, `split_outputs`: the line is cut at the echoed inputs)."""
    start = stdout.find(HEADER)
    return None if start < 0 else split_outputs(stdout[start + len(HEADER) :], inputs)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no stderr)"


class ScriptRunner:
    """Runs one FIND `function_code.py` per call, with all inputs of the call, like FIND."""

    exclusive = True  # third-party code: runs alone in its service (service.isolation)

    def __init__(
        self,
        path: Path,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        python: str | None = None,
        substitutions: dict[str, str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.python = python
        # FIND's placeholders filled in: kept here, written to a fresh folder for each call (a
        # copy made once would sit in /tmp, where another target's script could rewrite it)
        self.source: str | None = None
        if substitutions:
            text = self.path.read_text(encoding="utf-8")
            for key, value in substitutions.items():
                text = text.replace(key, value)
            self.source = text

    def _materialise(self, into: Path) -> Path:
        """The function folder's files in `into`, the script with its placeholders filled in
        (the user's folder is never modified)."""
        for f in self.path.parent.iterdir():
            if f.is_file() and f.name != self.path.name:
                (into / f.name).write_bytes(f.read_bytes())
        (into / self.path.name).write_text(self.source or "", encoding="utf-8")
        return into / self.path.name

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        inputs = list(inputs)
        if not inputs:
            return []
        # one script at a time, nothing of an earlier one alive (function_store.service.isolation)
        with script_gate(), tempfile.TemporaryDirectory(prefix="find-call-") as scratch:
            return self._call(inputs, Path(scratch))

    def _call(self, inputs: list[str], scratch: Path) -> list[CallOutput]:
        def fail(msg: str) -> list[CallOutput]:
            return [CallOutput(input=s, error=msg) for s in inputs]

        try:
            path = self._materialise(scratch) if self.source is not None else self.path
        except OSError as e:
            return fail(f"could not prepare the function script: {e}")
        argv = script_argv(path, inputs, self.python)
        env = {**script_env(), "HOME": str(scratch)}  # a fresh HOME: nothing planted is read
        try:
            proc = subprocess.run(
                argv,
                cwd=path.parent,
                capture_output=True,
                timeout=self.timeout_s,
                stdin=subprocess.DEVNULL,
                env=env,
                check=False,
                close_fds=True,  # no descriptor of the service reaches target code
            )
        except subprocess.TimeoutExpired:
            return fail(f"timed out after {self.timeout_s:g}s")
        except (OSError, ValueError) as e:  # e.g. interpreter missing, NUL byte in an input
            return fail(f"could not run the function script: {e}")
        stdout = proc.stdout.decode("utf-8", errors="replace")
        if not stdout.strip():
            # FIND's string/MLP scripts have no try/except: one bad input empties the whole call.
            return fail(f"no output: {_last_line(proc.stderr.decode('utf-8', errors='replace'))}")
        outputs = parse_pairs(stdout, inputs)
        if outputs is None:
            return fail(f"could not parse the script's output: {stdout[:200]!r}")
        return [CallOutput(input=s, output=o) for s, o in zip(inputs, outputs, strict=True)]


@register_runner("script")
def script_runner(target: Target, ctx: RuntimeContext) -> ScriptRunner:
    spec = target.hidden.spec
    subs = None
    if spec.get("placeholders"):
        api = ctx.extra.get("backbone_url") or os.environ.get("HARNESS_BACKBONE_URL")
        if not api:
            raise NoBackboneConfigured()
        llama = ctx.extra.get("llama_path") or os.environ.get("HARNESS_LLAMA_PATH", "")
        subs = {"{API_BASE}": f"'{api}'", "{LLAMA_PATH}": f"'{llama}'"}
    timeout = float(
        spec.get("timeout_s") or os.environ.get("HARNESS_SCRIPT_TIMEOUT") or DEFAULT_TIMEOUT_S
    )
    if "call_timeout_s" in ctx.extra:  # in a service: a script ends just after its call's limit
        timeout = min(timeout, float(ctx.extra["call_timeout_s"]) + 1.0)
    return ScriptRunner(Path(spec["path"]), timeout, substitutions=subs)


# --- release check -----------------------------------------------------------------------

RELEASE_SAMPLE = 5  # string functions run per check; each is one subprocess with 10 inputs
USE_FIND_IMPORT = (
    " Serve that folder as dataset find-import (CatalogOptions.import_root), whose targets keep "
    "the folder's own files and unit tests, instead of pairing it with the current release."
)


def _correct_pairs(record: dict) -> tuple[list[str], list[str]]:
    """The 10 (input, output) pairs a unit-test record marks correct (`correct_inx` is 1-based)."""
    ins, outs = [], []
    for (inputs, outputs), k in zip(record["test_vec"], record["correct_inx"], strict=True):
        ins.append(inputs[k - 1])
        outs.append(outputs[k - 1])
    return ins, outs


def stale_strings_reason(
    root: Path, records: Sequence[dict], sample: int = RELEASE_SAMPLE
) -> str | None:
    """Why the string functions under `root/strings/` do not belong with these unit tests, or None.

    Up to `sample` functions spread over the folder run (as targets do: `ScriptRunner`, an argv
    list, no shell; in parallel) on the correct inputs of their own unit tests. Fewer than half of
    those tests reproducing means another release. Measured on the real folders: the current
    repository's f00000-f00003 reproduce 10 of 10 each (f00004, stochastic, 2 in one run); of the
    1000 old Zenodo functions 961 reproduce none of their 10, and all but 2 at most 3."""
    folder = Path(root) / "strings"
    present = [r for r in records if (folder / r["name"] / SCRIPT).is_file()]
    if not present:
        return None
    picked = present[:: max(1, len(present) // sample)][:sample]
    stamp = tuple((folder / r["name"] / SCRIPT).stat().st_mtime_ns for r in picked)
    key = json.dumps(picked, sort_keys=True)
    hits, total = _reproduced(str(folder), key, stamp)
    if 2 * hits >= total:
        return None
    names = ", ".join(r["name"] for r in picked)
    return (
        f"the string functions in {folder} do not match the unit tests they would be paired "
        f"with: only {hits} of the {total} unit tests of {names} reproduce, as with the Zenodo "
        "FIND-dataset.zip's OLD (June 2023) string set and the current (Sept 2023) tests."
    )


@lru_cache(maxsize=16)
def _reproduced(folder: str, picked_json: str, _stamp: tuple[int, ...]) -> tuple[int, int]:
    """(unit tests reproduced, unit tests run) for the picked records; cached per file state."""

    def run(record: dict) -> int:
        ins, want = _correct_pairs(record)
        got = _sandboxed_outputs(Path(folder) / record["name"] / SCRIPT, ins)
        return sum(o == w for o, w in zip(got, want, strict=True))

    picked = json.loads(picked_json)
    with ThreadPoolExecutor(max_workers=len(picked)) as pool:
        hits = sum(pool.map(run, picked))
    return hits, 10 * len(picked)


def _sandboxed_outputs(script: Path, inputs: list[str]) -> list[str | None]:
    """One FIND script's outputs for `inputs`, run in the orchestrator's sandbox: a folder's
    scripts are target code, which never runs on the host (docs/security.md). Without a sandbox
    the check cannot run, and says so."""
    from harness.sandbox import Limits, SandboxError, get_sandbox  # lazy: orchestrator side only

    try:
        sandbox = get_sandbox("bwrap")
    except SandboxError as e:
        raise DataUnavailable(
            f"cannot check the FIND folder's release without a sandbox: {e}"
        ) from e
    res = sandbox.run(
        [default_python(), f"/sandbox/{SCRIPT}", *inputs],  # no shell; cwd is the sandbox's /tmp
        files={SCRIPT: script.read_bytes()},
        limits=Limits(timeout_s=DEFAULT_TIMEOUT_S, memory_mb=2048),
    )
    outputs = parse_pairs(res.stdout.decode("utf-8", errors="replace"), inputs)
    return list(outputs) if outputs is not None else [None] * len(inputs)


def _current_relation_initials() -> dict[str, object]:
    try:
        records = json.loads(data_path("find/neurons_relations/data.json").read_text("utf-8"))
    except (DataUnavailable, OSError, ValueError):
        return {}
    return {Path(r["dir"]).name: r.get("initial") for r in records}


def stale_relations_reason(root: Path) -> str | None:
    """Why the relation modules under `root/neurons_relations/` are not the current release, or
    None. A script without the current prompt's instruction line has the old wording; an
    `initial.json` unlike the released data.json's list is an old exemplar list."""
    folders = sorted((Path(root) / "neurons_relations").glob("f[0-9][0-9][0-9][0-9][0-9]"))
    scripts = [f / SCRIPT for f in folders if (f / SCRIPT).is_file()]
    if not scripts:
        return None
    line = relation_template("x", "y").splitlines()[1]  # the current instruction line
    old_wording = [p for p in scripts if line not in p.read_text("utf-8", "replace")]
    current = _current_relation_initials()
    old_initial = [
        f
        for f in folders
        if f.name in current
        and (f / "initial.json").is_file()
        and _read_json(f / "initial.json") != current[f.name]
    ]
    if not old_wording and not old_initial:
        return None
    return (
        f"the relation modules in {Path(root) / 'neurons_relations'} are not the current "
        f"release: {len(old_wording)} of {len(scripts)} scripts lack the current prompt wording "
        f"and {len(old_initial)} initial.json lists differ from the released data.json, as in "
        "the Zenodo FIND-dataset.zip's OLD relation set."
    )


def _is_current_release_file(path: Path, rel: str) -> bool:
    """`path` is byte-identical to the current release's `rel` (checksum in the dataset registry)."""
    spec = next(f for f in DATASETS["find"].files if f.path == rel)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == spec.sha256
    except OSError:
        return False


# --- targets ------------------------------------------------------------------------------


def script_hidden(path: Path, target_id: str, description: str = "") -> HiddenTruth:
    """Ground truth of a FIND script target: the script itself is the code."""
    code = path.read_text(encoding="utf-8", errors="replace")
    spec: dict[str, object] = {"path": str(path.resolve())}
    if any(p in code for p in PLACEHOLDERS):
        spec["placeholders"] = True
    canary = make_canary(target_id)
    return HiddenTruth(
        runner="script", spec=spec, description=description, code=code, canary=canary
    )


def string_variant(code: str) -> str:
    return "composed" if "def function1" in code else "atomic"


def _variant(family: Family, folder: Path, code: str, name_dict: dict[str, str]) -> str:
    if family == "numeric":
        if (folder / "mlp_approx_model.pt").exists():
            return "mlp"
        served = name_dict.get(folder.name, "")
        return {
            "function_code.py": "clean",
            "corrupted_function_code.py": "corrupted",
            "noised_function_code.py": "noised",
            "load_mlp.py": "mlp",
        }.get(served, "unknown")
    if family == "strings":
        return string_variant(code)
    if family == "entities":
        return "composed" if "concept2" in code else "atomic"
    return "corrupted" if "ex = " in code else "clean"


def _public(family: Family, variant: str) -> PublicMeta:
    if family == "numeric":
        prompt = "numeric_mlp" if variant == "mlp" else "numeric"
        return PublicMeta(input_kind="number", prompt_family=prompt, value_range=(-128.0, 128.0))
    if family == "strings":
        return PublicMeta(input_kind="string", prompt_family="strings")
    return PublicMeta(input_kind="word", prompt_family=f"neurons_{family}")  # type: ignore[arg-type]


def _read_json(path: Path) -> object | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def unit_tests_from(record: dict) -> list[UnitTest]:
    """FIND's unit_test_data.json record (spec §5.1) -> UnitTests (entities have inputs only)."""
    out = []
    for triplet, correct in zip(record["test_vec"], record["correct_inx"], strict=True):
        if len(triplet) == 2 and all(isinstance(x, list) for x in triplet):
            out.append(UnitTest(inputs=triplet[0], outputs=triplet[1], correct=correct))
        else:
            out.append(UnitTest(inputs=list(triplet), correct=correct))
    return out


def load_folder(root: Path, family: Family) -> list[Target]:
    category_dir = Path(root) / FAMILY_CATEGORY[family]
    if not category_dir.is_dir():
        return []
    name_dict = _read_json(category_dir / "func_name_dict.json")
    name_dict = name_dict if isinstance(name_dict, dict) else {}
    tests = _read_json(category_dir / "unit_test_data.json")
    tests_by_name = {r["name"]: r for r in tests} if isinstance(tests, list) else {}
    # the current release's unit tests copied into a folder: are its functions that release?
    stale = None
    if family == "strings" and _is_current_release_file(
        category_dir / "unit_test_data.json", "find/strings/unit_test_data.json"
    ):
        stale = stale_strings_reason(Path(root), list(tests_by_name.values()))
    elif family == "relations" and _is_current_release_file(
        category_dir / "unit_test_data.json", "find/neurons_relations/unit_test_data.json"
    ):
        stale = stale_relations_reason(Path(root))
    if stale:
        stale += (
            f" Its {category_dir.name}/unit_test_data.json belongs to the other release: remove "
            "it, or put the unit tests of this set in its place."
        )
    targets = []
    for folder in sorted(category_dir.glob("f[0-9][0-9][0-9][0-9][0-9]")):
        script = folder / SCRIPT
        if not script.is_file():
            continue
        tid = f"find-import/{family}/{folder.name}"
        hidden = script_hidden(script, tid)
        variant = _variant(family, folder, hidden.code or "", name_dict)
        initial = _read_json(folder / "initial.json")
        targets.append(
            Target(
                id=tid,
                dataset="find-import",
                family=family,
                variant=variant,
                public=_public(family, variant),
                hidden=hidden,
                unit_tests=unit_tests_from(tests_by_name[folder.name])
                if folder.name in tests_by_name
                else [],
                exemplars=[str(x) for x in initial] if isinstance(initial, list) else [],
                unavailable_reason=stale,
            )
        )
    return targets


@register_source("find-import")
def load(family: Family, options: CatalogOptions) -> list[Target]:
    root = find_root(options)
    if root is None:
        return []
    if not root.is_dir():
        raise FileNotFoundError(
            f"FIND dataset folder {root} does not exist (import_root / HARNESS_FIND_ROOT)"
        )
    return load_folder(root, family)
