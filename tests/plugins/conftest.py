"""The toy benchmark package lives here, outside the tree, with its entry point (a dist-info
folder): putting this folder on the path is what installing it would do."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "orchestrator"))  # orch_helpers (the API server helper)
