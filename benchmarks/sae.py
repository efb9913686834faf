"""SAE latent activations: texts/s through the intervention service (real HTTP on loopback, the
encoder applied in the service, as SAE targets read them) vs in-process (the same engine and
SAE called directly), side by side on one machine; prints both and their ratio.

The SAE is a random TopK SAE in SAELens format at the model's middle residual stream (its
weights do not change the cost), unless --sae-dir names built ones (`harness sae build`).

    python benchmarks/sae.py [--model llama-tiny-random|smollm2|...] [--texts 128] [--batch 8]
        [--rounds 3]

The test suite's smoke form (tests/benchmarks): `--texts 4 --batch 2 --rounds 1`.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch
from serving import free_port, serve, stop

from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention import schemas as S
from interp_harness.model_services.intervention.client import InterventionClient, serve_argv
from interp_harness.model_services.intervention.engine import Engine
from interp_harness.model_services.intervention.saelens import SAERegistry, hook_name_of, save_sae

WORDS = "the city river music old new red small bright quiet people market north garden".split()


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) for _ in range(n)]


def random_sae(folder: Path, model: str, d_in: int, layer: int) -> None:
    g = torch.Generator().manual_seed(0)
    d_sae = 8 * d_in
    save_sae(
        folder,
        W_enc=torch.randn(d_in, d_sae, generator=g) / d_in**0.5,
        b_enc=torch.zeros(d_sae),
        W_dec=torch.randn(d_sae, d_in, generator=g) / d_sae**0.5,
        b_dec=torch.zeros(d_in),
        architecture="topk",
        k=32,
        hook_name=hook_name_of("block_output", layer),
        model_name=model,
        d_in=d_in,
        d_sae=d_sae,
    )


def rate(fn, batches: list[list[str]]) -> float:  # type: ignore[no-untyped-def]
    fn(batches[0])  # warm-up
    t = time.perf_counter()
    for b in batches:
        fn(b)
    return sum(map(len, batches)) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="llama-tiny-random")
    ap.add_argument("--texts", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8, help="texts per request (a target call)")
    ap.add_argument("--port", type=int, default=None, help="for the started server (default: free)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    loaded = model_mod.load(args.model, device="cpu")
    layer = loaded.n_layers // 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bench"
        random_sae(folder, args.model, loaded.hidden_size, layer)
        body = {"component": "block_output", "layers": [layer], "sae": "bench", "neurons": [7]}
        xs = texts(args.texts, 0)
        batches = [xs[i : i + args.batch] for i in range(0, len(xs), args.batch)]

        engine = Engine(loaded, saes=SAERegistry({"bench": folder}, device=loaded.device))

        def in_process(b: list[str]) -> object:
            return engine.activations(S.ActivationsRequest(texts=b, **body))

        argv = [*serve_argv(args.model), "--device", "cpu", "--sae", f"bench={folder}"]
        port = args.port or free_port()
        proc = serve(argv, port)
        url = f"http://127.0.0.1:{port}"
        try:
            client = InterventionClient(url)
            # alternated, best of `--rounds` each: load from elsewhere on the machine hits both
            local = served = 0.0
            for _ in range(args.rounds):
                local = max(local, rate(in_process, batches))
                served = max(
                    served, rate(lambda b: client.activations({**body, "texts": b}), batches)
                )
        finally:
            stop(proc, 30)
    print(
        f"{args.model}, SAE at layer {layer} (d_sae {8 * loaded.hidden_size}, top-32), "
        f"{len(xs)} texts, {args.batch} per request, best of {args.rounds} alternated rounds"
    )
    print(f"in-process:  {local:.1f} texts/s")
    print(f"service:     {served:.1f} texts/s")
    print(f"ratio service / in-process: {served / local:.2f}")


if __name__ == "__main__":
    main()
