"""Layer sweep on SmolLM2-135M: for 20 (base city, source city) pairs, which layers' block_output
interchange at the last entity token makes "{base} is a city in the country of" answer with the
source city's country. Starts the service itself (real HTTP on loopback) unless `--url` names a
running one; `--pairs` and `--layers` (the first N layers) cut the sweep.

    python benchmarks/intervention_layer_sweep.py [--url http://127.0.0.1:8010] [--pairs 20]
        [--layers N]

The test suite's smoke form (tests/benchmarks): `--url URL --pairs 2 --layers 2`.
"""

from __future__ import annotations

import argparse

from serving import free_port, serve, stop

from interp_harness.model_services.intervention.client import InterventionClient, serve_argv

TEMPLATE = "{} is a city in the country of"
CITIES = [
    "Paris", "Tokyo", "Berlin", "Madrid", "Rome", "Moscow", "Beijing", "Cairo", "London",
    "Toronto", "Sydney", "Mumbai", "Seoul", "Bangkok", "Lisbon", "Athens", "Stockholm",
    "Istanbul", "Mexico City", "Buenos Aires", "Amsterdam", "Vienna",
]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=None)
    ap.add_argument("--port", type=int, default=None, help="for the started server (default: free)")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--layers", type=int, default=None, help="the first N layers (default: all)")
    args = ap.parse_args()
    proc = None
    url = args.url
    if url is None:
        port = args.port or free_port()
        proc = serve([*serve_argv("smollm2"), "--device", "cpu"], port)
        url = f"http://127.0.0.1:{port}"
    try:
        c = InterventionClient(url)
        n_layers = min(c.model().n_layers, args.layers or 10**6)
        prompts = [TEMPLATE.format(city) for city in CITIES]
        answers = {
            city: r.text
            for city, r in zip(
                CITIES, c.generate({"prompts": prompts, "max_new_tokens": 1}).results, strict=True
            )
        }
        print("model answers:", answers)
        # `--pairs` pairs of cities whose answers differ
        pairs = [
            (a, b)
            for i, a in enumerate(CITIES)
            for b in CITIES[i + 1 :] + CITIES[:i]
            if answers[a] != answers[b]
        ][::7][: args.pairs]
        flips = [0] * n_layers
        print(f"{len(pairs)} pairs; per layer: pairs whose answer became the source's answer")
        for layer in range(n_layers):
            sites = [
                {
                    "layer": layer,
                    "component": "block_output",
                    "base_positions": [{"char_span": [len(a) - 1, len(a)]} for a, _ in pairs],
                    "source_positions": [{"char_span": [len(b) - 1, len(b)]} for _, b in pairs],
                }
            ]
            examples = [
                {"base": TEMPLATE.format(a), "sources": [TEMPLATE.format(b)]} for a, b in pairs
            ]
            res = c.interchange({"examples": examples, "sites": sites, "return_original": False})
            flips[layer] = sum(
                r.intervened.text == answers[b]
                for r, (_, b) in zip(res.results, pairs, strict=True)
            )
            print(
                f"layer {layer:2d}: {flips[layer]:2d}/{len(pairs)} " + "#" * flips[layer],
                flush=True,
            )
        print(
            "layers where at least half flip:",
            [i for i, f in enumerate(flips) if f >= len(pairs) / 2],
        )
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
