"""Compiling one RASP program with tracr (build time only: tracr, jax and haiku are imported
here and nowhere the targets are served), into our weight layout with a record of what each
component computes.

The steps are tracr's own public compiler passes, called one by one so that the craft model
(which block lands in which layer) stays in hand: a head's role is the program variable its
output space writes, an MLP layer's the variables of the MLPs tracr merged into it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from interp_harness.model_services.intervention.compiled import CompiledMeta

BOS = "compiler_bos"
PAD = "compiler_pad"


@dataclass
class Compiled:
    """One program compiled alone: weights in the file's layout (unrotated), its residual labels
    (kept for tests and `--reveal`, never written to a served file), and the role of each
    non-empty component, keyed by our component names (`L{layer}H{head}`, `L{layer}MLP`)."""

    arrays: dict[str, np.ndarray]
    meta: CompiledMeta
    residual_labels: list[str]
    roles: dict[str, str]
    seconds: float = 0.0


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def mlp_name(layer: int) -> str:
    return f"L{layer}MLP"


def _expr_kind(graph: Any, label: str) -> str:
    from tracr.compiler import nodes

    label = label.removesuffix("_selector_width_attn_output")  # the head half of a width
    node = graph.nodes.get(label)
    expr = node.get(nodes.EXPR) if node else None
    return type(expr).__name__ if expr is not None else "?"


def _slots(blocks: list[Any]) -> list[tuple[int, str]]:
    """(layer, "attn" | "mlp") of each craft block: blocks fill the sequence attn, mlp, attn,
    ... in order, skipping a slot whose kind differs (as tracr lays them out)."""
    from tracr.craft import transformers

    out = []
    slot = 0  # even: attention of layer slot // 2, odd: its MLP
    for block in blocks:
        kind = "mlp" if isinstance(block, transformers.MLP) else "attn"
        while ("mlp" if slot % 2 else "attn") != kind:
            slot += 1
        out.append((slot // 2, kind))
        slot += 1
    return out


class Uncompilable(ValueError):
    """A RASP program tracr cannot compile: the generator draws another one."""


def compile_program(program: Any, vocab: list[Any], max_len: int) -> Compiled:
    """Compile `program` (a tracr RASP SOp) for inputs over `vocab` up to `max_len` tokens.
    Raises what tracr raises for a program it cannot compile.

    tracr's passes build the craft model (every block's matrices in named bases); the weights are
    then laid out here with numpy in tracr's assembled layout. tracr's own assembly initialises
    a haiku model, which costs seconds of XLA compiling per program and gives the same numbers
    (the tests compare the two)."""
    import time

    from tracr.compiler import (
        basis_inference,
        craft_graph_to_model,
        expr_to_craft_graph,
        nodes,
        rasp_to_graph,
        validating,
    )
    from tracr.craft import bases
    from tracr.rasp import rasp

    t0 = time.perf_counter()
    bad = validating.static_validate(program)
    if bad:
        raise Uncompilable("; ".join(f"{u.expr.label}: {u.reason}" for u in bad))
    extracted = rasp_to_graph.extract_rasp_graph(program)
    graph, sources, sink = extracted.graph, extracted.sources, extracted.sink
    if rasp.tokens.label not in graph.nodes:
        raise Uncompilable("the program does not read the tokens")
    basis_inference.infer_bases(graph, sink, set(vocab), max_len)
    expr_to_craft_graph.add_craft_components_to_rasp_graph(
        graph, bos_dir=bases.BasisDirection(rasp.tokens.label, BOS), mlp_exactness=100
    )
    craft = craft_graph_to_model.craft_graph_to_model(graph, sources)
    token_values = graph.nodes[rasp.tokens.label][nodes.VALUE_SET] | {BOS, PAD}
    tokens_space = bases.VectorSpaceWithBasis.from_values(rasp.tokens.label, token_values)
    indices_space = bases.VectorSpaceWithBasis.from_values(rasp.indices.label, range(max_len))
    output_space = bases.VectorSpaceWithBasis(sink[nodes.OUTPUT_BASIS])
    categorical = rasp.is_categorical(sink[nodes.EXPR])
    arrays, shape, labels = _assemble(craft, tokens_space, indices_space, output_space)
    meta = CompiledMeta(
        tokens=[_plain(b.value) for b in tokens_space.basis],
        bos=BOS,
        pad=PAD,
        vocab=sorted((_plain(v) for v in vocab), key=_order),
        max_len=max_len,
        n_layers=shape["n_layers"],
        n_heads=shape["n_heads"],
        key_size=shape["key_size"],
        mlp_hidden=shape["mlp_hidden"],
        output_kind="categorical" if categorical else "numerical",
        output_values=[_plain(b.value) for b in output_space.basis] if categorical else [],
    )
    roles: dict[str, str] = {}
    for block, (layer, kind) in zip(craft.blocks, _slots(list(craft.blocks)), strict=True):
        if kind == "attn":
            for h, head in enumerate(block.as_multi().heads()):
                names = sorted({b.name for b in head.w_ov.output_space.basis})
                roles[head_name(layer, h)] = ", ".join(f"{_expr_kind(graph, n)} {n}" for n in names)
        else:
            names = sorted({b.name for b in block.snd.output_space.basis})
            roles[mlp_name(layer)] = ", ".join(f"{_expr_kind(graph, n)} {n}" for n in names)
    return Compiled(
        arrays=arrays,
        meta=meta,
        residual_labels=labels,
        roles=roles,
        seconds=time.perf_counter() - t0,
    )


def _assemble(
    craft: Any, tokens_space: Any, indices_space: Any, output_space: Any
) -> tuple[dict[str, np.ndarray], dict[str, int], list[str]]:
    """The craft model's blocks as weight matrices over the whole residual space: each block's
    matrix composed with the projections between the residual space and the block's own bases;
    heads padded to the widest key size and the most heads of a layer, MLPs to the widest hidden
    layer (the layout tracr's assembly produces)."""
    from tracr.craft import bases, transformers, vectorspace_fns

    residual = bases.join_vector_spaces(
        craft.residual_space, tokens_space, indices_space, output_space
    )
    d = residual.num_dims

    def proj(space: Any) -> np.ndarray:  # residual -> space, [d, dims of space]
        return np.asarray(vectorspace_fns.project(residual, space).matrix, dtype=np.float64)

    def from_space(space: Any) -> np.ndarray:  # space -> residual
        return np.asarray(vectorspace_fns.project(space, residual).matrix, dtype=np.float64)

    blocks = list(craft.blocks)
    slots = _slots(blocks)
    heads_of = [list(b.as_multi().heads()) for b in blocks if not isinstance(b, transformers.MLP)]
    mlps = [b for b in blocks if isinstance(b, transformers.MLP)]
    all_heads = [h for hs in heads_of for h in hs]
    n_heads = max((len(hs) for hs in heads_of), default=1)
    key_size = max((max(h.w_qk.matrix.shape) for h in all_heads), default=1)
    hidden = max((m.fst.output_space.num_dims for m in mlps), default=1)
    n_layers = slots[-1][0] + 1 if slots else 1

    tok = from_space(tokens_space)
    one = bases.BasisDirection("one")
    if one in residual:  # every token also writes the constant direction
        tok = tok + residual.vector_from_basis_direction(one).magnitudes[None, :]
    arrays: dict[str, np.ndarray] = {
        "token_embed": tok,
        "pos_embed": np.concatenate([np.zeros((1, d)), from_space(indices_space)], axis=0),
        "unembed": proj(output_space),
    }
    for layer in range(n_layers):
        for name in ("q", "k", "v"):
            arrays[f"l{layer}.{name}"] = np.zeros((d, n_heads * key_size))
        arrays[f"l{layer}.o"] = np.zeros((n_heads * key_size, d))
        arrays[f"l{layer}.mlp1"] = np.zeros((d, hidden))
        arrays[f"l{layer}.mlp1_b"] = np.zeros(hidden)
        arrays[f"l{layer}.mlp2"] = np.zeros((hidden, d))
        arrays[f"l{layer}.mlp2_b"] = np.zeros(d)
    for block, (layer, kind) in zip(blocks, slots, strict=True):
        if kind == "mlp":
            n = block.fst.output_space.num_dims
            arrays[f"l{layer}.mlp1"][:, :n] = proj(block.fst.input_space) @ block.fst.matrix
            arrays[f"l{layer}.mlp2"][:n, :] = block.snd.matrix @ proj(block.snd.output_space).T
            continue
        for h, head in enumerate(block.as_multi().heads()):
            c = h * key_size
            qk, ov = head.w_qk, head.w_ov
            kq, kv = qk.matrix.shape[1], ov.matrix.shape[1]
            arrays[f"l{layer}.q"][:, c : c + kq] = proj(qk.left_space) @ qk.matrix
            arrays[f"l{layer}.k"][:, c : c + kq] = proj(qk.right_space)
            arrays[f"l{layer}.v"][:, c : c + kv] = proj(ov.input_space) @ ov.matrix
            arrays[f"l{layer}.o"][c : c + kv, :] = proj(ov.output_space).T
    shape = {"n_layers": n_layers, "n_heads": n_heads, "key_size": key_size, "mlp_hidden": hidden}
    return arrays, shape, [str(b) for b in residual.basis]


def _plain(v: Any) -> Any:
    """A token or output value as JSON keeps it (numpy scalars as Python ones)."""
    return v.item() if hasattr(v, "item") else v


def _order(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, v)
