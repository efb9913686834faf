"""The REST API's routes, one router per resource. `interp_harness.harness.api.app.create_app` includes them."""

from interp_harness.harness.api.routers import agents, episodes, events, health, runs, targets

ROUTERS = [
    health.router,
    runs.router,
    events.router,
    episodes.router,
    targets.router,
    agents.router,
]
