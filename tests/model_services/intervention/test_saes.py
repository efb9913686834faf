"""SAELens SAEs served by name: `/v1/activations` with `sae` against sae-lens's own `encode` of
the service's raw activations, a planted latent that fires on exactly the tokens it was built
for, the errors a caller gets, `/v1/saes`, and the SAELens file round trip of `save_sae`.

One llama-tiny-random service for the module, started with `--sae NAME=PATH` and `--sae-dir`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import torch
from support.intervention_server import serve_intervention
from typer.testing import CliRunner

from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention import saelens
from interp_harness.model_services.intervention import schemas as S
from interp_harness.model_services.intervention.client import InterventionClient
from interp_harness.model_services.intervention.server import _merge

MODEL = "llama-tiny-random"  # hidden size 48, byte-level tokens
TEXTS = ["the cat sat on a mat", "Tokyo", "tattoo attempts at tea", "ab"]
D_IN, D_SAE = 48, 40
PLANTED = {0: ["t"], 1: ["a", "e"], 2: ["Q"]}  # latent -> the tokens it must fire on
TOL = 1e-4


def _random_weights(seed: int, d_in: int = D_IN, d_sae: int = D_SAE) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "W_enc": torch.randn(d_in, d_sae, generator=g) * 4,  # residual norms here are ~0.1
        "b_enc": torch.randn(d_sae, generator=g) * 0.1,
        "W_dec": torch.randn(d_sae, d_in, generator=g),
        "b_dec": torch.randn(d_in, generator=g) * 0.01,
    }


def _planted(m: model_mod.LoadedModel) -> dict[str, torch.Tensor]:
    """An SAE at blocks.0.hook_resid_pre (the token embedding) whose latent j fires on exactly
    the token ids of PLANTED[j]: its encoder column is the sum of their normalised embeddings and
    its bias sits halfway between the lowest of theirs and the highest of every other token."""
    emb = m.lm.get_input_embeddings().weight.detach().float()  # [vocab, d]
    ids = {j: [m.tokenizer.convert_tokens_to_ids(t) for t in toks] for j, toks in PLANTED.items()}
    W_enc = torch.zeros(D_IN, len(PLANTED))  # noqa: N806
    b_enc = torch.zeros(len(PLANTED))
    for j, chosen in ids.items():
        w = sum(emb[i] / emb[i].norm() for i in chosen)
        pre = emb @ w
        inside = torch.zeros(len(emb), dtype=torch.bool)
        inside[chosen] = True
        assert pre[inside].min() > pre[~inside].max(), "embeddings too close to plant latent"
        b_enc[j] = -(pre[inside].min() + pre[~inside].max()) / 2
        W_enc[:, j] = w
    return {
        "W_enc": W_enc,
        "b_enc": b_enc,
        "W_dec": torch.zeros(len(PLANTED), D_IN),
        "b_dec": torch.zeros(D_IN),
    }


def _save(path: Path, weights: dict[str, torch.Tensor], hook: str, **kw: object) -> Path:
    d_in, d_sae = weights["W_enc"].shape
    return saelens.save_sae(
        path, **weights, hook_name=hook, model_name=MODEL, d_in=d_in, d_sae=d_sae, **kw
    )


@pytest.fixture(scope="module")
def local() -> model_mod.LoadedModel:
    return model_mod.load(MODEL, device="cpu", dtype="float32")  # seeded: the service's weights


@pytest.fixture(scope="module")
def sae_files(tmp_path_factory: pytest.TempPathFactory, local: model_mod.LoadedModel) -> Path:
    root = tmp_path_factory.mktemp("saes")
    # written by sae-lens directly (not our helper): any SAELens folder is servable
    from sae_lens import StandardSAE, StandardSAEConfig
    from sae_lens.saes.sae import SAEMetadata

    cfg = StandardSAEConfig(
        d_in=D_IN, d_sae=D_SAE, metadata=SAEMetadata(hook_name="blocks.0.hook_resid_post")
    )
    std = StandardSAE(cfg)
    with torch.no_grad():
        for key, value in _random_weights(1).items():
            getattr(std, key).copy_(value)
    std.save_model(root / "explicit" / "std")
    folder = root / "dir"
    _save(folder / "topk", _random_weights(2), "blocks.1.hook_resid_post", architecture="topk", k=5)
    _save(folder / "planted", _planted(local), "blocks.0.hook_resid_pre", architecture="standard")
    _save(
        folder / "other-model",
        _random_weights(3, d_in=32),
        "blocks.0.hook_resid_post",
        architecture="standard",
    )
    bad = folder / "z-hook"  # a hook the service has no component for: not listed
    _save(bad, _random_weights(4), "blocks.0.hook_resid_post", architecture="standard")
    cfg_json = json.loads((bad / "cfg.json").read_text())
    cfg_json["metadata"]["hook_name"] = "blocks.0.attn.hook_z"
    (bad / "cfg.json").write_text(json.dumps(cfg_json))
    return root


@pytest.fixture(scope="module")
def client(
    sae_files: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InterventionClient]:
    # its own server: started with these SAE files (--sae, --sae-dir)
    extra = ["--sae", f"std={sae_files / 'explicit' / 'std'}", "--sae-dir", str(sae_files / "dir")]
    for url in serve_intervention(MODEL, tmp_path_factory, *extra):
        with InterventionClient(url) as c:
            yield c


def _values(resp: S.ActivationsResponse) -> list[torch.Tensor]:
    return [torch.tensor(r.layers[0].values) for r in resp.results]


def _raw(client: InterventionClient, component: str, layer: int) -> list[torch.Tensor]:
    body = {"texts": TEXTS, "component": component, "layers": [layer]}
    return _values(client.activations(body))


@pytest.mark.parametrize(
    ("name", "layer", "latents"),
    [("std", 0, [7, 0, 39, 12]), ("topk", 1, list(range(D_SAE)[::3]))],
)
@pytest.mark.slow
def test_latents_equal_sae_lens_encode_of_the_raw_activations(
    client, sae_files, name, layer, latents
):
    from sae_lens import SAE

    folder = sae_files / ("explicit" if name == "std" else "dir") / name
    ref = SAE.load_from_disk(folder)
    raw = _raw(client, "block_output", layer)
    body = {"texts": TEXTS, "component": "block_output", "layers": [layer], "neurons": latents}
    resp = client.activations({**body, "sae": name})
    assert resp.sae == name and resp.neurons == latents
    got = _values(resp)
    for g, x in zip(got, raw, strict=True):
        with torch.no_grad():
            want = ref.encode(x)[:, latents]
        assert g.shape == want.shape
        assert torch.allclose(g, want, atol=TOL), (g - want).abs().max()
    every = torch.cat(got)
    assert (every > 0).any() and (every == 0).any()  # latents fire on some tokens, not all
    if name == "topk":  # at most k of all latents per token; here a third of them
        assert ((every > 0).sum(-1) <= 5).all()
    # pooling applies to latent values
    pooled = client.activations({**body, "sae": name, "pooling": "max"})
    for p, g in zip(_values(pooled), got, strict=True):
        assert torch.allclose(p[0], g.max(0).values, atol=TOL)


def test_planted_latent_fires_on_exactly_its_tokens(client, local):
    latents = sorted(PLANTED)
    resp = client.activations(
        {
            "texts": TEXTS + ["Quiet QQ queue"],
            "component": "block_input",
            "layers": [0],
            "neurons": latents,
            "sae": "planted",
        }
    )
    for res, tok in zip(resp.results, client.tokenize(TEXTS + ["Quiet QQ queue"]), strict=True):
        assert res.tokens == tok.tokens
        acts = torch.tensor(res.layers[0].values)
        for j in latents:
            want = [t in PLANTED[j] for t in tok.tokens]
            assert (acts[:, j] > 0).tolist() == want, (j, tok.tokens, acts[:, j])
    fired = torch.cat([torch.tensor(r.layers[0].values) for r in resp.results]) > 0
    assert fired.any(0).all()  # every planted latent meets its tokens in these texts


def test_saes_are_listed_without_paths(client, sae_files):
    listed = {s.name: s for s in client.saes()}
    # z-hook: unservable; "late" is saved into the served folder by a test that may run first
    assert set(listed) - {"late"} == {"std", "topk", "planted", "other-model"}
    assert listed["std"].model_dump() == {
        "name": "std",
        "d_in": D_IN,
        "d_sae": D_SAE,
        "layer": 0,
        "component": "block_output",
        "hook_name": "blocks.0.hook_resid_post",
        "architecture": "standard",
        "k": None,
    }
    assert (listed["topk"].layer, listed["topk"].architecture, listed["topk"].k) == (1, "topk", 5)
    assert (listed["planted"].component, listed["planted"].layer) == ("block_input", 0)
    text = httpx.get(client.settings.api_base + "/saes").text
    assert str(sae_files) not in text and "/tmp" not in text


def test_an_sae_saved_while_serving_is_served(client, sae_files):
    folder = sae_files / "dir" / "late"
    _save(folder, _random_weights(5), "blocks.2.hook_mlp_out", architecture="topk", k=3)
    assert "late" in {s.name for s in client.saes()}
    body = {"texts": ["ab"], "component": "mlp_output", "layers": [2], "neurons": [0, 1]}
    assert client.activations({**body, "sae": "late"}).results[0].layers[0].values


def _refused(client: InterventionClient, body: dict) -> str:
    r = httpx.post(client.settings.api_base + "/activations", json=body, timeout=60)
    assert r.status_code == 400, r.text
    return r.json()["error"]["message"]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"sae": "nope"}, "unknown SAE 'nope'; served: "),
        ({"sae": "../dir/std"}, "is not an SAE name"),
        ({"sae": ".."}, "is not an SAE name"),
        ({"sae": "/etc"}, "is not an SAE name"),
        ({"layers": [1]}, "send layers [0] and component 'block_output'"),
        ({"component": "block_input"}, "send layers [0] and component 'block_output'"),
        ({"layers": [0, 1]}, "send layers [0]"),
        ({"neurons": None}, "name the latents to read"),
        ({"neurons": list(range(65))}, "name the latents to read"),
        ({"neurons": [D_SAE]}, f"latents [{D_SAE}] outside 0..{D_SAE - 1}"),
        ({"neurons": [1, 1]}, "latent ids repeat"),
        ({"sae": "other-model"}, "encodes 32-dim vectors but llama-tiny-random's block_output"),
    ],
)
def test_bad_sae_requests_are_refused(client, change, says):
    body = {"texts": ["ab"], "component": "block_output", "layers": [0], "neurons": [0]}
    body = {k: v for k, v in {**body, "sae": "std", **change}.items() if v is not None}
    message = _refused(client, body)
    assert says in message
    if change.get("sae") == "nope":  # the servable names ("late" may be there too), no paths
        served = set(message.split("served: ")[1].split(", "))
        assert served - {"late"} == {"other-model", "planted", "std", "topk"}
        assert "z-hook" not in served


def test_requests_for_different_saes_are_never_merged():
    base = {"texts": ["a"], "component": "block_output", "layers": [0], "neurons": [1]}
    a = S.ActivationsRequest(**base, sae="std")
    assert _merge("activations", [a, S.ActivationsRequest(**base, sae="topk")]) is None
    assert _merge("activations", [a, S.ActivationsRequest(**base)]) is None
    merged, sizes = _merge("activations", [a, a.model_copy(update={"texts": ["b", "c"]})])
    assert (merged.texts, merged.sae, sizes) == (["a", "b", "c"], "std", [1, 2])


def test_site_and_hook_names_map_both_ways():
    table = {
        "blocks.0.hook_resid_pre": ("block_input", 0),
        "blocks.12.hook_resid_post": ("block_output", 12),
        "blocks.3.hook_mlp_out": ("mlp_output", 3),
        "blocks.5.hook_attn_out": ("attention_output", 5),
    }
    for hook, site in table.items():
        assert saelens.site_of(hook) == site
        assert saelens.hook_name_of(*site) == hook
    for hook in ("blocks.0.attn.hook_z", "blocks.x.hook_resid_pre", "hook_resid_pre", ""):
        with pytest.raises(saelens.SAEConfigError, match="is not served"):
            saelens.site_of(hook)
    with pytest.raises(saelens.SAEConfigError, match="no SAELens hook"):
        saelens.hook_name_of("mlp_activation", 0)


@pytest.mark.parametrize("architecture", ["standard", "topk"])
def test_save_sae_round_trips(tmp_path, architecture):
    w = _random_weights(6)
    folder = _save(tmp_path / "sae", w, "blocks.2.hook_resid_post", architecture=architecture, k=4)
    cfg = json.loads((folder / "cfg.json").read_text())
    assert (cfg["architecture"], cfg["metadata"]["hook_name"], cfg["d_sae"]) == (
        architecture,
        "blocks.2.hook_resid_post",
        D_SAE,
    )
    sae = saelens.load_sae(folder)
    for key, value in w.items():
        assert torch.equal(getattr(sae, key).detach(), value), key
    x = torch.randn(30, D_IN) * 0.1
    pre = (x - w["b_dec"]) @ w["W_enc"] + w["b_enc"]  # SAELens's encoder, by hand
    if architecture == "topk":
        top = pre.topk(4, dim=-1)
        want = torch.zeros_like(pre).scatter(-1, top.indices, top.values.relu())
    else:
        want = pre.relu()
    assert torch.allclose(saelens.encode(sae, x), want, atol=1e-5)
    assert torch.allclose(saelens.encode(sae, x, [5, 2]), want[:, [5, 2]], atol=1e-5)


def test_default_sae_dir_is_the_build_cache(monkeypatch, tmp_path):
    from interp_harness.function_store.datasets import cache_dir

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    assert saelens.default_sae_dir() == cache_dir() / "sae"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--sae", "no-equals-sign"], "expected NAME=PATH"),
        (["--sae", "../x=/tmp"], "the name must match"),
        (["--sae", "x=/nonexistent/sae"], "not an SAELens folder"),
        (["--sae-dir", "/nonexistent/saes"], "not a directory"),
    ],
)
def test_serve_refuses_bad_sae_options(options, says):
    from support import free_port

    from interp_harness.harness.cli import app

    args = ["intervention", "serve", "--model", MODEL, "--port", str(free_port()), *options]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert says in " ".join(result.output.split()), result.output


def test_without_sae_lens_a_request_says_how_to_install_it(sae_files, monkeypatch):
    """An install without the `sae` extra (the compose images): a 400 naming the extra, never a
    500, and the start-up warm-up only logs it."""
    import sys

    from interp_harness.model_services.backbone.engine import BadRequest

    registry = saelens.SAERegistry({"std": sae_files / "explicit" / "std"})
    monkeypatch.setitem(sys.modules, "sae_lens", None)  # `import sae_lens` raises ImportError
    registry.warm()
    with pytest.raises(
        BadRequest, match=r"sae-lens is not installed \(pip install 'interp-harness\[sae\]'\)"
    ):
        registry.get("std")


def test_pyvene_loads_without_its_nnsight_line_on_stdout() -> None:
    """pyvene prints "nnsight is not detected ..." on stdout when imported; the engine and the
    featurizers import it without that line (it was a stray line of `harness sae build`)."""
    import subprocess
    import sys

    code = (
        "from interp_harness.model_services.intervention import engine, featurizers\n"
        "engine._pv(); featurizers._pv()\n"
        "import pyvene; print(pyvene.__name__)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "pyvene\n"
