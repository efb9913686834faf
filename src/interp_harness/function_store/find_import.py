"""Import of an original FIND dataset folder, served by running its own scripts (runner "script").

Layout (FIND's `find_dataset/`, e.g. the unzipped Zenodo FIND-dataset.zip):
`<root>/<category>/fNNNNN/function_code.py` (+ `mlp_approx_model.pt`, `initial.json` where present),
one category folder per FIND family. Targets are `find-import/<family>/fNNNNN`. Each family says
how its functions sit in the folder (`FolderKind`, in its own package) and gets its catalog source
from `folder_source`; this module holds what they share and names no family. A call runs `python3 function_code.py ARG...` in the function's folder
like FIND's interpreter does, but as an argv list with no shell (an input is never parsed by a
shell), with a timeout, and parses FIND's `Function input - output pairs: (a, b) ...` line back
into one CallOutput per input. `script_argv` is the one place the command is built, so a sandbox
backend can wrap it.

Release check: the only known copy of the Zenodo FIND-dataset.zip holds an OLD (June 2023)
string set and OLD relation prompts. Paired with the current (Sept 2023) unit tests they are wrong
in silence (in 961 of 1000 string functions none of the 10 unit tests reproduce). So before a
folder's functions meet the current release's unit tests, a family's `FolderKind.stale` check
(e.g. running a few functions on their own tests' correct inputs, in the `ScriptSandbox` the
harness sets) may make the targets unavailable with a reason that says what to do instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from interp_harness.agents.protocol.reply import HEADER, split_outputs
from interp_harness.function_store.call_clock import CURRENT
from interp_harness.function_store.catalog import CatalogOptions, Source, listed_when
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.find_data import FIND
from interp_harness.function_store.models import (
    CallOutput,
    Family,
    HiddenTruth,
    PublicMeta,
    Target,
    UnitTest,
    make_canary,
)
from interp_harness.function_store.runtime import (
    NoBackboneConfigured,
    RuntimeContext,
    register_runner,
)
from interp_harness.function_store.service.isolation import sandbox_env, script_gate

SCRIPT = "function_code.py"
DEFAULT_TIMEOUT_S = 60.0
# The neuron files carry placeholders FIND substitutes when it copies them
# (`collect_interpretations.copy_func`: `{API_BASE}`, `{LLAMA_PATH}`).
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
        # one script at a time, nothing of an earlier one alive (interp_harness.function_store.service.isolation)
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
        timeout = self.timeout_s
        clock = CURRENT.get()
        if clock is not None:  # in a service: ends just after its call's limit (it holds the gate)
            timeout = min(timeout, clock.limit.seconds + 1.0)
        try:
            proc = subprocess.run(
                argv,
                cwd=path.parent,
                capture_output=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                env=env,
                check=False,
                close_fds=True,  # no descriptor of the service reaches target code
            )
        except subprocess.TimeoutExpired:
            return fail(f"timed out after {timeout:g}s")
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
    return ScriptRunner(Path(spec["path"]), timeout, substitutions=subs)


# --- release check -----------------------------------------------------------------------

USE_FIND_IMPORT = (
    " Serve that folder as dataset find-import (CatalogOptions.import_root), whose targets keep "
    "the folder's own files and unit tests, instead of pairing it with the current release."
)


class ScriptSandboxUnavailable(RuntimeError):
    """The script sandbox cannot run here (e.g. bubblewrap is missing)."""


class ScriptSandbox(Protocol):
    """Runs one FIND script isolated from the host: a folder's scripts are target code, which
    never runs on the host (docs/security.md). The harness sets its sandbox (`set_script_sandbox`)
    so that this layer imports no harness."""

    def run_script(self, source: bytes, args: Sequence[str], timeout_s: float) -> str:
        """The stdout of `python3 function_code.py ARGS...` with `source` as the script (argv
        list, no shell). Raises ScriptSandboxUnavailable when no sandbox can run it."""
        ...


_script_sandbox: ScriptSandbox | None = None


def set_script_sandbox(sandbox: ScriptSandbox | None) -> None:
    """Where release checks run FIND scripts (None: nowhere; a check then says so)."""
    global _script_sandbox
    _script_sandbox = sandbox


def sandboxed_outputs(script: Path, inputs: list[str]) -> list[str | None]:
    """One FIND script's outputs for `inputs`, run in the configured `ScriptSandbox`. Without one
    the check cannot run, and says so."""
    if _script_sandbox is None:
        raise DataUnavailable(
            "cannot check the FIND folder's release without a sandbox: none is configured "
            "(the harness sets one with interp_harness.function_store.find_import.set_script_sandbox)"
        )
    try:
        stdout = _script_sandbox.run_script(script.read_bytes(), inputs, DEFAULT_TIMEOUT_S)
    except ScriptSandboxUnavailable as e:
        raise DataUnavailable(
            f"cannot check the FIND folder's release without a sandbox: {e}"
        ) from e
    outputs = parse_pairs(stdout, inputs)
    return list(outputs) if outputs is not None else [None] * len(inputs)


def correct_pairs(record: dict) -> tuple[list[str], list[str]]:
    """The 10 (input, output) pairs a unit-test record marks correct (`correct_inx` is 1-based)."""
    ins, outs = [], []
    for (inputs, outputs), k in zip(record["test_vec"], record["correct_inx"], strict=True):
        ins.append(inputs[k - 1])
        outs.append(outputs[k - 1])
    return ins, outs


def is_current_release_file(path: Path, rel: str) -> bool:
    """`path` is byte-identical to the current release's `rel` (checksum in the dataset registry)."""
    spec = next(f for f in FIND.files if f.path == rel)
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


def read_json(path: Path) -> object | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def unit_tests_from(record: dict) -> list[UnitTest]:
    """FIND's unit_test_data.json record -> UnitTests (entities have inputs only)."""
    out = []
    for triplet, correct in zip(record["test_vec"], record["correct_inx"], strict=True):
        if len(triplet) == 2 and all(isinstance(x, list) for x in triplet):
            out.append(UnitTest(inputs=triplet[0], outputs=triplet[1], correct=correct))
        else:
            out.append(UnitTest(inputs=list(triplet), correct=correct))
    return out


@dataclass(frozen=True)
class FolderKind:
    """How one family's functions sit in a FIND folder."""

    category: str  # the category folder, as FIND names it
    # (function folder, script source, the category's func_name_dict.json) -> variant
    variant: Callable[[Path, str, dict[str, str]], str]
    public: Callable[[str], PublicMeta]  # variant -> what a prompt may say
    # the current release's unit tests (a path in the dataset registry): a folder holding a copy
    # is checked by `stale` (root, its unit-test records) -> why it is another release, or None
    release_tests: str | None = None
    stale: Callable[[Path, list[dict]], str | None] | None = None


def load_folder(root: Path, family: Family, kind: FolderKind) -> list[Target]:
    category_dir = Path(root) / kind.category
    if not category_dir.is_dir():
        return []
    name_dict = read_json(category_dir / "func_name_dict.json")
    name_dict = name_dict if isinstance(name_dict, dict) else {}
    tests = read_json(category_dir / "unit_test_data.json")
    tests_by_name = {r["name"]: r for r in tests} if isinstance(tests, list) else {}
    # the current release's unit tests copied into a folder: are its functions that release?
    stale = None
    if (
        kind.stale is not None
        and kind.release_tests is not None
        and is_current_release_file(category_dir / "unit_test_data.json", kind.release_tests)
    ):
        stale = kind.stale(Path(root), list(tests_by_name.values()))
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
        variant = kind.variant(folder, hidden.code or "", name_dict)
        initial = read_json(folder / "initial.json")
        targets.append(
            Target(
                id=tid,
                dataset="find-import",
                family=family,
                variant=variant,
                public=kind.public(variant),
                hidden=hidden,
                unit_tests=unit_tests_from(tests_by_name[folder.name])
                if folder.name in tests_by_name
                else [],
                exemplars=[str(x) for x in initial] if isinstance(initial, list) else [],
                unavailable_reason=stale,
            )
        )
    return targets


def folder_configured(options: CatalogOptions) -> bool:
    """find-import is listed only where a folder is configured (or the dataset is named)."""
    return options.import_root is not None


def folder_source(kind: FolderKind) -> Source:
    """A family's find-import source: its functions in the configured FIND folder."""

    @listed_when(folder_configured)
    def load(family: Family, options: CatalogOptions) -> list[Target]:
        root = find_root(options)
        if root is None:
            return []
        if not root.is_dir():
            raise FileNotFoundError(
                f"FIND dataset folder {root} does not exist (import_root / HARNESS_FIND_ROOT)"
            )
        return load_folder(root, family, kind)

    return load
