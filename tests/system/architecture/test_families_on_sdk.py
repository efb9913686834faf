"""The built-in families use the public SDK as a plugin does (issue 48 item 5): every name the SDK
exports is imported from `interp_harness.sdk`, and each internal they still import is listed below
with the reason the SDK has no name for it. The layering check (test_layers.py) takes a name from
the SDK as an edge to the layer that defines it, so this adds no import the layers forbid."""

from __future__ import annotations

from pathlib import Path

from support.family_sdk import (
    SHARED_FAMILY_FOLDERS,
    internal_imports,
    internals_problems,
    sdk_bypasses,
)
from support.layering import FAMILIES, PARTS, SRC, sdk_names
from support.planted import planted_tree

import interp_harness.sdk as sdk

FOLDERS = FAMILIES | set(SHARED_FAMILY_FOLDERS)

# Modules of ours outside their own folders that the family folders import (an entry covers its
# submodules) -> why the SDK has no name for what they use. A plugin has its own equivalents or
# does without; moving one of these into the SDK removes its entry (the test says when it is stale).
FAMILY_INTERNALS: dict[str, str] = {
    "interp_harness.agents.protocol.values": (
        "parse_number, UnparseableValue: the numeric scorer reads numbers in the agents' value "
        "format and reports what failed; the SDK has parse_value, which returns any value"
    ),
    "interp_harness.agents.protocol.tools": (
        "match_words: the circuits runner reads a call's words with the text protocol's own "
        "reader of its declared commands"
    ),
    "interp_harness.agents.scripted_neuron": (
        "SENTENCES: `harness neurons iia` reuses the scripted agent's probe sentences as its corpus"
    ),
    "interp_harness.agents.toolspec": (
        "SUBMIT, AnswerTag, Word: the answer command's vocabulary in a command spec; the SDK has "
        "ToolSpec and ToolCall only"
    ),
    "interp_harness.evaluator.answer_bounds": (
        "each metric's bound on the answer it reads and the worst value an unreadable answer "
        "scores (issue 49): the built-in metrics' own table; a plugin's scorer bounds its own"
    ),
    "interp_harness.evaluator.domain": (
        "score_domain, true_interval: the input domain numeric answers are scored on"
    ),
    "interp_harness.evaluator.judge": (
        "JudgeClient, JudgeSettings, make_judge and its errors: the family CLIs and probes build "
        "their own judge; a plugin's scorer reaches the judge through ScoringContext"
    ),
    "interp_harness.evaluator.sandbox_exec": (
        "CodeRunner, ExecSettings: the numeric and strings batch scorers run their jobs "
        "through a runner of their own; a plugin runs CodeJob (SDK) through ScoringContext"
    ),
    "interp_harness.evaluator.scorer": (
        "EvalSettings, Item, NoTargetClient, parse_details, run_code_jobs_with, score_parts: the "
        "built-in scorers' helpers beside Scorer and ScoringContext (which come from the SDK)"
    ),
    "interp_harness.evaluator.simulation": (
        "the explanation simulator and its correlation scoring, shared by neurons and SAE latents"
    ),
    "interp_harness.evaluator.token_activations": (
        "the evaluator side the token-activation families (neurons, SAE latents) share"
    ),
    "interp_harness.evaluator.unit_tests": (
        "the judge's unit tests (templates, JudgeScorer), shared by strings and entities_relations"
    ),
    "interp_harness.evaluator.unit_tests_panel": "table_panel: the unit tests' episode panel",
    "interp_harness.function_store.benchmark": (
        "find_sources: the FIND release's sources, shared by its three families; the SDK has the "
        "record itself (Benchmark, ReportRow, register_benchmark)"
    ),
    "interp_harness.function_store.call_clock": (
        "CallBudget (a record's call budget) and model_request (a model call's queue wait kept "
        "out of the target's time)"
    ),
    "interp_harness.function_store.catalog": (
        "CatalogOptions, GenConfig, listed_when: the options the catalog passes a source"
    ),
    "interp_harness.function_store.commands": (
        "list_call: the list-of-texts command spec the activation families share; the SDK "
        "has find_commands"
    ),
    "interp_harness.function_store.datasets": (
        "the registry and cache of the fixed datasets we ship (data_path, cache_dir, register, "
        "DataUnavailable); a plugin ships its own data"
    ),
    "interp_harness.function_store.find_import": (
        "the FIND release's folders and scripts (folder_source, FolderKind, ...), shared by the "
        "three FIND families"
    ),
    "interp_harness.function_store.formatting": "format_value: how a numeric output is printed",
    "interp_harness.function_store.intervention_access": (
        "connect, connect_url: an intervention client from a runtime context or a scorer's URL"
    ),
    "interp_harness.function_store.models": (
        "Family, UnitTest, model_target: the built-in families' names, the judge's unit tests and "
        "the constructor of a model-backed target; the SDK has Target, PublicMeta, HiddenTruth, "
        "CallOutput, make_canary"
    ),
    "interp_harness.function_store.runtime": (
        "TargetUnavailable, NoBackboneConfigured, register_preparer, build_runner: runner errors "
        "and hooks beyond Runner, RuntimeContext and register_runner"
    ),
    "interp_harness.function_store.token_activations": (
        "the target side the token-activation families (neurons, SAE latents) share"
    ),
    "interp_harness.model_services.backbone.schemas": (
        "the backbone LM's wire schemas, for entities_relations' own client"
    ),
    "interp_harness.model_services.http_retry": (
        "the retrying HTTP call entities_relations' backbone client makes"
    ),
    "interp_harness.model_services.intervention.client": (
        "InterventionClient and its errors: activations and interchanges of a served model"
    ),
    "interp_harness.model_services.intervention.circuit_model": (
        "CircuitModel and parse_word: the circuits family's experiments, below the targets so "
        "that the intervention service serves the same ones"
    ),
    "interp_harness.model_services.intervention.circuits_client": (
        "RemoteCircuitModel: the circuits runner's experiments on the intervention service"
    ),
    "interp_harness.model_services.intervention.compiled": (
        "CompiledTransformer and its .npz: the circuits family's compiled models (tracr's forward "
        "pass in torch), built and run in process"
    ),
    "interp_harness.model_services.intervention.engine": (
        "Engine: `harness sae build` runs the model in process to train SAEs"
    ),
    "interp_harness.model_services.intervention.featurizers": (
        "RAVEL's featurizers and their array encoding, as the intervention service reads them"
    ),
    "interp_harness.model_services.intervention.model": (
        "LoadedModel and `model`: building SAEs and RAVEL's local methods load the model in process"
    ),
    "interp_harness.model_services.intervention.sae_names": "NAME_RE: what an SAE may be named",
    "interp_harness.model_services.intervention.saelens": (
        "reading and writing SAEs in SAELens' format"
    ),
    "interp_harness.model_services.intervention.schemas": (
        "the intervention service's wire schemas (ModelInfo, FeaturizerSpec, ArrayB64)"
    ),
}


def test_the_checks_read_the_sdk_table() -> None:
    assert sorted(sdk_names(SRC)) == sdk.__all__


def test_builtin_families_import_public_names_from_the_sdk() -> None:
    bad = sdk_bypasses(SRC, FOLDERS, sdk_names(SRC))
    assert not bad, "import these from interp_harness.sdk:\n" + "\n".join(bad)


def test_the_internals_the_families_import_are_listed() -> None:
    imported = internal_imports(SRC, FOLDERS)
    assert "interp_harness.function_store.datasets" in imported  # the check sees imports
    bad = internals_problems(imported, FAMILY_INTERNALS)
    assert not bad, "\n".join(bad)


def test_the_checks_find_planted_violations(tmp_path: Path) -> None:
    root = planted_tree(
        tmp_path,
        PARTS,
        {
            "sdk/__init__.py": """\
                _WHERE = {
                    "Target": "interp_harness.function_store.models",
                    "Scorer": "interp_harness.evaluator.scorer",
                }
                """,
            "function_store/models.py": "class Target: ...\nclass Family: ...\n",
            "function_store/datasets.py": "",
            "function_store/fam/__init__.py": "",
            "function_store/fam/runner.py": """\
                from interp_harness.function_store.models import Family, Target
                from interp_harness.function_store import Target as T
                import interp_harness.function_store.models
                from interp_harness.function_store import datasets, models
                from interp_harness.sdk import Target
                from interp_harness.function_store.fam import targets
                from . import targets
                """,
            "function_store/fam/targets.py": "",
            "evaluator/scorer.py": "",
            "evaluator/fam/__init__.py": "",
            "evaluator/fam/scorer.py": """\
                from interp_harness.evaluator.scorer import Scorer
                from interp_harness.function_store.fam.runner import Target
                """,
            # shared code outside the family folders is not this check's business
            "evaluator/other.py": "from interp_harness.evaluator.scorer import Scorer\n",
        },
    )
    assert sorted(sdk_bypasses(root, {"fam"}, sdk_names(root))) == [
        "evaluator/fam/scorer.py:1: imports Scorer from interp_harness.evaluator.scorer; "
        "import it from interp_harness.sdk",
        "function_store/fam/runner.py:1: imports Target from interp_harness.function_store.models;"
        " import it from interp_harness.sdk",
        "function_store/fam/runner.py:2: imports Target from interp_harness.function_store; "
        "import it from interp_harness.sdk",
        "function_store/fam/runner.py:3: imports the module interp_harness.function_store.models,"
        " which defines SDK names; import them from interp_harness.sdk",
        "function_store/fam/runner.py:4: imports the module interp_harness.function_store.models,"
        " which defines SDK names; import them from interp_harness.sdk",
    ]
    imported = internal_imports(root, {"fam"})
    assert imported == {
        "interp_harness.evaluator.scorer": {"evaluator/fam/scorer.py"},
        "interp_harness.function_store": {"function_store/fam/runner.py"},
        "interp_harness.function_store.datasets": {"function_store/fam/runner.py"},
        "interp_harness.function_store.models": {"function_store/fam/runner.py"},
    }
    listed = {
        "interp_harness.evaluator": "an entry covers its submodules",
        "interp_harness.function_store.models": "Family",
        "interp_harness.model_services": "no longer imported",
    }
    assert internals_problems(imported, listed) == [
        "interp_harness.function_store is imported by function_store/fam/runner.py and not listed "
        "(import it from interp_harness.sdk, or list it with the reason the SDK has no name for it)",
        "interp_harness.function_store.datasets is imported by function_store/fam/runner.py and "
        "not listed (import it from interp_harness.sdk, or list it with the reason the SDK has "
        "no name for it)",
        "interp_harness.model_services is listed but no family imports it any more",
    ]
