"""Device check: the intervention service on a GPU (or on this machine's CPU), each step bounded
and printing one line of figures, the whole result as one JSON file (`device_check.json` in
`--out`). Run on a bare GPU machine by scripts/device_check.sh; its CPU form (`--tiny`) runs in
the test suite.

    python benchmarks/device_check.py --out DIR [--device cuda:0] [--tiny]
        [--models gpt2-xl-random,tinyllama-random] [--dtypes float16,bfloat16] [--batches 1,8,64]
        [--texts 256] [--min-seconds 1] [--step-timeout 150] [--budget-s 420] [--no-cpu-baseline]
        [--circuits-weights DIR] [--install-report FILE]

Models are the service's random models (GPT-2 XL's and TinyLlama-1.1B's shapes, built from their
configs with seeded random weights on the device: no hub, no download), loaded by the service's
own `build_app` and served over HTTP on loopback from this process; every figure says so. Steps:

- `machine`: Python, torch, CUDA, the card, what was installed from the wheelhouse;
- `model` (each model × dtype on the device, then each model in float32 on this machine's CPU):
  activations read (texts/s), interchange interventions (examples/s) at each batch size, whether
  they changed the output (an interchange from another text changes the top logprobs; from the
  text itself, nothing), peak GPU memory;
- `sae-lens`: an SAELens SAE (random, written while the service runs) encoded on the device
  through `/v1/activations`, checked against sae-lens's own `encode`; skipped with a line when
  sae-lens is not installed;
- `sae-featurizer`: an autoencoder featurizer (an SAE's shape, random) in interchanges;
- `circuits`: the compiled circuits family's models from carried `.npz` weights, on the device and
  on the CPU (outputs agree, inputs/s, an ablation changes outputs); skipped with a line when
  the family or the weights are absent;
- `cli`: `harness intervention serve --model M --device D --dtype T` as docs tell an operator to
  run it (started at the beginning in a process of its own, waited for before any timing);
- `ratios`: each device figure over the same call on the CPU.

A step that fails or passes its time limit is recorded with its cause, and the next one runs;
the JSON is rewritten after every step, so a run cut short keeps what it measured.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gc
import importlib
import importlib.util
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from serving import free_port, stop

RESULT = "device_check.json"
WEIGHTS_NOTE = "random weights (seeded, built from the config on the device; no hub)"
GPU_MODELS = "gpt2-xl-random,tinyllama-random"
TINY_MODELS = "gpt2-tiny-random,llama-tiny-random"
# the circuits family's compiled models; their `.npz` weights are built and copied to
# .device/circuits by scripts/device_wheelhouse.sh
CIRCUITS_MODEL = "interp_harness.model_services.intervention.circuit_model"
WORDS = "the city river music old new red small bright quiet people market north garden".split()


class StepTimeout(Exception):
    pass


class Skipped(Exception):
    """The step cannot run here; its message is the line."""


@dataclass
class Step:
    name: str
    status: str  # ok | failed | skipped
    seconds: float
    line: str
    figures: dict[str, Any] = field(default_factory=dict)
    cause: str | None = None


@dataclass
class Check:
    out: Path
    args: argparse.Namespace
    deadline: float
    steps: list[Step] = field(default_factory=list)
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    machine: dict[str, Any] = field(default_factory=dict)

    def write(self, status: str) -> None:
        doc = {
            "schema": 1,
            "status": status,
            "started": self.started,
            "written": datetime.now(UTC).isoformat(timespec="seconds"),
            "weights": WEIGHTS_NOTE,
            "options": {k: _plain(v) for k, v in vars(self.args).items()},
            "machine": self.machine,
            "steps": [asdict(s) for s in self.steps],
        }
        tmp = self.out / (RESULT + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        tmp.replace(self.out / RESULT)  # a run killed mid-write keeps the previous whole file

    def step(
        self, name: str, fn: Callable[[dict[str, Any]], str], timeout: float | None = None
    ) -> Step:
        """Run fn(figures) -> its line, within the step's limit and what is left of the budget;
        print and record one line whatever happens."""
        left = self.deadline - time.monotonic()
        limit = min(timeout or self.args.step_timeout, left)
        figures: dict[str, Any] = {}
        t0 = time.monotonic()
        if limit < 5:
            s = Step(name, "skipped", 0.0, f"{name}: skipped: out of time ({left:.0f} s left)")
        else:
            try:
                with time_limit(limit):
                    line = fn(figures)
                s = Step(name, "ok", time.monotonic() - t0, line, figures)
            except Skipped as e:
                s = Step(name, "skipped", time.monotonic() - t0, f"{name}: skipped: {e}", figures)
            except StepTimeout:
                cause = f"timed out after {limit:.0f} s"
                s = Step(name, "failed", limit, f"{name}: FAILED: {cause}", figures, cause)
            except Exception as e:
                cause = f"{type(e).__name__}: {e}"
                tb = traceback.format_exc(limit=-4)
                s = Step(name, "failed", time.monotonic() - t0, f"{name}: FAILED: {cause}", figures)
                s.cause = f"{cause}\n{tb}"
        s.seconds = round(s.seconds, 2)
        # the step's model is unreachable only now (its frame is gone): free it before the next
        # step's weights count in that step's GPU memory
        gc.collect()
        _empty_cuda_cache()
        print(s.line, flush=True)
        self.steps.append(s)
        self.write("running")
        return s


def _plain(v: Any) -> Any:
    if isinstance(v, Path):
        return str(v)
    return sorted(v) if isinstance(v, set) else v


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """StepTimeout in this (the main) thread after `seconds`: a request waiting on the service is
    abandoned, and the service drops it at its next block (it checks for a gone client)."""

    def _raise(*_: Any) -> None:
        raise StepTimeout()

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ---- the service in this process --------------------------------------------------------------
@dataclass
class Served:
    url: str
    client: Any  # InterventionClient
    app: Any
    load_s: float


@contextlib.contextmanager
def service(model: str, device: str, dtype: str, sae_dir: Path | None = None) -> Iterator[Served]:
    """The service's app (`build_app`, as `harness intervention serve` builds it) on a loopback
    port, served by uvicorn from a thread of this process."""
    import uvicorn

    from interp_harness.model_services.intervention.client import (
        InterventionClient,
        InterventionSettings,
    )
    from interp_harness.model_services.intervention.server import build_app

    empty = Path(tempfile.mkdtemp(prefix="device-check-saes-"))  # no built SAE is preloaded
    t0 = time.perf_counter()
    app = build_app(model, device=device, dtype=dtype, sae_dir=sae_dir or empty)
    load_s = time.perf_counter() - t0
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    settings = InterventionSettings(url=url, timeout_s=600, retries=0)
    client = InterventionClient(settings)
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("the in-process service did not start within 10 s")
        yield Served(url, client, app, load_s)
    finally:
        client.close()
        server.should_exit = True
        thread.join(30)


def _empty_cuda_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) for _ in range(n)]


def _tops(c: Any) -> list[tuple[int, float]]:
    return [(t.id, t.logprob) for t in c.top]


def _site(layer: int) -> dict[str, Any]:
    return {"layer": layer, "component": "block_output", "base_positions": "last"}


def measure(s: Served, fig: dict[str, Any], args: argparse.Namespace) -> None:
    """Activations read and interchanges at each batch size into `fig` as they are measured (a
    step cut short keeps the figures it has)."""
    import torch

    info = s.client.model()
    dev = torch.device(info.device)
    fig["device"], fig["dtype"] = info.device, info.dtype
    fig["shape"] = {"layers": info.n_layers, "hidden": info.hidden_size, "mlp": info.mlp_width}
    fig["weights"] = WEIGHTS_NOTE
    fig["load_s"] = round(s.load_s, 2)
    on_cuda = dev.type == "cuda"
    if on_cuda:
        fig["weights_gpu_mib"] = round(torch.cuda.memory_allocated(dev) / 2**20)
        torch.cuda.reset_peak_memory_stats(dev)
    mid = info.n_layers // 2
    body = {"component": "mlp_activation", "layers": [mid], "positions": "all", "pooling": "max"}
    xs = texts(args.texts, 0)
    biggest = max(args.batches)
    bases, sources = texts(biggest, 1), texts(biggest, 2)
    pairs = [{"base": b, "sources": [x]} for b, x in zip(bases, sources, strict=True)]
    request = {"sites": [_site(mid)], "top_k": 5}
    # warm-up at the largest shapes: kernels, cuBLAS handles and the allocator settle first
    s.client.activations({**body, "texts": xs[: min(len(xs), 32)]})
    s.client.interchange({**request, "examples": pairs})
    t = time.perf_counter()
    s.client.activations({**body, "texts": xs})
    fig["activations"] = {"texts": len(xs), "texts_per_s": round(len(xs) / _since(t), 2)}
    fig["interchange"] = []
    changed = total = 0
    for b in args.batches:
        reps, t = 0, time.perf_counter()
        while True:
            r = s.client.interchange({**request, "examples": pairs[:b]})
            reps += 1
            if _since(t) >= args.min_seconds or reps >= 50:
                break
        rate = b * reps / _since(t)
        fig["interchange"].append({"batch": b, "requests": reps, "examples_per_s": round(rate, 2)})
        changed += sum(_tops(x.original) != _tops(x.intervened) for x in r.results)
        total += len(r.results)
    fig["changed"] = {"examples": total, "changed": changed}
    # the text itself as its source: the intervention writes what was there, nothing changes
    own = [{"base": b, "sources": [b]} for b in bases[: min(8, biggest)]]
    r = s.client.interchange({**request, "examples": own})
    diff = max(
        abs(a[1] - o[1])
        for x in r.results
        for a, o in zip(_tops(x.intervened), _tops(x.original), strict=True)
    )
    fig["self_interchange_max_diff"] = diff
    if on_cuda:
        fig["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated(dev) / 2**20)
    if changed == 0:
        raise RuntimeError(f"no interchange changed the output ({total} examples)")


def _since(t: float) -> float:
    return max(time.perf_counter() - t, 1e-9)


def model_line(name: str, fig: dict[str, Any]) -> str:
    rates = " | ".join(f"{x['examples_per_s']:g}" for x in fig["interchange"])
    batches = " | ".join(str(x["batch"]) for x in fig["interchange"])
    shape = fig["shape"]
    peak = f"; peak GPU {fig['peak_gpu_mib']} MiB" if "peak_gpu_mib" in fig else ""
    return (
        f"model {name} on {fig['device']}, {fig['dtype']} ({shape['layers']} layers, "
        f"{shape['hidden']} wide; {WEIGHTS_NOTE}): load {fig['load_s']} s; activations "
        f"{fig['activations']['texts_per_s']:g} texts/s; interchange {rates} examples/s at batch "
        f"{batches}; changed {fig['changed']['changed']}/{fig['changed']['examples']}, "
        f"self-interchange max diff {fig['self_interchange_max_diff']:.2g}{peak}"
    )


def model_step(name: str, device: str, dtype: str, args: argparse.Namespace) -> Callable:
    def run(fig: dict[str, Any]) -> str:
        fig["model"] = name
        with service(name, device, dtype) as s:
            measure(s, fig, args)
        return model_line(name, fig)

    return run


# ---- SAEs ---------------------------------------------------------------------------------------
def sae_lens_step(model: str, device: str, dtype: str) -> Callable:
    def run(fig: dict[str, Any]) -> str:
        if importlib.util.find_spec("sae_lens") is None:
            raise Skipped(
                "sae-lens is not installed (the wheelhouse leaves it out: it and what it pulls "
                "do not fit the 64 MiB carried beside the working tree)"
            )
        import torch

        from interp_harness.model_services.intervention import saelens

        folder = Path(tempfile.mkdtemp(prefix="device-check-sae-"))
        with service(model, device, dtype, sae_dir=folder) as s:
            info = s.client.model()
            layer, d_in = info.n_layers // 2, info.hidden_size
            d_sae, k = 4 * d_in, 32
            g = torch.Generator().manual_seed(0)
            w_enc = torch.randn(d_in, d_sae, generator=g) / d_in**0.5
            w_dec = w_enc.T.contiguous()
            t = time.perf_counter()
            # written while the service runs: it finds the new folder by name on first use
            saelens.save_sae(
                folder / "rand",
                w_enc,
                torch.zeros(d_sae),
                w_dec,
                torch.zeros(d_in),
                architecture="topk",
                k=k,
                hook_name=saelens.hook_name_of("block_output", layer),
                model_name=model,
                d_in=d_in,
                d_sae=d_sae,
            )
            fig["write_s"] = round(time.perf_counter() - t, 2)
            xs = texts(16, 3)
            latents = list(range(64))
            req = {"texts": xs, "component": "block_output", "layers": [layer]}
            t = time.perf_counter()
            got = s.client.activations({**req, "sae": "rand", "neurons": latents})
            fig["first_call_s"] = round(time.perf_counter() - t, 2)  # loads the SAE
            t = time.perf_counter()
            got = s.client.activations({**req, "sae": "rand", "neurons": latents})
            fig["texts_per_s"] = round(len(xs) / _since(t), 2)
            _, sae = s.app.state.engine.saes.get("rand")
            fig["sae_device"] = str(sae.W_enc.device)
            fig["model_device"] = info.device
            # the service's own activations, encoded here by sae-lens on the same device
            plain = s.client.activations(req)
            diff, fired = 0.0, 0
            for g_res, p_res in zip(got.results, plain.results, strict=True):
                x = torch.tensor(p_res.layers[0].values, device=sae.W_enc.device)
                want = saelens.encode(sae, x, latents).cpu()
                have = torch.tensor(g_res.layers[0].values)
                diff = max(diff, float((want - have).abs().max()))
                fired += int((have > 0).sum())
            fig["max_diff_vs_sae_lens"] = diff
            fig["latents_fired"] = fired
        if fig["sae_device"].split(":")[0] != fig["model_device"].split(":")[0]:
            raise RuntimeError(f"SAE on {fig['sae_device']}, model on {fig['model_device']}")
        return (
            f"sae-lens: topk SAE {d_in}x{d_sae} (k {k}, random) at layer {layer} of {model} on "
            f"{fig['sae_device']}, {info.dtype}: {fig['texts_per_s']:g} texts/s (first call "
            f"{fig['first_call_s']} s, loads it); max diff vs sae-lens's encode "
            f"{diff:.2g}; {fired} latent values fired"
        )

    return run


def _b64(a: Any) -> dict[str, Any]:
    import numpy as np

    a = np.ascontiguousarray(a, dtype="<f2")
    return {
        "shape": list(a.shape),
        "dtype": "float16",
        "data": base64.b64encode(a.tobytes()).decode(),
    }


def featurizer_step(model: str, device: str, dtype: str, args: argparse.Namespace) -> Callable:
    def run(fig: dict[str, Any]) -> str:
        import numpy as np

        with service(model, device, dtype) as s:
            info = s.client.model()
            n, m = info.hidden_size, min(1024, 4 * info.hidden_size)
            layer = info.n_layers // 2
            rng = np.random.default_rng(0)
            enc = rng.normal(size=(m, n)) / n**0.5
            arrays = {
                "encoder_weight": _b64(enc),
                "encoder_bias": _b64(np.zeros(m)),
                "decoder_weight": _b64(enc.T),
                "decoder_bias": _b64(np.zeros(n)),
            }
            dims = list(range(min(64, m)))
            spec = {"id": "sae-shaped", "kind": "autoencoder", "component": "block_output"}
            s.client.register_featurizer({**spec, "feature_dims": dims, "arrays": arrays})
            b = max(args.batches)
            ex = [
                {"base": x, "sources": [y]} for x, y in zip(texts(b, 4), texts(b, 5), strict=True)
            ]
            site = {**_site(layer), "featurizer": {"id": "sae-shaped"}}
            req = {"examples": ex, "sites": [site], "top_k": 5}
            s.client.interchange(req)  # warm-up
            t = time.perf_counter()
            r = s.client.interchange(req)
            fig["examples_per_s"] = round(b / _since(t), 2)
            fig["changed"] = sum(_tops(x.original) != _tops(x.intervened) for x in r.results)
            fig.update(batch=b, latents=m, swapped=len(dims), device=info.device, dtype=info.dtype)
        if fig["changed"] == 0:
            raise RuntimeError(f"swapping {len(dims)} latents changed none of {b} outputs")
        return (
            f"sae-featurizer: autoencoder featurizer {n}x{m} (random; {len(dims)} latents "
            f"swapped) at layer {layer} of {model} on {info.device}, {info.dtype}: "
            f"{fig['examples_per_s']:g} examples/s at batch {b}; changed {fig['changed']}/{b}"
        )

    return run


# ---- circuits -----------------------------------------------------------------------------------
def _same(a: list[Any], b: list[Any]) -> bool:
    """Two decoded outputs agree: categorical values exactly, numerical ones to 1e-4."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            if abs(x - y) > 1e-4:
                return False
        elif x != y:
            return False
    return True


def _rate(fn: Callable[[], Any], n: int, min_s: float) -> float:
    reps, t = 0, time.perf_counter()
    while True:
        fn()
        reps += 1
        if _since(t) >= min_s or reps >= 50:
            return n * reps / _since(t)


def circuits_step(device: str, weights: Path | None, args: argparse.Namespace) -> Callable:
    """The circuits family's compiled models (CircuitModel, as its runner and scorer run them)
    from the `.npz` weights carried in `weights`, on the device and on the CPU: outputs agree,
    inputs/s, and a zero-ablation changes outputs."""

    def run(fig: dict[str, Any]) -> str:
        try:
            present = importlib.util.find_spec(CIRCUITS_MODEL) is not None
        except ImportError:
            present = False
        if not present:
            raise Skipped("circuits family not landed")
        files = sorted(weights.glob("*.npz"))[:12] if weights and weights.is_dir() else []
        if not files:
            raise Skipped(
                f"no .npz weights in {weights} (bash scripts/device_wheelhouse.sh builds and "
                "copies them)"
            )
        model_mod = importlib.import_module(CIRCUITS_MODEL)
        n = 64
        same = total = changed = 0
        dev_rate = cpu_rate = 0.0
        for path in files:
            on_dev = model_mod.CircuitModel.from_npz(path, device)
            on_cpu = model_mod.CircuitModel.from_npz(path, "cpu")
            xs = on_cpu.random_inputs(n, on_cpu.max_len, seed=0)
            a, b = on_dev.run(xs), on_cpu.run(xs)
            same += sum(_same(x, y) for x, y in zip(a, b, strict=True))
            total += n
            ablated = on_dev.ablate(xs, on_dev.components(), "zero")
            changed += sum(not _same(x, y) for x, y in zip(a, ablated, strict=True))
            dev_rate += _rate(lambda m=on_dev, xs=xs: m.run(xs), n, args.min_seconds / 4)
            cpu_rate += _rate(lambda m=on_cpu, xs=xs: m.run(xs), n, args.min_seconds / 4)
        k = len(files)
        fig.update(models=k, inputs=total, same_as_cpu=same, ablation_changed=changed)
        fig["inputs_per_s"] = round(dev_rate / k, 2)  # mean over the models
        fig["cpu_inputs_per_s"] = round(cpu_rate / k, 2)
        fig["ratio"] = round(dev_rate / cpu_rate, 2)
        fig["device"], fig["weights_dir"] = device, str(weights)
        if same != total:
            raise RuntimeError(
                f"outputs on {device} differ from the CPU's on {total - same} inputs"
            )
        if changed == 0:
            raise RuntimeError("zero-ablating every component changed no output")
        return (
            f"circuits: {k} compiled models (.npz) on {device}, float32: outputs equal the "
            f"CPU's on {same}/{total} inputs; {fig['inputs_per_s']:g} inputs/s at batch {n} "
            f"(CPU {fig['cpu_inputs_per_s']:g}, {fig['ratio']:g}x); zero-ablating all of each "
            f"model's components changed {changed}/{total}"
        )

    return run


# ---- the operator's command -------------------------------------------------------------------
class CliServer:
    """`harness intervention serve ...` in a process of its own, started early so that its
    start overlaps the check's own imports; waited for before anything is timed."""

    def __init__(self, model: str, device: str, dtype: str, out: Path) -> None:
        self.port = free_port()
        self.argv = ["intervention", "serve", "--model", model, "--device", device]
        self.argv += ["--dtype", dtype, "--port", str(self.port)]
        self.home = Path(tempfile.mkdtemp(prefix="device-check-cli-"))
        (self.home / "saes").mkdir()
        self.argv += ["--sae-dir", str(self.home / "saes")]
        self.log = out / "cli_server.log"
        env = {**os.environ, "HARNESS_HOME": str(self.home / "home")}
        env["HARNESS_CACHE_DIR"] = str(self.home / "cache")
        cmd = [sys.executable, "-m", "interp_harness.harness.cli", *self.argv]
        self.t0 = time.monotonic()
        with self.log.open("wb") as f:
            self.proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        self.up_s: float | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    self.up_s = round(time.monotonic() - self.t0, 2)
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        return False

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-1500:]

    def stop(self) -> None:
        stop(self.proc)


def cli_step(cli: CliServer, device: str, dtype: str) -> Callable:
    def run(fig: dict[str, Any]) -> str:
        from interp_harness.model_services.intervention.client import InterventionClient

        fig["command"] = "harness " + " ".join(cli.argv)
        if not cli.wait(60):
            raise RuntimeError(f"not serving (exit {cli.proc.poll()}): {cli.tail()}")
        fig["up_s"] = cli.up_s
        with InterventionClient(cli.url) as c:
            info = c.model()
            fig["device"], fig["dtype"] = info.device, info.dtype
            ex = [
                {"base": x, "sources": [y]} for x, y in zip(texts(8, 6), texts(8, 7), strict=True)
            ]
            t = time.perf_counter()
            r = c.interchange({"examples": ex, "sites": [_site(info.n_layers // 2)], "top_k": 5})
            fig["interchange_s"] = round(_since(t), 3)
            fig["changed"] = sum(_tops(x.original) != _tops(x.intervened) for x in r.results)
        health = httpx.get(cli.url + "/health", timeout=10).json()
        fig["health_peak_gpu_mib"] = health.get("peak_gpu_memory_mib")
        want_dev = device if ":" in device or device == "cpu" else f"{device}:0"
        if info.device not in (device, want_dev) or info.dtype != dtype:
            raise RuntimeError(
                f"asked for {device}, {dtype}; it serves {info.device}, {info.dtype}"
            )
        if fig["changed"] == 0:
            raise RuntimeError("the interchange changed none of 8 outputs")
        peak = fig["health_peak_gpu_mib"]
        return (
            f"cli: `{fig['command']}` up in {cli.up_s} s; serves {info.device}, {info.dtype}; "
            f"interchange of 8 in {fig['interchange_s']} s, changed {fig['changed']}/8"
            + (f"; /health peak GPU {peak:.0f} MiB" if peak is not None else "")
        )

    return run


# ---- machine and ratios -----------------------------------------------------------------------
def machine(args: argparse.Namespace) -> dict[str, Any]:
    import importlib.metadata as md

    import torch

    def version(name: str) -> str | None:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    out: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "transformers": version("transformers"),
        "pyvene": version("pyvene"),
        "cuda_available": torch.cuda.is_available(),
        "date": datetime.now(UTC).date().isoformat(),
    }
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        out["gpu"] = {
            "name": p.name,
            "count": torch.cuda.device_count(),
            "capability": f"{p.major}.{p.minor}",
            "memory_mib": round(p.total_memory / 2**20),
        }
    if args.install_report and Path(args.install_report).is_file():
        out["install"] = json.loads(Path(args.install_report).read_text())
    return out


def machine_line(m: dict[str, Any]) -> str:
    gpu = m.get("gpu")
    card = f"{gpu['name']} ×{gpu['count']} ({gpu['memory_mib']} MiB)" if gpu else "no GPU"
    inst = m.get("install")
    wheels = (
        f"; {len(inst['installed'])} wheels installed ({inst['installed_mib']} MiB), "
        f"{len(inst['kept_machine'])} of the machine's kept"
        if inst
        else ""
    )
    return (
        f"machine: Python {m['python']}, {m['cpus']} CPUs, torch {m['torch']} (CUDA "
        f"{m['torch_cuda']}), transformers {m['transformers']}, pyvene {m['pyvene']}; {card}"
        f"{wheels}"
    )


def ratios(check: Check, fig: dict[str, Any]) -> str:
    """Each device model step's figures over its model's CPU step's."""
    cpu = {s.figures["model"]: s.figures for s in check.steps if _is_model(s, cpu=True)}
    rows, parts = [], []
    for s in check.steps:
        if not _is_model(s, cpu=False):
            continue
        f, base = s.figures, cpu.get(s.figures["model"])
        if base is None or "interchange" not in base:
            parts.append(f"{f['model']} {f['dtype']}: no CPU figures")
            continue
        by_batch = {x["batch"]: x["examples_per_s"] for x in base["interchange"]}
        each = [
            {"batch": x["batch"], "ratio": round(x["examples_per_s"] / by_batch[x["batch"]], 2)}
            for x in f["interchange"]
            if by_batch.get(x["batch"])
        ]
        acts = None
        if "activations" in f and "activations" in base:
            acts = round(f["activations"]["texts_per_s"] / base["activations"]["texts_per_s"], 2)
        rows.append(
            {"model": f["model"], "dtype": f["dtype"], "interchange": each, "activations": acts}
        )
        text = " | ".join(f"{x['ratio']:g}x" for x in each)
        parts.append(
            f"{f['model']} {f['dtype']}: interchange {text} at batch "
            f"{' | '.join(str(x['batch']) for x in each)}, activations {acts}x"
        )
    fig["ratios"] = rows
    if not parts:
        raise Skipped("no device and CPU model figures to compare")
    return f"ratios, {check.args.device} over float32 CPU (same calls): " + "; ".join(parts)


def _is_model(s: Step, cpu: bool) -> bool:
    f = s.figures
    if not s.name.startswith("model ") or "interchange" not in f or "device" not in f:
        return False
    return s.name.endswith("cpu float32 baseline") == cpu


# ---- main ---------------------------------------------------------------------------------------
def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for device_check.json")
    ap.add_argument("--device", default=None, help="default cuda:0; --tiny cpu")
    ap.add_argument("--tiny", action="store_true", help="tiny models and batches (the suite's)")
    ap.add_argument("--models", default=None, help=f"default {GPU_MODELS}; --tiny {TINY_MODELS}")
    ap.add_argument("--dtypes", default="float16,bfloat16")
    ap.add_argument("--batches", default=None, help="default 1,8,64; --tiny 1,4,8")
    ap.add_argument("--texts", type=int, default=None, help="default 256; --tiny 16")
    ap.add_argument("--min-seconds", type=float, default=None, help="per batch size: 1; tiny 0")
    ap.add_argument("--step-timeout", type=float, default=150)
    ap.add_argument("--budget-s", type=float, default=420, help="all steps together")
    ap.add_argument("--no-cpu-baseline", action="store_true")
    ap.add_argument("--skip", default="", help="steps to leave out: sae-lens,cli,...")
    ap.add_argument("--circuits-weights", type=Path, default=Path(".device/circuits"))
    ap.add_argument("--install-report", type=Path, default=None)
    a = ap.parse_args(argv)
    a.models = [m for m in (a.models or (TINY_MODELS if a.tiny else GPU_MODELS)).split(",") if m]
    a.dtypes = [d for d in a.dtypes.split(",") if d]
    a.batches = [int(b) for b in (a.batches or ("1,4,8" if a.tiny else "1,8,64")).split(",")]
    a.texts = a.texts or (16 if a.tiny else 256)
    a.min_seconds = a.min_seconds if a.min_seconds is not None else (0.0 if a.tiny else 1.0)
    a.skip = {s for s in a.skip.split(",") if s}
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    check = Check(args.out, args, time.monotonic() + args.budget_s)
    check.write("running")
    # the check is of a GPU: without one its device steps fail, saying so, rather than time a CPU
    args.device = args.device or ("cpu" if args.tiny else "cuda:0")
    dev, first, dt0 = args.device, args.models[0], args.dtypes[0]
    cli = None if "cli" in args.skip else CliServer(first, dev, dt0, args.out)

    def _machine(fig: dict[str, Any]) -> str:
        check.machine = machine(args)
        fig.update(check.machine)
        return machine_line(check.machine)

    check.step("machine", _machine)
    if cli is not None:  # its start must not overlap any timing
        cli.wait(max(10.0, min(args.step_timeout, check.deadline - time.monotonic() - 60)))
    for name in args.models:
        for dtype in args.dtypes:
            check.step(f"model {name} {dev} {dtype}", model_step(name, dev, dtype, args))
    steps: list[tuple[str, Callable]] = [
        ("sae-lens", sae_lens_step(first, dev, dt0)),
        ("sae-featurizer", featurizer_step(first, dev, dt0, args)),
        ("circuits", circuits_step(dev, args.circuits_weights, args)),
    ]
    if cli is not None:
        steps.append(("cli", cli_step(cli, dev, dt0)))
    for name, fn in steps:
        if name not in args.skip:
            check.step(name, fn)
    if cli is not None:
        cli.stop()
    if not args.no_cpu_baseline:
        for name in args.models:
            check.step(
                f"model {name} cpu float32 baseline", model_step(name, "cpu", "float32", args)
            )
        check.step("ratios", lambda fig: ratios(check, fig))
    failed = [s.name for s in check.steps if s.status == "failed"]
    check.write("complete")
    print(f"result: {args.out / RESULT} ({len(check.steps)} steps, {len(failed)} failed)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
