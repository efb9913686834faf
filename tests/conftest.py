import os
from pathlib import Path

# Tests read reference data from ../shared/data unless told otherwise (never copied into the project).
os.environ.setdefault(
    "HARNESS_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")
)
