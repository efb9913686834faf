"""Registry of reference datasets: official sources, checksums, and where a local copy lives.

Resolution order for the data directory: `HARNESS_DATA_DIR` (a local copy, e.g. `../shared/data` in
tests and CI), else the cache (`HARNESS_CACHE_DIR`, default `~/.cache/interp-harness/data`), which
`harness data fetch NAME` fills from the official sources. Nothing fetched is shipped with the project.
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

FIND_COMMIT = "670d837"
FIND_RAW = f"https://raw.githubusercontent.com/multimodal-interpretability/FIND/{FIND_COMMIT}/"
RAVEL_ARCHIVE = "https://github.com/explanare/ravel/raw/e421fc9/data.tgz"
NEURON_ARCHIVE = "https://github.com/explanare/eval-neuron-explanation/raw/300eea4/eval_data.tar.gz"
FIND_ZENODO = "https://zenodo.org/record/8039658/files/FIND-dataset.zip"


class DataUnavailable(RuntimeError):
    """A reference file is neither in HARNESS_DATA_DIR nor in the cache."""


@dataclass(frozen=True)
class FileSpec:
    path: str  # relative to the data directory
    source: str  # path in the official repository, or member name inside the archive
    sha256: str  # of the file as stored (after `extract`, when there is one)
    extract: str | None = None  # name in EXTRACTORS: the file is derived from the source's text


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


EXTRACTORS: dict[str, Callable[[bytes], bytes]] = {
    "find-system-prompt": lambda b: _find_system_prompts(b)["system"].encode("utf-8"),
    "find-system-prompt-llama2": lambda b: _find_system_prompts(b)["system_llama2"].encode("utf-8"),
}


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    files: tuple[FileSpec, ...]
    base_url: str | None = None  # files are fetched one by one from base_url + source
    archive_url: str | None = None  # or all from one tar archive (members matched by file name)
    notes: str = ""


DATASETS: dict[str, Dataset] = {}
# Other names a dataset answers to (the neuron issue calls the neuron data `neuron-expl`).
ALIASES = {"neuron-expl": "neuron-explanations"}


def _canonical(name: str) -> str:
    return ALIASES.get(name, name)


def register(ds: Dataset) -> Dataset:
    DATASETS[ds.name] = ds
    return ds


register(
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

register(
    Dataset(
        name="ravel",
        description="RAVEL entities, attributes, prompt templates, Wikipedia prompts and splits (5 entity types)",
        archive_url=RAVEL_ARCHIVE,
        files=(
            FileSpec(
                "ravel/ravel_city_attribute_to_prompts.json",
                "ravel_city_attribute_to_prompts.json",
                "4e40cb291cf532c6c8d3c764a3e9b46c2678120feb513055fab39ec51b66398a",
            ),
            FileSpec(
                "ravel/ravel_city_entity_attributes.json",
                "ravel_city_entity_attributes.json",
                "c3568f424f4c4349b85404be17f7671c36fd54945f4759ae533079cba9cd54fd",
            ),
            FileSpec(
                "ravel/ravel_city_entity_to_split.json",
                "ravel_city_entity_to_split.json",
                "9a1e0886b59d4313c153637ffdbeee9e403bce2dbdba8b59ff2a58b9049b842f",
            ),
            FileSpec(
                "ravel/ravel_city_prompt_to_split.json",
                "ravel_city_prompt_to_split.json",
                "f805ec435d64673f0d4eff77b2c4a107abbd2a55df19543876a7e2b0feba352c",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_attribute_to_prompts.json",
                "ravel_nobel_prize_winner_attribute_to_prompts.json",
                "fad17ac4c798e4d5412591afd4c06a20f1cde930b53ded199f5e27ab21656f2d",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_entity_attributes.json",
                "ravel_nobel_prize_winner_entity_attributes.json",
                "2a4d66328011bb2c63abc6434446236ccb0da73c727c2f68ea12447277f81c6f",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_entity_to_split.json",
                "ravel_nobel_prize_winner_entity_to_split.json",
                "066e470ee344a4836f87d2f680ab13850ed1bcba86a788d6e20fa6d4abd80f45",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_prompt_to_split.json",
                "ravel_nobel_prize_winner_prompt_to_split.json",
                "ac070b66540acc9fbca5fc13e8fe612d7c32a9d99940c1e6e93bf4de0ed60982",
            ),
            FileSpec(
                "ravel/ravel_occupation_attribute_to_prompts.json",
                "ravel_occupation_attribute_to_prompts.json",
                "59bd9bd6613512c9172c7b1871c85a10e4eeea1dc77f97510b241c9545ac45e8",
            ),
            FileSpec(
                "ravel/ravel_occupation_entity_attributes.json",
                "ravel_occupation_entity_attributes.json",
                "b670c6f2f521b19ef5d62e55a1380ec5ff046c14cfa72fdd440c07dde7d01066",
            ),
            FileSpec(
                "ravel/ravel_occupation_entity_to_split.json",
                "ravel_occupation_entity_to_split.json",
                "fe137fa81baa27b91855abc8730855b070ee880c3be6659fd3c1c11df2165b86",
            ),
            FileSpec(
                "ravel/ravel_occupation_prompt_to_split.json",
                "ravel_occupation_prompt_to_split.json",
                "78b336530d354cc25ce29caaae1e4534765de2c15918a0db9d532174e3739296",
            ),
            FileSpec(
                "ravel/ravel_physical_object_attribute_to_prompts.json",
                "ravel_physical_object_attribute_to_prompts.json",
                "f84547c0c3478fe5f966aaafdf3601b1eef6e6326070fa735083f151800d8de9",
            ),
            FileSpec(
                "ravel/ravel_physical_object_entity_attributes.json",
                "ravel_physical_object_entity_attributes.json",
                "672584e27d5027e9ff3391d33a72e69ccdde1cadbf15260a277e1084dd5d1b7a",
            ),
            FileSpec(
                "ravel/ravel_physical_object_entity_to_split.json",
                "ravel_physical_object_entity_to_split.json",
                "d085553d2dd8377e7ef502c7cf7033fe6c9ff614933bb85ca6bd6147c3c128b6",
            ),
            FileSpec(
                "ravel/ravel_physical_object_prompt_to_split.json",
                "ravel_physical_object_prompt_to_split.json",
                "9f87c9e2079636d990b64ab08e294d16bbc37d87c1290be4b2217357db1062f0",
            ),
            FileSpec(
                "ravel/ravel_verb_attribute_to_prompts.json",
                "ravel_verb_attribute_to_prompts.json",
                "e7fa54f8d3e2bd865b8821bff33976d69ac12cebb661f7a13314221636b719ee",
            ),
            FileSpec(
                "ravel/ravel_verb_entity_attributes.json",
                "ravel_verb_entity_attributes.json",
                "309c015a1e14fc32090d16b48ff3634d7e627cd7a2a055ea879070db97d10347",
            ),
            FileSpec(
                "ravel/ravel_verb_entity_to_split.json",
                "ravel_verb_entity_to_split.json",
                "4ebfadc203a3e3098d9a8ce680d7185acc78fc0e66124a0391424c22805b565d",
            ),
            FileSpec(
                "ravel/ravel_verb_prompt_to_split.json",
                "ravel_verb_prompt_to_split.json",
                "dac8e8d38bd1fb6c1d8a5a4efeb1ad011b17589a9b4d1686b6be6ba6bcac4d6f",
            ),
            FileSpec(
                "ravel/wikipedia_city_entity_prompts.json",
                "wikipedia_city_entity_prompts.json",
                "0b27cc890efbaf62ef5292fcb9f157c170685a0d8930327dc4e8f8b5a4f8722f",
            ),
            FileSpec(
                "ravel/wikipedia_nobel_prize_winner_entity_prompts.json",
                "wikipedia_nobel_prize_winner_entity_prompts.json",
                "0b98d65358cc779bcf67c3a5dc065795521a9e8ed303f72159d33af18d05d4a2",
            ),
            FileSpec(
                "ravel/wikipedia_occupation_entity_prompts.json",
                "wikipedia_occupation_entity_prompts.json",
                "9232b746f18d8cf7ad1da1d0662e5f3ce7e8dfb3509f2e5af32043f00710a612",
            ),
            FileSpec(
                "ravel/wikipedia_physical_object_entity_prompts.json",
                "wikipedia_physical_object_entity_prompts.json",
                "821e4c4aeadf1faa0a1df1708c50df7b87e4cf44684793fc0b4d691c6225dcbf",
            ),
            FileSpec(
                "ravel/wikipedia_verb_entity_prompts.json",
                "wikipedia_verb_entity_prompts.json",
                "f599f546ff76f4ec59e831042d4026747aa7ebfaeb7e747c94a0f5bf6e9ba462",
            ),
        ),
    )
)

register(
    Dataset(
        name="neuron-explanations",
        description="GPT-2 XL neuron explanations with labelled test sentences (observational evaluation)",
        archive_url=NEURON_ARCHIVE,
        files=(
            FileSpec(
                "neuron_explanations/observational_eval_data.json",
                "observational_eval_data.json",
                "9a7826c46d5c62d8ddf175ab23bccffa6071fc060f975ab9d202cb8faa9da808",
            ),
        ),
    )
)


def cache_dir() -> Path:
    return (
        Path(os.environ.get("HARNESS_CACHE_DIR", Path.home() / ".cache" / "interp-harness"))
        / "data"
    )


def data_dir() -> Path:
    """The directory reference files are read from."""
    env = os.environ.get("HARNESS_DATA_DIR")
    return Path(env).expanduser().resolve() if env else cache_dir()


def data_path(rel: str) -> Path:
    """Path of one reference file; raises DataUnavailable with what to do when it is missing."""
    p = data_dir() / rel
    if p.exists():
        return p
    owner = next((d.name for d in DATASETS.values() if any(f.path == rel for f in d.files)), None)
    hint = f"run `harness data fetch {owner}`" if owner else "check the path"
    raise DataUnavailable(
        f"reference file {rel!r} not found in {data_dir()}: {hint}, or set HARNESS_DATA_DIR "
        "to a directory that holds a copy (e.g. ../shared/data)"
    )


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(name: str, root: Path | None = None) -> dict[str, str]:
    """Check every file of a dataset: returns {path: "ok" | "missing" | "checksum mismatch"}."""
    root = root or data_dir()
    out = {}
    for f in DATASETS[_canonical(name)].files:
        p = root / f.path
        if not p.exists():
            out[f.path] = "missing"
        else:
            out[f.path] = "ok" if sha256_of(p.read_bytes()) == f.sha256 else "checksum mismatch"
    return out


def fetch(
    name: str,
    *,
    dest: Path | None = None,
    client: httpx.Client | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Download a dataset into the cache (or `dest`), verifying checksums. Returns the directory."""
    name = _canonical(name)
    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}")
    ds = DATASETS[name]
    dest = dest or cache_dir()
    own = client is None
    client = client or httpx.Client(follow_redirects=True, timeout=60)
    try:
        if ds.archive_url:
            blobs = _archive_members(client, ds.archive_url)
            todo = [(f, blobs.get(Path(f.source).name)) for f in ds.files]
        else:
            fetched: dict[str, bytes] = {}  # a source several files derive from is fetched once
            for f in ds.files:
                if f.source not in fetched:
                    fetched[f.source] = _get(client, ds.base_url + f.source)
            todo = [(f, fetched[f.source]) for f in ds.files]
        for f, data in todo:
            if data is None:
                raise DataUnavailable(f"{f.source} not found in {ds.archive_url}")
            if f.extract:
                try:
                    data = EXTRACTORS[f.extract](data)
                except (SyntaxError, ValueError, StopIteration, KeyError, IndexError) as e:
                    raise DataUnavailable(
                        f"could not derive {f.path} from {f.source}: {type(e).__name__}: {e}"
                    ) from e
            if sha256_of(data) != f.sha256:
                raise DataUnavailable(f"checksum mismatch for {f.path} from the official source")
            target = dest / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if progress:
                progress(f.path)
    finally:
        if own:
            client.close()
    return dest


def _get(client: httpx.Client, url: str) -> bytes:
    try:
        r = client.get(url)
        r.raise_for_status()
    except httpx.HTTPError as e:
        raise DataUnavailable(
            f"could not download {url} ({e.__class__.__name__}: {e}). Offline? Set HARNESS_DATA_DIR "
            "to a directory holding a copy of the reference data (e.g. ../shared/data)."
        ) from e
    return r.content


def _archive_members(client: httpx.Client, url: str) -> dict[str, bytes]:
    raw = _get(client, url)
    out = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[Path(m.name).name] = tar.extractfile(m).read()
    return out
