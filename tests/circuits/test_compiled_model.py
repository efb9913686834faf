"""The torch model against tracr, and what merging and rotating keep: tracr's own compiler
(`compile_rasp_to_model`, its haiku forward pass) is the reference for our weights and forward
pass; RASP's evaluation is the reference for the function."""

from __future__ import annotations

import numpy as np
import pytest

from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.circuits.compile import BOS, compile_program
from interp_harness.function_store.circuits.programs import LIBRARY, evaluate
from interp_harness.model_services.intervention.circuit_model import CircuitModel


def _inputs(vocab: list, max_len: int, n: int, seed: int, length: int | None = None) -> list:
    rng = np.random.default_rng(seed)
    return [
        [
            vocab[int(i)]
            for i in rng.integers(len(vocab), size=length or rng.integers(1, max_len + 1))
        ]
        for _ in range(n)
    ]


@pytest.mark.slow
def test_torch_model_matches_tracr_apply_on_every_library_program() -> None:
    import jax
    import jax.numpy as jnp
    from tracr.compiler import compiling

    for name, lp in LIBRARY.items():
        sop = lp.make()  # one program for both compilers: its variables' labels are its own
        ref = compiling.compile_rasp_to_model(sop, set(lp.vocab), lp.max_len, compiler_bos=BOS)
        ours = compile_program(sop, lp.vocab, lp.max_len)
        model = CircuitModel(ours.arrays, ours.meta)
        assert ours.residual_labels == ref.residual_labels, name
        # one jitted forward per input length: tracr's `apply` compiles every op anew per length
        forward = jax.jit(ref.forward)
        for length in sorted({1, lp.max_len // 2 + 1, lp.max_len}):
            xs = _inputs(lp.vocab, lp.max_len, 12, seed=length, length=length)
            enc = jnp.array([ref.input_encoder.encode([BOS, *x]) for x in xs])
            out = forward(ref.params, enc)
            tokens, mask = model.encode(xs)
            resid = model.net.residual(tokens, mask).numpy()
            want_resid = np.asarray(out.transformer_output.output)
            assert np.abs(resid - want_resid).max() < 1e-3, name
            got = model.run(xs)
            raw = np.asarray(out.unembedded_output)
            for i, x in enumerate(xs):
                # tracr's decoding of the same forward pass, as `apply` decodes it
                want = (
                    ref.output_encoder.decode(raw[i].tolist())
                    if ref.output_encoder
                    else raw[i].tolist()
                )
                want = list(want)[1:]
                rasp = evaluate(sop, x)
                for p, (g, w, r) in enumerate(zip(got[i], want, rasp, strict=True)):
                    if r is None:  # undefined here: tracr's argmax reads rounding noise
                        assert g is None or ours.meta.output_kind == "numerical", (name, x, p)
                    elif ours.meta.output_kind == "numerical":
                        assert abs(g - w) < 1e-3 and abs(g - r) < 1e-3, (name, x, p, g, w)
                    else:
                        assert g == w == r, (name, x, p, g, w, r)


@pytest.mark.parametrize(
    "target_id", ["circuits-lib/sort/0", "circuits-lib/frac_prevs/0", "circuits-gen/0/1"]
)
def test_rotation_and_distractors_change_no_output_of_the_asked_program(target_id: str) -> None:
    b = cb.build_target(target_id, cb.BuildOptions())
    merged = CircuitModel(b.merged.arrays, b.merged.meta)
    alone = CircuitModel(b.asked.arrays, b.asked.meta)
    assert len(b.merged.blocks) >= 2  # at least one distractor
    xs = _inputs(alone.vocab, alone.max_len, 60, seed=1)
    got, want = merged.output_scores(xs), alone.output_scores(xs)
    for g, w in zip(got, want, strict=True):
        assert np.abs(g - w).max() < 1e-6
    if merged.output_kind == "categorical":
        assert merged.run(xs) == alone.run(xs)
    for x, out in zip(xs, merged.run(xs), strict=True):
        for o, r in zip(out, evaluate(b.sop, x), strict=True):
            if r is not None:
                assert o == r if isinstance(r, str) else abs(o - r) < 1e-3
    # the residual: back through the rotation, the asked program's block is its residual alone
    tokens, mask = merged.encode(xs[:8])
    r = merged.net.residual(tokens, mask).numpy() @ b.merged.rotation.T
    tokens, mask = alone.encode(xs[:8])
    r0 = alone.net.residual(tokens, mask).numpy()
    m = mask.numpy()
    assert np.abs((r[..., b.merged.blocks[0]] - r0)[m]).max() < 1e-3
    # the rotation left no residual direction one-hot: every embedding row is dense
    assert (np.abs(b.merged.arrays["token_embed"]) > 1e-9).mean() > 0.9
    # the distractors' components ablated in every way: the asked outputs do not move
    others = [c for c, p in b.truth.owner.items() if p != 0]
    assert others
    for kind in ("zero", "mean", "resample"):
        ablated = merged.output_scores(xs, ablate=others, kind=kind)
        assert max(np.abs(a - g).max() for a, g in zip(ablated, got, strict=True)) < 1e-6, kind
    # the truth ablated: some output moves (the truth is the mechanism)
    ablated = merged.output_scores(xs, ablate=b.truth.circuit, kind="zero")
    assert max(np.abs(a - g).max() for a, g in zip(ablated, got, strict=True)) > 0.1


def test_truth_is_the_asked_programs_components_and_disjoint_from_the_distractors(
    circuits_built: dict,
) -> None:
    truths = [t for ts in circuits_built.values() for t in ts]
    assert {t.dataset for t in truths} == {cb.LIB, cb.GEN}
    for t in truths:
        b = cb.build_target(t.id, cb.BuildOptions())
        assert b.truth.circuit == t.circuit  # the build is reproducible from the id
        merged = CircuitModel(b.merged.arrays, b.merged.meta)
        alone = CircuitModel(b.asked.arrays, b.asked.meta)
        distractor = {c for c, p in t.owner.items() if p != 0}
        assert t.circuit and distractor
        assert not set(t.circuit) & distractor
        assert set(t.circuit) | distractor == set(t.components) == set(merged.components())
        # as many truth components as the asked program has non-empty components alone
        assert len(t.circuit) == len(alone.components())
        padding = set(merged.all_components()) - set(merged.components())
        assert not padding & set(t.circuit)
        # heads of the truth read as heads, MLPs as MLPs, with the asked program's own counts
        assert sum(c.endswith("MLP") for c in t.circuit) == sum(
            c.endswith("MLP") for c in alone.components()
        )
