"""Time to the first streamed token vs the whole reply, on the project's backbone server.

    python benchmarks/backbone_stream.py [--tokens 64] [--rounds 3] [--url URL]

Starts the server (SmolLM2-135M, CPU; `--url` names a running one), then for each round sends the
same chat request with the `openai` SDK twice: once without streaming (the whole reply: time to the
body) and once with `stream=True` (time to the first content chunk, and to the end of the stream).
Prints medians. The test suite's smoke form (tests/benchmarks): `--url URL --tokens 4 --rounds 1`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from serving import free_port, serve, stop

PROMPT = [{"role": "user", "content": "Write a short story about a lighthouse keeper."}]


def main() -> None:
    import openai

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=64, help="max_tokens of the reply")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--url", default=None, help="a running backbone server (else one is started)")
    a = ap.parse_args()
    proc = None
    url = a.url.rstrip("/").removesuffix("/v1") if a.url else None
    if url is None:
        port = free_port()
        log = Path(tempfile.mkdtemp(prefix="bench-stream-")) / "backbone.log"
        proc = serve([sys.executable, "-m", "interp_harness.model_services.backbone"], port, log)
        url = f"http://127.0.0.1:{port}"
    try:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused")
        args = {"model": "SmolLM2-135M-Instruct", "messages": PROMPT, "max_tokens": a.tokens}
        client.chat.completions.create(**{**args, "max_tokens": 1})  # warm-up
        whole, first, end, tokens = [], [], [], 0
        for _ in range(a.rounds):
            t0 = time.monotonic()
            r = client.chat.completions.create(**args)
            whole.append(time.monotonic() - t0)
            tokens = r.usage.completion_tokens if r.usage else 0
            t0, seen = time.monotonic(), None
            for ch in client.chat.completions.create(**args, stream=True):
                if seen is None and ch.choices and ch.choices[0].delta.content:
                    seen = time.monotonic() - t0
            first.append(seen or float("nan"))
            end.append(time.monotonic() - t0)
        med = statistics.median
        print(f"{tokens} completion tokens, medians of {a.rounds}:")
        print(f"  whole reply (stream=False):   {med(whole):.2f} s")
        print(f"  first token (stream=True):    {med(first):.2f} s")
        print(f"  end of stream (stream=True):  {med(end):.2f} s")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
