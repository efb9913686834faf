"""The compiled model's sites in pyvene: after `register_pyvene()`, pyvene's own interventions at
a head (`head_attention_value_output`, split with `n_head` as for GPT-2) and at an MLP
(`mlp_output`) give exactly what `CircuitModel`'s zero ablation gives at those components."""

from __future__ import annotations

import numpy as np
import pyvene as pv

from interp_harness.function_store.circuits import build as cb
from interp_harness.model_services.intervention.circuit_model import CircuitModel
from interp_harness.model_services.intervention.compiled import register_pyvene


def test_pyvene_interventions_at_the_registered_sites_match_our_ablations() -> None:
    b = cb.build_target("circuits-lib/sort/0", cb.BuildOptions())
    m = CircuitModel(b.merged.arrays, b.merged.meta)
    register_pyvene()
    xs = m.random_inputs(6, m.max_len, seed=3)
    tokens, mask = m.encode(xs)
    positions = [list(range(tokens.shape[1]))] * len(xs)
    head = next(c for c in b.truth.circuit if "H" in c)
    mlp = next(c for c in b.truth.circuit if c.endswith("MLP"))
    for name, component in ((head, "head_attention_value_output"), (mlp, "mlp_output")):
        layer, h = m.parse_component(name)
        cfg = pv.IntervenableConfig(
            [
                {
                    "layer": layer,
                    "component": component,
                    "unit": "h.pos" if h is not None else "pos",
                    "intervention_type": pv.ZeroIntervention,
                }
            ]
        )
        iv = pv.IntervenableModel(cfg, m.net)
        where = [[[h]] * len(xs), positions] if h is not None else positions
        _, out = iv({"tokens": tokens, "mask": mask}, unit_locations={"base": [where]})
        ours = m.output_scores(xs, ablate=[name], kind="zero")
        full = m.output_scores(xs)
        for i, row in enumerate(ours):
            assert np.abs(out[i, 1 : len(xs[i]) + 1].numpy() - row).max() < 1e-9, name
        # and the intervention did something (the component is in the asked circuit)
        assert max(np.abs(a - f).max() for a, f in zip(ours, full, strict=True)) > 0.1, name
