"""SAELens sparse autoencoders served by name: the on-disk format (a folder with `cfg.json` and
`sae_weights.safetensors`), read and written through `sae-lens` itself, the mapping of its hook
names to our components, and the registry `/v1/activations` encodes with.

SAEs are configured by the operator only: `--sae NAME=PATH` entries and one `--sae-dir` whose
subfolders holding a `cfg.json` are SAEs named by the folder. A request names an SAE; it never
carries a path, and a name is only ever a key of the registry, never joined to a path. The folder
is re-read when a name is missing and for every listing, so an SAE built while the service runs
(`harness sae build` writes into the default folder) is served without a restart; a loaded SAE is
reloaded when its weights file changes.

`sae_lens` is imported on first use only: its import takes seconds.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from interp_harness.model_services.backbone.engine import BadRequest
from interp_harness.model_services.backbone.model import cache_root
from interp_harness.model_services.intervention.sae_names import NAME_RE, valid_name
from interp_harness.model_services.intervention.schemas import SAEInfo

log = logging.getLogger(__name__)

CFG = "cfg.json"
WEIGHTS = "sae_weights.safetensors"
MAX_LOADED = 8  # SAEs kept in memory at once (least recently used ones are dropped)
ENCODE_ROWS = 2048  # rows encoded at once: a 16k-latent SAE then needs 128 MiB of latents

# TransformerLens hook names (as SAELens records them) <-> our components (pyvene's names)
HOOKS: dict[str, str] = {
    "hook_resid_pre": "block_input",
    "hook_resid_post": "block_output",
    "hook_mlp_out": "mlp_output",
    "hook_attn_out": "attention_output",
}
_HOOK_RE = re.compile(r"^blocks\.(\d+)\.(hook_[a-z_]+)$")


class SAEConfigError(ValueError):
    """An SAE the operator configured cannot be served (its message says why)."""


def site_of(hook_name: str) -> tuple[str, int]:
    """(component, layer) of a SAELens hook name, e.g. `blocks.3.hook_resid_post` ->
    ("block_output", 3)."""
    m = _HOOK_RE.match(hook_name)
    if m is None or m.group(2) not in HOOKS:
        known = ", ".join(f"blocks.L.{h}" for h in HOOKS)
        raise SAEConfigError(f"SAE hook {hook_name!r} is not served; served hooks: {known}")
    return HOOKS[m.group(2)], int(m.group(1))


def hook_name_of(component: str, layer: int) -> str:
    """The SAELens hook name of our (component, layer)."""
    for hook, comp in HOOKS.items():
        if comp == component:
            return f"blocks.{layer}.{hook}"
    raise SAEConfigError(
        f"component {component!r} has no SAELens hook; SAEs read {', '.join(HOOKS.values())}"
    )


def default_sae_dir() -> Path:
    """`<cache>/sae`, <cache> being interp_harness.function_store.datasets.cache_dir() (HARNESS_CACHE_DIR/data),
    where the project's built SAEs live (model_services may not import function_store)."""
    return cache_root() / "data" / "sae"


def read_info(name: str, path: Path) -> SAEInfo:
    """The listing of one SAE folder, from its cfg.json alone (no weights are read). Messages
    name the SAE, never its path: they may reach an API caller."""
    try:
        cfg = json.loads((path / CFG).read_text())
    except (OSError, ValueError) as e:
        raise SAEConfigError(f"SAE {name!r}: unreadable {CFG} ({type(e).__name__})") from e
    meta = cfg.get("metadata") or {}
    # SAELens 6 keeps the hook in `metadata`; earlier versions at the top level
    hook = meta.get("hook_name") or cfg.get("hook_name")
    if not isinstance(hook, str):
        raise SAEConfigError(f"SAE {name!r}: {CFG} names no hook_name")
    component, layer = site_of(hook)
    try:
        d_in, d_sae = int(cfg["d_in"]), int(cfg["d_sae"])
    except (KeyError, TypeError, ValueError) as e:
        raise SAEConfigError(f"SAE {name!r}: {CFG} lacks d_in/d_sae") from e
    return SAEInfo(
        name=name,
        d_in=d_in,
        d_sae=d_sae,
        layer=layer,
        component=component,
        hook_name=hook,
        architecture=str(cfg.get("architecture", "standard")),
        k=cfg.get("k"),
    )


def load_sae(path: Path | str, device: str | torch.device = "cpu") -> Any:
    """An SAELens SAE from its folder, in float32 on `device`, in eval mode."""
    from sae_lens import SAE

    sae = SAE.load_from_disk(Path(path), device=str(device), dtype="float32")
    sae.eval()
    sae.requires_grad_(False)
    return sae


@torch.inference_mode()
def encode(sae: Any, x: torch.Tensor, latents: list[int] | None = None) -> torch.Tensor:
    """`sae.encode` of x [..., d_in] (float32 on the SAE's device, ENCODE_ROWS rows at a time) ->
    [..., len(latents)] float32 on x's device; latents None: every latent."""
    flat = x.reshape(-1, x.shape[-1])
    dev = sae.W_enc.device
    idx = None if latents is None else torch.tensor(latents, device=dev)
    parts = []
    for i in range(0, flat.shape[0], ENCODE_ROWS):
        z = sae.encode(flat[i : i + ENCODE_ROWS].to(dev, torch.float32))
        if z.is_sparse:  # TopK with sparse activations
            z = z.to_dense()
        parts.append((z if idx is None else z.index_select(-1, idx)).to(x.device))
    out = torch.cat(parts) if parts else flat.new_zeros((0, sae.cfg.d_sae if idx is None else 0))
    return out.reshape(*x.shape[:-1], out.shape[-1])


def save_sae(
    path: Path | str,
    W_enc: torch.Tensor,  # noqa: N803 (SAELens's parameter names)
    b_enc: torch.Tensor,
    W_dec: torch.Tensor,  # noqa: N803
    b_dec: torch.Tensor,
    *,
    architecture: Literal["standard", "topk"],
    k: int | None = None,
    hook_name: str,
    model_name: str,
    d_in: int,
    d_sae: int,
    apply_b_dec_to_input: bool = True,
) -> Path:
    """Write an SAE in SAELens format through sae-lens (its config class and `save_model`).

    Shapes as SAELens has them: W_enc [d_in, d_sae], b_enc [d_sae], W_dec [d_sae, d_in],
    b_dec [d_in]. `standard`: encode(x) = ReLU((x - b_dec·a) @ W_enc + b_enc); `topk` keeps the k
    largest pre-activations (ReLU'd); a = apply_b_dec_to_input (SAELens's default, True).
    """
    from sae_lens import StandardSAE, StandardSAEConfig, TopKSAE, TopKSAEConfig
    from sae_lens.saes.sae import SAEMetadata

    site_of(hook_name)  # only hooks the service can serve
    want = {"W_enc": (d_in, d_sae), "b_enc": (d_sae,), "W_dec": (d_sae, d_in), "b_dec": (d_in,)}
    got = {"W_enc": W_enc, "b_enc": b_enc, "W_dec": W_dec, "b_dec": b_dec}
    for key, shape in want.items():
        if tuple(got[key].shape) != shape:
            raise ValueError(f"{key} has shape {tuple(got[key].shape)}, expected {shape}")
    meta = SAEMetadata(hook_name=hook_name, model_name=model_name)
    common = {"d_in": d_in, "d_sae": d_sae, "apply_b_dec_to_input": apply_b_dec_to_input}
    if architecture == "topk":
        if k is None or not 0 < k <= d_sae:
            raise ValueError(f"a topk SAE needs 0 < k <= d_sae, got k={k}")
        sae: Any = TopKSAE(TopKSAEConfig(**common, k=k, metadata=meta))
    elif architecture == "standard":
        sae = StandardSAE(StandardSAEConfig(**common, metadata=meta))
    else:
        raise ValueError(f"architecture {architecture!r}: 'standard' or 'topk'")
    with torch.no_grad():
        for key, value in got.items():
            getattr(sae, key).copy_(value.detach().to(torch.float32))
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    sae.save_model(out)
    return out


def parse_sae_option(entry: str) -> tuple[str, Path]:
    """`NAME=PATH` of `--sae` -> (name, path); SAEConfigError when malformed."""
    name, sep, path = entry.partition("=")
    if not sep or not path:
        raise SAEConfigError(f"--sae {entry!r}: expected NAME=PATH")
    if not valid_name(name):
        raise SAEConfigError(f"--sae {entry!r}: the name must match {NAME_RE.pattern}")
    return name, Path(path).expanduser()


def _servable(entries: dict[str, Path]) -> list[SAEInfo]:
    out = []
    for name in sorted(entries):
        try:
            out.append(read_info(name, entries[name]))
        except SAEConfigError as e:
            log.warning("not served: %s", e)
    return out


@dataclass
class _Loaded:
    sae: Any
    stamp: tuple[int, int]  # (mtime_ns, size) of the weights file it was read from


class SAERegistry:
    """The SAEs a service may encode with, by name; thread-safe, each loaded on first use.

    `paths`: explicit NAME -> folder (the operator's `--sae`, checked now: a typo fails at start);
    `folder`: a folder of SAE folders, scanned on listing and on an unknown name (it may not exist
    yet). An explicit name shadows a folder entry of the same name.
    """

    def __init__(
        self,
        paths: dict[str, Path] | None = None,
        folder: Path | None = None,
        device: str | torch.device = "cpu",
    ) -> None:
        self.device = device
        self.folder = folder
        self._explicit: dict[str, Path] = {}
        self._scanned: dict[str, Path] = {}
        self._loaded: OrderedDict[str, _Loaded] = OrderedDict()
        self._lock = threading.Lock()
        for name, path in (paths or {}).items():
            if not valid_name(name):
                raise SAEConfigError(f"SAE name {name!r} must match {NAME_RE.pattern}")
            if not (path / CFG).is_file() or not (path / WEIGHTS).is_file():
                raise SAEConfigError(
                    f"--sae {name}={path}: not an SAELens folder ({CFG} and {WEIGHTS})"
                )
            read_info(name, path)  # a hook the service cannot serve fails at start
            self._explicit[name] = path

    def _scan(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        if self.folder is not None and self.folder.is_dir():
            for sub in sorted(self.folder.iterdir()):
                if valid_name(sub.name) and (sub / CFG).is_file():
                    found[sub.name] = sub
        self._scanned = found
        return found

    def _path(self, name: str) -> Path | None:
        if name in self._explicit:
            return self._explicit[name]
        return self._scanned.get(name) or self._scan().get(name)

    def names(self) -> list[str]:
        with self._lock:
            return sorted({*self._explicit, *self._scan()})

    def list(self) -> list[SAEInfo]:
        """Every servable SAE (an unusable folder is left out, with a warning in the log)."""
        with self._lock:
            entries = {**self._scan(), **self._explicit}
        return _servable(entries)

    def _unknown(self, name: str) -> BadRequest:
        if not valid_name(name):
            return BadRequest(f"sae: {name!r} is not an SAE name (it must match {NAME_RE.pattern})")
        served = [i.name for i in _servable({**self._scanned, **self._explicit})]
        return BadRequest(
            f"sae: unknown SAE {name!r}; served: {', '.join(served) if served else 'none'}"
        )

    def warm(self) -> None:
        """Load the servable SAEs now (at most MAX_LOADED): importing sae-lens and reading weights
        takes seconds, which a target's first call must not wait for."""
        for info in self.list()[:MAX_LOADED]:
            try:
                self.get(info.name)
            except BadRequest as e:
                log.warning("SAE %s not preloaded: %s", info.name, e)

    def get(self, name: str) -> tuple[SAEInfo, Any]:
        """(listing, the loaded SAELens SAE) of a served name; BadRequest for an unknown or
        unusable one."""
        with self._lock:
            path = self._path(name) if valid_name(name) else None
            if path is None:
                raise self._unknown(name)
            try:
                info = read_info(name, path)
                st = (path / WEIGHTS).stat()
            except SAEConfigError as e:
                raise BadRequest(f"sae: {e}") from e
            except OSError as e:
                raise BadRequest(f"sae: SAE {name!r} has no readable {WEIGHTS}") from e
            stamp = (st.st_mtime_ns, st.st_size)
            held = self._loaded.get(name)
            if held is None or held.stamp != stamp:
                log.info("loading SAE %s from %s", name, path)
                try:
                    held = _Loaded(load_sae(path, self.device), stamp)
                except ImportError as e:  # an install without the `sae` extra (compose images)
                    raise BadRequest(
                        "sae: this service cannot read SAEs: sae-lens is not installed "
                        "(pip install 'interp-harness[sae]')"
                    ) from e
                self._loaded[name] = held
            self._loaded.move_to_end(name)
            while len(self._loaded) > MAX_LOADED:
                self._loaded.popitem(last=False)
            return info, held.sae
