"""`python -m interp_harness.function_store.service`: serve the targets in HARNESS_SERVICE_TARGETS_DIR."""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from interp_harness.function_store.service.app import create_app
from interp_harness.function_store.service.isolation import become_subreaper, make_undumpable
from interp_harness.function_store.service.settings import ServiceSettings


def main() -> None:
    # Before any target code runs (scripts are its children, of the same uid): no module is
    # imported from the working directory (a writable /tmp), the descriptors stay out of reach
    # through /proc, and a script's leftovers stay descendants that the next script sweeps away.
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", cwd)]
    make_undumpable()
    become_subreaper()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = ServiceSettings()
    app = create_app(settings)
    common = {"log_level": "warning", "access_log": False, "lifespan": "on", "loop": "asyncio"}
    if settings.fd is not None:  # a listening socket the launcher bound where no sandbox reaches
        uvicorn.run(app, fd=settings.fd, **common)
    elif settings.uds:
        if os.path.exists(settings.uds):
            os.unlink(settings.uds)
        uvicorn.run(app, uds=settings.uds, **common)
    else:
        uvicorn.run(app, host=settings.host, port=settings.port, **common)


if __name__ == "__main__":
    main()
