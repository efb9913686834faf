"""FIND's reference data (Schwettmann et al. 2023): the released metadata of its four function
families, five MLP weights and the prompts, pinned to one commit of the FIND repository. Shared by
the FIND families' sources; `harness data fetch find` downloads it."""

from __future__ import annotations

import ast

from interp_harness.function_store.datasets import EXTRACTORS, Dataset, FileSpec, register

FIND_COMMIT = "670d837"
FIND_RAW = f"https://raw.githubusercontent.com/multimodal-interpretability/FIND/{FIND_COMMIT}/"
FIND_ZENODO = "https://zenodo.org/record/8039658/files/FIND-dataset.zip"


def _find_system_prompts(source: bytes) -> dict[str, str]:
    """FIND's interpreter system prompts, read out of `collect_interpretations.py` without running
    it: the two string literals `return_sysPrompt` assigns (else branch: the one every model got;
    if branch: llama-2's), each formatted with the command table as the script formats it
    (`'{} - {}\\n'` per command row; the llama-2 text has four slots for the same table)."""
    tree = ast.parse(source.decode("utf-8"))
    fn = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "return_sysPrompt"
    )
    branch = next(n for n in fn.body if isinstance(n, ast.If))
    llama = ast.literal_eval(branch.body[0].value)
    general = ast.literal_eval(branch.orelse[0].value)
    table = next(
        n.value.args[0]
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "commandTable"
    )
    columns = {
        ast.literal_eval(k): ast.literal_eval(v)
        for k, v in zip(table.keys, table.values, strict=True)
    }
    rows = zip(columns["GPT Commands"], columns["GPT Explanations"], strict=True)
    lines = "".join(f"{cmd} - {why}\n" for cmd, why in rows)
    return {"system": general.format(lines), "system_llama2": llama.format(*[lines] * 4)}


EXTRACTORS["find-system-prompt"] = lambda b: _find_system_prompts(b)["system"].encode("utf-8")
EXTRACTORS["find-system-prompt-llama2"] = lambda b: _find_system_prompts(b)["system_llama2"].encode(
    "utf-8"
)

FIND = register(
    Dataset(
        name="find",
        description="FIND metadata: numeric data.json + func_name_dict.json, 5 MLP weights, string/entity/relation unit tests, prompts",
        base_url=FIND_RAW,
        files=(
            FileSpec(
                "find/neurons_entities/data.json",
                "src/find-dataset/neurons_entities/data.json",
                "f80efe40abd1743f5b99393a0bd998b7535dce9460c2ca9dd4acbc417b7a3a7a",
            ),
            FileSpec(
                "find/neurons_entities/unit_test_data.json",
                "src/find-dataset/neurons_entities/unit_test_data.json",
                "72a75b1ed1f16cd581bf8aacb6048ab235679cf07b69ef066b275ab73398cf7e",
            ),
            FileSpec(
                "find/neurons_relations/data.json",
                "src/find-dataset/neurons_relations/data.json",
                "d1cae90c9b9f1d7fd7ba18c438a0183f39293541e24fd37473b37c1e645f524b",
            ),
            FileSpec(
                "find/neurons_relations/unit_test_data.json",
                "src/find-dataset/neurons_relations/unit_test_data.json",
                "a307a718255d3123e43d8cbd45998039be5384adfe2307701ba3c370cbbd0841",
            ),
            FileSpec(
                "find/numeric/data.json",
                "src/find-dataset/numeric/data.json",
                "761543264b8cfe6e3ea0e22ed21f154a658d2008364ef87f9c2085bc10b91bf5",
            ),
            FileSpec(
                "find/numeric/func_name_dict.json",
                "src/find-dataset/numeric/func_name_dict.json",
                "4e022a24262a5cb46a55fc8bd5f412b731fd4694d81abc0c820071540c31d54b",
            ),
            FileSpec(
                "find/numeric/mlp/f00000.pt",
                "src/find-dataset/numeric/f00000/mlp_approx_model.pt",
                "8f95cebf014c692ac18826d50863a265ded2946175356a7a165285036080c804",
            ),
            FileSpec(
                "find/numeric/mlp/f00001.pt",
                "src/find-dataset/numeric/f00001/mlp_approx_model.pt",
                "43019fc287552eff045dda5e1923af86bbea7b9a41dc6e00c9c55dd7405e4eb1",
            ),
            FileSpec(
                "find/numeric/mlp/f00002.pt",
                "src/find-dataset/numeric/f00002/mlp_approx_model.pt",
                "97bd7c8a039678e295a3daf6d7cedd38a0e2b7ecff236ab32f3e2823515e5383",
            ),
            FileSpec(
                "find/numeric/mlp/f00003.pt",
                "src/find-dataset/numeric/f00003/mlp_approx_model.pt",
                "824878d2299ed29a4053054f0518f47bb2997106a5aff1ca4b9c2f557b00cea7",
            ),
            FileSpec(
                "find/numeric/mlp/f00004.pt",
                "src/find-dataset/numeric/f00004/mlp_approx_model.pt",
                "3c25d97e11406151c236f9b9c7432d1d64595b48ae2d06f1d2eacef198e2f6e3",
            ),
            FileSpec(
                "find/prompts/evaluator/entities.txt",
                "src/evaluate_interpretations/utils/prompt_eval_entities.txt",
                "b6ad6616141b36ac26ef8305577d2458d2bdca2ad79ca5a07d990343f1fc9ce0",
            ),
            FileSpec(
                "find/prompts/evaluator/relations.txt",
                "src/evaluate_interpretations/utils/prompt_eval_relations.txt",
                "bde94e0045cce7b742b96a3d7e5240ace9ff8b7fcb8e878f10ccdb5da0983eb6",
            ),
            FileSpec(
                "find/prompts/evaluator/strings.txt",
                "src/evaluate_interpretations/utils/prompt_eval_strings.txt",
                "bde94e0045cce7b742b96a3d7e5240ace9ff8b7fcb8e878f10ccdb5da0983eb6",
            ),
            FileSpec(
                "find/prompts/interpreter/neurons_entities.txt",
                "src/run_interpretations/prompts/neurons_entities.txt",
                "95778e91bebdb453484fb8c5ea7403e063eb8786dd7fdc348e18415f64faa03e",
            ),
            FileSpec(
                "find/prompts/interpreter/neurons_relations.txt",
                "src/run_interpretations/prompts/neurons_relations.txt",
                "32b97f6f851ca4dcba21e7e926d5661f4c43eea157bf531a400eeee99fd3f634",
            ),
            FileSpec(
                "find/prompts/interpreter/numeric.txt",
                "src/run_interpretations/prompts/numeric.txt",
                "df8c25d5c13ca836666669e53d7f961912836804393c8f4f986ce3d4f516dfe3",
            ),
            FileSpec(
                "find/prompts/interpreter/numeric_mlp.txt",
                "src/run_interpretations/prompts/numeric_mlp.txt",
                "a1d1968801b57721d713ad32ea860d02c46f11fe66873071b118aa4a60ca7bf0",
            ),
            FileSpec(
                "find/prompts/interpreter/system.txt",
                "src/run_interpretations/collect_interpretations.py",
                "a4beaaf1bf7985106cd8c16fa245d7604e7d600de7946e56940f5d6318aeb84e",
                extract="find-system-prompt",
            ),
            FileSpec(
                "find/prompts/interpreter/system_llama2.txt",
                "src/run_interpretations/collect_interpretations.py",
                "9a75c5f27a90386159e11d25f987c4b03a3aa9a0f2bdf88d8865d5d39a67ee86",
                extract="find-system-prompt-llama2",
            ),
            FileSpec(
                "find/prompts/interpreter/strings.txt",
                "src/run_interpretations/prompts/strings.txt",
                "29c897c2fd623a8ba284926c20dd3b890552149cac6f48296cf3f96435ed42e5",
            ),
            FileSpec(
                "find/strings/test_data.json",
                "src/find-dataset/strings/test_data.json",
                "594f271a4bb424f750b6d0219549d4a62d3b1fa19ffafbad4eecf859cf3b96a2",
            ),
            FileSpec(
                "find/strings/unit_test_data.json",
                "src/find-dataset/strings/unit_test_data.json",
                "c020dc001500d36a4e2eb8d7b82de14e8e0f1774323bc3cacb1af3b0e323bf34",
            ),
        ),
        notes=(
            "The other 145 MLP weights and the original function folders are in the FIND dataset zip "
            f"({FIND_ZENODO}); unzip it and set HARNESS_FIND_ROOT to the unzipped folder to use them."
        ),
    )
)
