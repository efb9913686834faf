"""Alembic migrations of the store (a package so that installs ship them)."""
