"""`python -m interp_harness.model_services.backbone --port N [--model M]`: the same server as `harness backbone serve`,
without the CLI's imports (the test suite starts it this way)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from interp_harness.model_services.backbone.omp_spin import limit_omp_spin

limit_omp_spin()  # before the imports below load torch

from interp_harness.model_services.backbone.model import DEFAULT_MODEL  # noqa: E402
from interp_harness.model_services.backbone.server import DEFAULT_MAX_QUEUE, serve  # noqa: E402
from interp_harness.model_services.body_limit import DEFAULT_MAX_BODY_MIB  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m interp_harness.model_services.backbone")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--served-name", default=None)
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--max-model-len", type=int, default=None)
    ap.add_argument("--max-queue", type=int, default=DEFAULT_MAX_QUEUE)
    ap.add_argument("--max-body-mib", type=int, default=DEFAULT_MAX_BODY_MIB)
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    # every option but the model is one of serve()'s keyword arguments, under the same name
    options = vars(a)
    serve(options.pop("model"), **options)


if __name__ == "__main__":
    main()
