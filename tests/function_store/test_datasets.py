"""Dataset registry: local copies, checksums, and fetching from a (real, loopback) HTTP source."""

from __future__ import annotations

import functools
import hashlib
import http.server
import re
import shutil
import socket
import threading
from pathlib import Path

import pytest

from interp_harness.function_store import datasets


def test_shared_copy_verifies():
    status = datasets.verify("find")
    assert status and set(status.values()) == {"ok"}, status


def test_data_path_missing_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with pytest.raises(datasets.DataUnavailable) as e:
        datasets.data_path("find/numeric/data.json")
    msg = str(e.value)
    assert "HARNESS_DATA_DIR" in msg and "harness data fetch find" in msg


def test_checksum_mismatch_detected(tmp_path):
    src = Path(datasets.data_dir())
    for f in datasets.DATASETS["find"].files:
        (tmp_path / f.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / f.path, tmp_path / f.path)
    victim = tmp_path / "find/numeric/func_name_dict.json"
    victim.write_bytes(victim.read_bytes().replace(b"f00991", b"f00992", 1))
    status = datasets.verify("find", tmp_path)
    assert status["find/numeric/func_name_dict.json"] == "checksum mismatch"
    assert sum(v == "ok" for v in status.values()) == len(status) - 1


def _serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _script_like_finds(system: str, llama: str) -> str:
    """A Python source shaped like FIND's collect_interpretations.py (a command table and the two
    prompt literals with `{}` slots for it), rebuilt here from the reference prompt files."""
    row = re.search(r"^(PYTHON\(function\.py\)) - (.*)$", system, re.MULTILINE)
    assert row, "the reference system prompt lists the PYTHON command"
    line = row.group(0) + "\n"

    def template(text: str) -> str:
        return text.replace("{", "{{").replace("}", "}}").replace(line, "{}")

    assert template(llama).count("{}") == 4
    return (
        "import pandas as pd\n"
        f"commandTable = pd.DataFrame({{'GPT Commands': [{row.group(1)!r}], "
        f"'GPT Explanations': [{row.group(2)!r}], 'Raw Translation': ['python {{}}']}})\n\n"
        "def return_sysPrompt(model):\n"
        "    if model in ['llama-2']:\n"
        f"        sysPrompt = {template(llama)!r}\n"
        "    else:\n"
        f"        sysPrompt = {template(system)!r}\n"
        "    return sysPrompt\n"
    )


def test_fetch_downloads_and_verifies(tmp_path, monkeypatch):
    # lay the shared copy out like the official repository and serve it over real HTTP; the
    # system prompts are derived from a script, rebuilt from the reference files (item 7)
    repo = tmp_path / "repo"
    ds = datasets.DATASETS["find"]
    local = Path(datasets.data_dir()) / "find/prompts/interpreter"
    for f in ds.files:
        (repo / f.source).parent.mkdir(parents=True, exist_ok=True)
        if f.extract:
            script = _script_like_finds(
                (local / "system.txt").read_text("utf-8"),
                (local / "system_llama2.txt").read_text("utf-8"),
            )
            (repo / f.source).write_text(script, encoding="utf-8")
        else:
            shutil.copy(Path(datasets.data_dir()) / f.path, repo / f.source)
    server, url = _serve(repo)
    try:
        monkeypatch.setitem(
            datasets.DATASETS, "find", datasets.Dataset(**{**ds.__dict__, "base_url": url})
        )
        dest = datasets.fetch("find", dest=tmp_path / "cache")
    finally:
        server.shutdown()
    for f in ds.files:
        assert hashlib.sha256((dest / f.path).read_bytes()).hexdigest() == f.sha256


def test_fetch_rejects_tampered_source(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    ds = datasets.DATASETS["find"]
    for f in ds.files:
        (repo / f.source).parent.mkdir(parents=True, exist_ok=True)
        (repo / f.source).write_bytes(b"not the real file")
    server, url = _serve(repo)
    try:
        monkeypatch.setitem(
            datasets.DATASETS, "find", datasets.Dataset(**{**ds.__dict__, "base_url": url})
        )
        with pytest.raises(datasets.DataUnavailable, match="checksum mismatch"):
            datasets.fetch("find", dest=tmp_path / "cache")
    finally:
        server.shutdown()
    assert not (tmp_path / "cache" / "find").exists() or not any(
        (tmp_path / "cache").rglob("*.json")
    )


def test_fetch_offline_message(tmp_path, monkeypatch):
    # a closed loopback port stands in for "no network"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ds = datasets.DATASETS["find"]
    monkeypatch.setitem(
        datasets.DATASETS,
        "find",
        datasets.Dataset(**{**ds.__dict__, "base_url": f"http://127.0.0.1:{port}/"}),
    )
    with pytest.raises(datasets.DataUnavailable, match="HARNESS_DATA_DIR"):
        datasets.fetch("find", dest=tmp_path)


def test_unknown_dataset():
    with pytest.raises(KeyError, match="known"):
        datasets.fetch("nope")


def test_neuron_expl_is_the_neuron_explanations_dataset() -> None:
    root = datasets.data_dir()  # HARNESS_DATA_DIR: ../shared/data in tests
    assert datasets.verify("neuron-expl", root) == datasets.verify("neuron-explanations", root)
    assert datasets.verify("neuron-expl", root) == {
        "neuron_explanations/observational_eval_data.json": "ok"
    }
