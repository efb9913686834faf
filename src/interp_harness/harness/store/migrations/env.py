"""Alembic environment: run with the engine handed over in `config.attributes["engine"]`."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import interp_harness.harness.store.models  # noqa: F401  (registers the tables on SQLModel.metadata)

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # plain `alembic` CLI use: the URL comes from the settings
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store.engine import make_engine

    engine = make_engine(Settings().url, upgrade=False)

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
