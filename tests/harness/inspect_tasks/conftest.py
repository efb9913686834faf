"""Fixtures of the Inspect task tests.

Inspect's `mockllm/model` counts tokens with tiktoken's o200k_base encoding, which tiktoken
downloads from OpenAI's blob store on first use; that host is out of reach here (package
registries only). litellm's wheel ships tiktoken's own cache file of that encoding (litellm
points TIKTOKEN_CACHE_DIR at it for offline use), so the tests take the file from that wheel,
downloaded once from the package index into the machine's cache. tiktoken checks the file's
SHA-256 itself, so a wrong file fails loudly instead of counting wrong.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
LITELLM = "litellm==1.110.2"


@pytest.fixture(scope="session")
def tiktoken_cache() -> Path:
    """A TIKTOKEN_CACHE_DIR holding o200k_base (set in this process's environment too)."""
    cache = Path(
        os.environ.get("TIKTOKEN_CACHE_DIR")
        or Path.home() / ".cache" / "interp-harness" / "tiktoken"
    )
    name = hashlib.sha1(O200K_URL.encode()).hexdigest()  # tiktoken's cache key for the URL
    if not (cache / name).is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", LITELLM, "-d", d],
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert r.returncode == 0, f"pip download {LITELLM} failed: {r.stderr[-2000:]}"
            (wheel,) = Path(d).glob("litellm-*.whl")
            with zipfile.ZipFile(wheel) as z:
                data = z.read(f"litellm/litellm_core_utils/tokenizers/{name}")
        tmp = cache / f"{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(cache / name)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken

    tiktoken.get_encoding("o200k_base")  # verifies the file's hash
    return cache
