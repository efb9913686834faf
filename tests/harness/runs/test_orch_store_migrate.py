"""Several processes opening one fresh store at once (the main job's four runs, Ray workers):
the schema is created once, and none of them fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import inspect

from interp_harness.harness.store import make_engine

ROOT = Path(__file__).resolve().parents[3]
OPEN = "import sys; from interp_harness.harness.store import make_engine; make_engine(sys.argv[1]).dispose()"


def test_concurrent_first_opens_of_a_fresh_store(db_url: str) -> None:
    url = db_url  # a fresh SQLite file or PostgreSQL database (conftest)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN, url], env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    errors = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in errors] == [0] * 6, [e for rc, e in errors if rc]
    engine = make_engine(url)
    assert {"runs", "episodes"} <= set(inspect(engine).get_table_names())
