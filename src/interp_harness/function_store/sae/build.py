"""`harness sae build`: train a small TopK SAE on one residual site of a model, save it in SAELens
format and write its catalog (function_store/sae/catalog.py).

Steps: (a) a corpus the project ships (python-docs sentences, the released neuron-explanation
sentences when present), split train / held-out by a seeded hash of each text, the held-out texts
in two disjoint samples: the scoring texts (the report, and every latent's examples) and the
reference texts (every latent's top tokens and reference explanation), so that no reference is
fitted on the texts it is scored on (issue 50 item 2; neuron targets draw theirs from a second
corpus sample likewise); (b) the site's
activations collected in-process through the intervention service's engine (the model loaded as
the service loads it); (c) a TopK SAE (Gao et al. 2024, "Scaling and evaluating sparse
autoencoders": unit-norm decoder rows, encoder initialised as the decoder's transpose, AuxK loss
on dead latents) trained with Adam; (d) the reconstruction on held-out tokens (fraction of variance
explained, mean L0, dead and dense latents); (e) the SAELens files; (f) a seeded sample of live
latents with held-out examples whose activations come from the saved SAE loaded back with sae-lens,
so the catalog agrees with what the service returns.

Position 0 is left out of training and of the statistics: every text's first token is the
attention sink, whose residual norm is far from the rest (the field's trainers drop BOS likewise);
the examples still list every token's activation, as the service returns them.

RAVEL's `train_sae` (evaluator/ravel/methods/unsupervised.py) trains a ReLU + L1 SAE, but
function_store may not import evaluator (docs/architecture.md), and TopK needs no L1 tuning.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any

import torch

from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.sae.catalog import (
    CATALOG_FILE,
    BuildOptions,
    BuildReport,
    Example,
    LatentRecord,
    SAECatalog,
    load,
    sae_dir,
)
from interp_harness.model_services.intervention.saelens import (
    encode,
    hook_name_of,
    load_sae,
    save_sae,
)

log = logging.getLogger(__name__)


# --- (a) corpus ----------------------------------------------------------------------------------
def corpus(options: BuildOptions) -> tuple[list[str], list[str], list[str]]:
    """(train, scoring, reference) texts: every corpus's sentences, split train / held-out by a
    seeded hash of the text; the held-out ones shuffled, the first `max_held_out_texts` for
    scoring and the next as many for the reference explanations (no text in both: the corpus
    is a set)."""
    from interp_harness.function_store.token_activations.corpus import load_corpus

    texts: set[str] = set()
    for name in options.corpora:
        try:
            texts.update(load_corpus(name, limit=1_000_000, seed=options.seed))
        except DataUnavailable as e:  # the released sentences are optional
            log.warning("corpus %s left out: %s", name, e)
    train, held = [], []
    for t in sorted(texts):
        h = hashlib.sha256(f"sae-split:{options.seed}:{t}".encode()).digest()
        (held if int.from_bytes(h[:4], "big") / 2**32 < options.held_out else train).append(t)
    rng = random.Random(f"sae-corpus:{options.seed}")
    rng.shuffle(train)
    rng.shuffle(held)
    cut = options.max_held_out_texts
    return train, held[:cut], held[cut : 2 * cut]


# --- (b) activations -----------------------------------------------------------------------------
class Site:
    """The model at one site, through the intervention service's engine (as the service runs it)."""

    def __init__(self, model: str, component: str, layer: int, device: str) -> None:
        from interp_harness.model_services.intervention import model as model_mod
        from interp_harness.model_services.intervention.engine import Engine

        self.engine = Engine(model_mod.load(model, device=device, dtype="float32"))
        self.component, self.layer = component, layer
        n = self.engine.m.n_layers
        if not 0 <= layer < n:
            raise ValueError(f"layer {layer} outside 0..{n - 1} of {model}")
        self.d_in = self.engine.m.width(component)
        self.device = self.engine.m.device

    def read(self, texts: list[str]) -> Iterator[tuple[str, list[int], torch.Tensor]]:
        """(text, token ids, activations [tokens, d_in] on CPU) per text, 64 texts a pass."""
        with self.engine.truncated_after(self.layer):
            for i in range(0, len(texts), 64):
                part = texts[i : i + 64]
                toks = self.engine.tokenize(part)
                pos = [list(range(len(t.ids))) for t in toks]
                values = self.engine.collect(toks, pos, self.component, [self.layer], None)[0]
                for text, t, v in zip(part, toks, values, strict=True):
                    yield text, t.ids, v

    def tokens(self, ids: list[int]) -> list[str]:
        return self.engine.token_strings(ids)


# --- (c) training --------------------------------------------------------------------------------
def train_topk(
    x: torch.Tensor,
    d_sae: int,
    k: int,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    bar: Callable[[float], None],
) -> dict[str, torch.Tensor]:
    """TopK SAE on rows of x (Gao et al. 2024), in SAELens's layout (W_enc [d_in, d_sae],
    W_dec [d_sae, d_in], the decoder bias subtracted from the input). Trained on x scaled to unit
    mean norm; the scale is folded back into the weights, so the result reads raw activations.
    Decoder rows are unit norm in training, scaled by 1/c (below) in the result."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    n, d_in = x.shape
    scale = (x - x.mean(0)).norm(dim=1).mean().clamp_min(1e-6)
    xs = x / scale
    dev = x.device
    w_dec = torch.randn(d_sae, d_in, generator=gen).to(dev)
    w_dec /= w_dec.norm(dim=1, keepdim=True)
    w_enc = w_dec.T.clone().requires_grad_()
    w_dec.requires_grad_()
    b_enc = torch.zeros(d_sae, device=dev, requires_grad=True)
    b_dec = xs.mean(0).clone().requires_grad_()
    opt = torch.optim.Adam([w_enc, w_dec, b_enc, b_dec], lr=lr)
    idle = torch.zeros(d_sae, dtype=torch.long, device=dev)  # steps since each latent last fired
    dead_after = max(20, 20_000 // batch)  # ~20k tokens without firing
    k_aux = min(d_in // 2, d_sae)
    for _ in range(steps):
        xb = xs[torch.randint(n, (min(batch, n),), generator=gen).to(dev)]
        pre = (xb - b_dec) @ w_enc + b_enc
        vals, idx = pre.topk(k, dim=1)
        z = torch.zeros_like(pre).scatter(1, idx, vals.relu())
        err = xb - (z @ w_dec + b_dec)
        mse = err.pow(2).sum(1).mean()
        loss = mse
        dead = idle > dead_after
        if dead.any():  # AuxK: the dead latents reconstruct the error (revives them)
            pre_dead = pre.masked_fill(~dead, float("-inf"))
            av, ai = pre_dead.topk(min(k_aux, int(dead.sum())), dim=1)
            e_hat = torch.zeros_like(pre).scatter(1, ai, av.relu()) @ w_dec
            loss = loss + (err.detach() - e_hat).pow(2).sum(1).mean() / 32
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            w_dec /= w_dec.norm(dim=1, keepdim=True)
        idle += 1
        idle[idx.unique()] = 0
        bar(mse.item())
    with torch.no_grad():
        # TopK is positively homogeneous: scaling the encoder by c and the decoder by 1/c keeps
        # the reconstruction; c makes the mean non-zero activation 1, so replies printed with two
        # decimals show the weak activations too
        xb = xs[torch.randperm(n, generator=gen)[:4096].to(dev)]
        z = ((xb - b_dec) @ w_enc + b_enc).topk(k, dim=1).values.relu()
        c = 1 / z[z > 0].mean().clamp_min(1e-6)
        return {
            "W_enc": (w_enc * c / scale).detach().contiguous(),
            "b_enc": (b_enc * c).detach().clone(),
            "W_dec": (w_dec * scale / c).detach().contiguous(),
            "b_dec": (b_dec * scale).detach().clone(),
        }


# --- the build -----------------------------------------------------------------------------------
class _Progress:
    """Rich progress bars of the build's slow stages (reading activations, training)."""

    def __init__(self, show: bool) -> None:
        self.p: Any = None
        if show:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.p = Progress(
                TextColumn("{task.description:<22}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[note]}"),
                TimeElapsedColumn(),
            )

    def __enter__(self) -> _Progress:
        if self.p is not None:
            self.p.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.p is not None:
            self.p.__exit__(*exc)

    def task(self, label: str, total: int) -> Any:
        """`advance(n, note)` of a new bar."""
        if self.p is None:
            return lambda n=1, note="": None
        tid = self.p.add_task(label, total=total, note="")
        return lambda n=1, note="": self.p.update(tid, advance=n, note=note)


def build_sae(options: BuildOptions | None = None, progress: bool = True) -> SAECatalog:
    """Build (or reuse the cached) SAE of `options`; returns its catalog."""
    options = options or BuildOptions()
    name = options.sae_name()
    out = sae_dir(name)
    digest = options.options_hash()
    if not options.force and (out / CATALOG_FILE).is_file():
        try:
            cached = load(name)
            if cached.options_hash == digest:
                return cached
        except ValueError:  # an unreadable catalog is rebuilt
            pass
    t0 = time.monotonic()
    train_texts, held_texts, reference_texts = corpus(options)
    _check_split(held_texts, reference_texts, train_texts)
    site = Site(options.model, options.component, options.layer, options.device)
    xs: list[torch.Tensor] = []
    used = have = 0
    with _Progress(progress) as bars:
        read = bars.task("reading activations", options.tokens)
        with closing(site.read(train_texts)) as texts:  # closed: the model is whole again
            for _, _, v in texts:
                xs.append(v[1:])  # position 0: the attention sink (module docstring)
                read(min(len(v) - 1, options.tokens - have))
                used, have = used + 1, have + len(v) - 1
                if have >= options.tokens:
                    break
        x = torch.cat(xs)[: options.tokens]
        t_read = time.monotonic() - t0
        step = bars.task("training SAE", options.steps)
        w = train_topk(
            x.to(site.device),
            options.d_sae,
            options.k,
            options.steps,
            options.batch_size,
            options.lr,
            options.seed,
            lambda mse: step(1, f"mse {mse:.3f}"),
        )
        t_train = time.monotonic() - t0 - t_read
    hook = hook_name_of(options.component, options.layer)
    # a catalog beside other weights would lie: it is written again last
    (out / CATALOG_FILE).unlink(missing_ok=True)
    save_sae(
        out,
        **{n: t.cpu() for n, t in w.items()},
        architecture="topk",
        k=options.k,
        hook_name=hook,
        model_name=options.model,
        d_in=site.d_in,
        d_sae=options.d_sae,
    )
    t_done = time.monotonic() - t0
    catalog = _write_catalog(name, site, held_texts, reference_texts, options, len(x), used)
    catalog.report.seconds = round(t_done + catalog.report.seconds, 1)
    catalog.report.read_seconds, catalog.report.train_seconds = round(t_read, 1), round(t_train, 1)
    (out / CATALOG_FILE).write_text(catalog.model_dump_json(indent=1), encoding="utf-8")
    return catalog


def catalog_sae(name: str, options: BuildOptions | None = None) -> SAECatalog:
    """The catalog of an SAE already in SAELens format in `sae_dir(name)` (downloaded, trained
    elsewhere, planted by a test): its hook decides the site; `options` the model (the service's
    name for it), the held-out corpus and the latent sample. Nothing is trained."""
    options = options or BuildOptions()
    folder = sae_dir(name)
    if not (folder / "cfg.json").is_file():
        raise DataUnavailable(f"{folder} holds no SAELens SAE (cfg.json)")
    from interp_harness.model_services.intervention.saelens import read_info

    info = read_info(name, folder)
    _, held_texts, reference_texts = corpus(options)
    _check_split(held_texts, reference_texts)
    site = Site(options.model, info.component, info.layer, options.device)
    catalog = _write_catalog(name, site, held_texts, reference_texts, options, 0, 0)
    (folder / CATALOG_FILE).write_text(catalog.model_dump_json(indent=1), encoding="utf-8")
    return catalog


def _check_split(held: list[str], reference: list[str], train: list[str] | None = None) -> None:
    """Enough texts for each part (`train`: None for an SAE trained elsewhere)."""
    if len(held) < 2 or not reference or train == []:
        n = "" if train is None else f"{len(train)} training, "
        raise ValueError(
            f"the corpus is too small to build an SAE ({n}{len(held)} scoring and "
            f"{len(reference)} reference texts)"
        )


def _write_catalog(
    name: str,
    site: Site,
    held_texts: list[str],
    reference_texts: list[str],
    options: BuildOptions,
    train_tokens: int,
    train_texts: int,
) -> SAECatalog:
    """Reconstruction report and latent sample of the SAE saved in `sae_dir(name)`, read back
    and encoded as the service encodes: what it will return. The report and the examples come
    from `held_texts`, the reference explanations from `reference_texts` (disjoint)."""
    t0 = time.monotonic()
    out = sae_dir(name)
    sae = load_sae(out)
    cfg = sae.cfg
    held = [(t, ids, v) for t, ids, v in site.read(held_texts)]
    ref = [(t, ids, v) for t, ids, v in site.read(reference_texts)]
    with torch.no_grad():
        acts = [encode(sae, v) for _, _, v in held]
        ref_acts = [encode(sae, v) for _, _, v in ref]
        report, density = _report(sae, held, acts, options, train_tokens, train_texts)
    report.reference_texts = len(ref)
    report.seconds = round(time.monotonic() - t0, 1)
    report.device = str(site.device)
    k = getattr(cfg, "k", None)
    return SAECatalog(
        sae=name,
        model=options.model,
        layer=site.layer,
        component=site.component,
        hook_name=hook_name_of(site.component, site.layer),
        architecture=str(cfg.architecture()),
        d_in=site.d_in,
        d_sae=int(cfg.d_sae),
        k=int(k) if k is not None else None,
        options=options.model_dump(mode="json", exclude={"force", "device"}),
        options_hash=options.options_hash(),
        report=report,
        latents=_catalog_latents(site, (held, acts), (ref, ref_acts), density, options),
        held_out=[t for t, _, _ in held],
        reference_texts=[t for t, _, _ in ref],
    )


def _report(
    sae: Any,
    held: list[tuple[str, list[int], torch.Tensor]],
    acts: list[torch.Tensor],
    options: BuildOptions,
    train_tokens: int,
    train_texts: int,
) -> tuple[BuildReport, torch.Tensor]:
    """Reconstruction on held-out tokens (past position 0) and every latent's density there."""
    x = torch.cat([v[1:] for _, _, v in held])
    z = torch.cat([a[1:] for a in acts])
    resid = (x - sae.decode(z)).pow(2).sum()
    total = (x - x.mean(0)).pow(2).sum().clamp_min(1e-12)
    density = (z > 0).float().mean(0)
    report = BuildReport(
        fve=round(float(1 - resid / total), 4),
        l0=round(float((z > 0).sum(1).float().mean()), 2),
        dead=int((density < options.min_density).sum()),
        dense=int((density > options.max_density).sum()),
        tokens=train_tokens,
        held_out_tokens=len(x),
        train_texts=train_texts,
        held_out_texts=len(held),
        steps=options.steps,
        seconds=0.0,
        device="",
    )
    return report, density


Read = tuple[list[tuple[str, list[int], torch.Tensor]], list[torch.Tensor]]  # texts, SAE acts


def _catalog_latents(
    site: Site, scoring: Read, ref: Read, density: torch.Tensor, options: BuildOptions
) -> list[LatentRecord]:
    """A seeded sample of live latents with enough activating and non-activating scoring texts,
    and some activation on the reference texts (else it would have no reference explanation)."""
    held, acts = scoring
    text_max = torch.stack([a.max(0).values for a in acts])  # [texts, d_sae], all positions
    n_on = (text_max > 0).sum(0)
    n_off = len(held) - n_on
    ref_tokens = [site.tokens(ids) for _, ids, _ in ref[0]]
    ref_on = torch.stack([(a[1:] > 0).any(0) for a in ref[1]]).any(0)  # past the sink
    ok = (
        (density >= options.min_density)
        & (density <= options.max_density)
        & (n_on >= options.n_activating)
        & (n_off >= options.n_non_activating)
        & ref_on
    )
    live = torch.nonzero(ok).flatten().tolist()
    rng = random.Random(f"sae-catalog:{options.seed}")
    picked = sorted(rng.sample(live, min(options.n_latents, len(live))))
    tokens = [site.tokens(ids) for _, ids, _ in held]
    out = []
    for j in picked:
        top = _top_tokens(ref_tokens, ref[1], j)
        col = text_max[:, j]
        on = [i for i in range(len(held)) if col[i] > 0]
        off = [i for i in range(len(held)) if col[i] <= 0]
        n_top = options.n_activating // 2
        by_max = sorted(on, key=lambda i: -float(col[i]))
        chosen = by_max[:n_top]
        rest = [i for i in on if i not in set(chosen)]
        chosen += rng.sample(rest, options.n_activating - len(chosen))

        def ex(i: int, j: int = j) -> Example:
            acts_ij = [round(v, 4) for v in acts[i][:, j].tolist()]
            return Example(text=held[i][0], tokens=tokens[i], acts=acts_ij)

        out.append(
            LatentRecord(
                latent=j,
                density=round(float(density[j]), 6),
                max_act=round(float(col.max()), 4),
                top_tokens=[(t, int(c), round(m, 4)) for t, (c, m) in top],
                reference=reference([t for t, _ in top]),
                activating=[ex(i) for i in chosen],
                non_activating=[ex(i) for i in sorted(rng.sample(off, options.n_non_activating))],
            )
        )
    return out


def _top_tokens(
    tokens: list[list[str]], acts: list[torch.Tensor], j: int, n: int = 10
) -> list[tuple[str, tuple[int, float]]]:
    """Latent j's `n` tokens active most often over the texts (ties: the larger max, then the
    token), past position 0, each with (times active, max activation)."""
    stats: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for toks, a in zip(tokens, acts, strict=True):
        for tok, v in zip(toks[1:], a[1:, j].tolist(), strict=True):
            if v > 0:
                s = stats[tok]
                s[0] += 1
                s[1] = max(s[1], v)
    ranked = sorted(stats.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:n]
    return [(t, (int(c), m)) for t, (c, m) in ranked]


def reference(top_tokens: list[str], n: int = 5) -> str:
    """The reference explanation in the neuron prompt's style: `fires on "x", "y"`."""
    words: list[str] = []
    for t in top_tokens:
        w = t.strip() or t.replace("\n", "\\n")
        if w and w not in words:
            words.append(w)
    return "fires on " + ", ".join(f'"{w}"' for w in words[:n])
