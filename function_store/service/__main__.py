"""`python -m function_store.service`: serve the targets in HARNESS_SERVICE_TARGETS_DIR."""

from __future__ import annotations

import logging
import os

import uvicorn

from function_store.service.app import create_app
from function_store.service.settings import ServiceSettings


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = ServiceSettings()
    app = create_app(settings)
    common = {"log_level": "warning", "access_log": False, "lifespan": "on", "loop": "asyncio"}
    if settings.uds:
        if os.path.exists(settings.uds):
            os.unlink(settings.uds)
        uvicorn.run(app, uds=settings.uds, **common)
    else:
        uvicorn.run(app, host=settings.host, port=settings.port, **common)


if __name__ == "__main__":
    main()
