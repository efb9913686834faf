"""One target's weights from several compiled programs: the asked program and its distractors
side by side, then every basis the agent could read rotated away.

- Residual spaces are concatenated (each program keeps its own copy of the token, position and
  constant directions), so no program reads what another writes.
- Each program may start at a later layer (empty layers before it), chosen so that no two
  programs put an MLP in the same layer: MLP truth is per layer, and a shared layer would belong
  to both. Among the shifts that keep MLPs apart, the one giving the fewest layers is taken
  (ties drawn from the seed), so the asked program is not always first.
- A layer's non-empty heads (every program's) are placed in a drawn order; the remaining slots up
  to the widest layer are zero padding heads. A layer's MLP hidden units are concatenated and
  permuted.
- Queries are scaled so each head's logits stay what its own program computed under the common
  key size (the softmax divides by sqrt(key size)).
- The residual stream is rotated by a random orthogonal matrix, each head's query/key space and
  value space by their own: the function is unchanged, the basis tells nothing.
Only the asked program's output is unembedded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from interp_harness.function_store.circuits.compile import Compiled, head_name, mlp_name
from interp_harness.model_services.intervention.compiled import CompiledMeta

ASKED = 0  # index of the asked program among the merged ones


@dataclass
class Merged:
    """The served weights and, for the build and tests only, where each part came from."""

    arrays: dict[str, np.ndarray]
    meta: CompiledMeta
    owner: dict[str, int]  # non-empty component -> index of the program it belongs to
    roles: dict[str, str]  # non-empty component -> the role its program's compile gave it
    rotation: np.ndarray  # merged unrotated residual -> served residual (x_served = x @ R)
    blocks: list[slice]  # each program's residual dims in the unrotated merged space
    shifts: list[int]  # each program's first layer


def random_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """Haar-random orthogonal matrix (QR of a Gaussian, signs fixed by R's diagonal)."""
    if n == 0:
        return np.zeros((0, 0))
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))[None, :]


def _heads(c: Compiled, layer: int) -> list[int]:
    """The non-empty heads of one layer of one program."""
    k, h = c.meta.key_size, c.meta.n_heads
    out = []
    for j in range(h):
        cols = slice(j * k, (j + 1) * k)
        ws = (c.arrays[f"l{layer}.{x}"][:, cols] for x in ("q", "k", "v"))
        if any(np.any(w) for w in ws) or np.any(c.arrays[f"l{layer}.o"][cols, :]):
            out.append(j)
    return out


def _hidden(c: Compiled, layer: int) -> np.ndarray:
    """Indices of one layer's used MLP hidden units."""
    w1, w2 = c.arrays[f"l{layer}.mlp1"], c.arrays[f"l{layer}.mlp2"]
    b1 = c.arrays[f"l{layer}.mlp1_b"]
    used = np.any(w1 != 0, axis=0) | np.any(w2 != 0, axis=1) | (b1 != 0)
    return np.flatnonzero(used)


def _mlp_layers(c: Compiled) -> set[int]:
    return {i for i in range(c.meta.n_layers) if len(_hidden(c, i))}


def _shifts(programs: list[Compiled], rng: np.random.Generator) -> list[int]:
    order = rng.permutation(len(programs))
    taken: set[int] = set()
    depth = 0
    shifts = [0] * len(programs)
    for i in order:
        c = programs[i]
        mlps = _mlp_layers(c)
        best: list[int] = []
        best_depth = None
        for s in range(depth + 1):  # s = depth always fits (nothing after it yet)
            if {m + s for m in mlps} & taken:
                continue
            d = max(depth, s + c.meta.n_layers)
            if best_depth is None or d < best_depth:
                best, best_depth = [s], d
            elif d == best_depth:
                best.append(s)
        s = int(rng.choice(best))
        shifts[i] = s
        taken |= {m + s for m in mlps}
        depth = max(depth, s + c.meta.n_layers)
    return shifts


def merge(programs: list[Compiled], seed: int) -> Merged:
    """Merge `programs` (the asked one first) into one model; every draw comes from `seed`."""
    rng = np.random.default_rng(seed)
    first = programs[0].meta
    for c in programs[1:]:
        if c.meta.tokens != first.tokens or c.meta.max_len != first.max_len:
            raise ValueError("programs to merge must share the vocabulary and the length")
    widths = [c.arrays["token_embed"].shape[1] for c in programs]
    offsets = np.cumsum([0, *widths])
    blocks = [slice(int(offsets[i]), int(offsets[i + 1])) for i in range(len(programs))]
    d = int(offsets[-1])
    shifts = _shifts(programs, rng)
    n_layers = max(s + c.meta.n_layers for s, c in zip(shifts, programs, strict=True))
    k = max(c.meta.key_size for c in programs)

    # per merged layer: the heads (program, its layer, its head) and hidden units
    layer_heads: list[list[tuple[int, int, int]]] = [[] for _ in range(n_layers)]
    layer_hidden: list[list[tuple[int, int, np.ndarray]]] = [[] for _ in range(n_layers)]
    for p, (c, s) in enumerate(zip(programs, shifts, strict=True)):
        for i in range(c.meta.n_layers):
            layer_heads[s + i] += [(p, i, j) for j in _heads(c, i)]
            units = _hidden(c, i)
            if len(units):
                layer_hidden[s + i].append((p, i, units))
    n_heads = max(1, max(len(h) for h in layer_heads))
    hidden = max(1, max(sum(len(u) for _, _, u in hs) for hs in layer_hidden))

    tok = np.zeros((len(first.tokens), d))
    pos = np.zeros((first.max_len + 1, d))
    unembed = np.zeros((d, programs[ASKED].arrays["unembed"].shape[1]))
    for c, b in zip(programs, blocks, strict=True):
        tok[:, b] = c.arrays["token_embed"]
        pos[:, b] = c.arrays["pos_embed"]
    unembed[blocks[ASKED], :] = programs[ASKED].arrays["unembed"]

    arrays: dict[str, np.ndarray] = {}
    owner: dict[str, int] = {}
    roles: dict[str, str] = {}
    for layer in range(n_layers):
        q, kk, v = (np.zeros((d, n_heads * k)) for _ in range(3))
        o = np.zeros((n_heads * k, d))
        heads = layer_heads[layer]
        for slot, idx in enumerate(rng.permutation(len(heads))):
            p, i, j = heads[idx]
            c, b = programs[p], blocks[p]
            ck = c.meta.key_size
            src, dst = slice(j * ck, (j + 1) * ck), slice(slot * k, slot * k + ck)
            scale = math.sqrt(k / ck)  # keeps this head's logits under the common key size
            q[b, dst] = c.arrays[f"l{i}.q"][:, src] * scale
            kk[b, dst] = c.arrays[f"l{i}.k"][:, src]
            v[b, dst] = c.arrays[f"l{i}.v"][:, src]
            o[dst, b] = c.arrays[f"l{i}.o"][src, :]
            name = head_name(layer, slot)
            owner[name] = p
            roles[name] = c.roles.get(head_name(i, j), "")
        w1, w2 = np.zeros((d, hidden)), np.zeros((hidden, d))
        b1, b2 = np.zeros(hidden), np.zeros(d)
        col = 0
        for p, i, units in layer_hidden[layer]:
            c, b = programs[p], blocks[p]
            cols = slice(col, col + len(units))
            w1[b, cols] = c.arrays[f"l{i}.mlp1"][:, units]
            b1[cols] = c.arrays[f"l{i}.mlp1_b"][units]
            w2[cols, b] = c.arrays[f"l{i}.mlp2"][units, :]
            b2[b] += c.arrays[f"l{i}.mlp2_b"]
            col += len(units)
            owner[mlp_name(layer)] = p  # one program per MLP layer (the shifts see to it)
            roles[mlp_name(layer)] = c.roles.get(mlp_name(i), "")
        perm = rng.permutation(hidden)
        w1, b1, w2 = w1[:, perm], b1[perm], w2[perm, :]
        # each head's own bases: query/key space and value space rotated (logits and outputs kept)
        for slot in range(n_heads):
            cols = slice(slot * k, (slot + 1) * k)
            r_qk, r_v = random_orthogonal(k, rng), random_orthogonal(k, rng)
            q[:, cols], kk[:, cols] = q[:, cols] @ r_qk, kk[:, cols] @ r_qk
            v[:, cols], o[cols, :] = v[:, cols] @ r_v, r_v.T @ o[cols, :]
        arrays.update(
            {
                f"l{layer}.q": q,
                f"l{layer}.k": kk,
                f"l{layer}.v": v,
                f"l{layer}.o": o,
                f"l{layer}.mlp1": w1,
                f"l{layer}.mlp1_b": b1,
                f"l{layer}.mlp2": w2,
                f"l{layer}.mlp2_b": b2,
            }
        )

    rot = random_orthogonal(d, rng)
    arrays["token_embed"], arrays["pos_embed"] = tok @ rot, pos @ rot
    arrays["unembed"] = rot.T @ unembed
    for layer in range(n_layers):
        for read in ("q", "k", "v", "mlp1"):
            arrays[f"l{layer}.{read}"] = rot.T @ arrays[f"l{layer}.{read}"]
        for write in ("o", "mlp2"):
            arrays[f"l{layer}.{write}"] = arrays[f"l{layer}.{write}"] @ rot
        arrays[f"l{layer}.mlp2_b"] = arrays[f"l{layer}.mlp2_b"] @ rot
    meta = first.model_copy(
        update={
            "n_layers": n_layers,
            "n_heads": n_heads,
            "key_size": k,
            "mlp_hidden": hidden,
            "output_kind": programs[ASKED].meta.output_kind,
            "output_values": programs[ASKED].meta.output_values,
        }
    )
    return Merged(arrays, meta, owner, roles, rot, blocks, shifts)
