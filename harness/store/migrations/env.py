"""Alembic environment: run with the engine handed over in `config.attributes["engine"]`."""

from __future__ import annotations

import interp_harness.orchestrator.store.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from alembic import context
from sqlmodel import SQLModel

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # plain `alembic` CLI use: the URL comes from the settings
    from interp_harness.orchestrator.settings import Settings
    from interp_harness.orchestrator.store.engine import make_engine

    engine = make_engine(Settings().url, upgrade=False)

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
