"""The `ravel` dataset: 25 checksum-verified files (the shared copy, and a fetch of data.tgz from
a real loopback HTTP server), the five entity types, and counts RAVEL's README lists."""

from __future__ import annotations

import dataclasses
import functools
import http.server
import io
import tarfile
import threading
from pathlib import Path

import pytest

from interp_harness.function_store import datasets
from interp_harness.function_store.ravel import data


def test_shared_copy_has_25_verified_files():
    status = datasets.verify("ravel")
    assert len(status) == 25
    assert set(status.values()) == {"ok"}, status


def test_fetch_archive_verifies_checksums(tmp_path, monkeypatch):
    src = datasets.data_dir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for f in datasets.DATASETS["ravel"].files:
            tar.add(src / f.path, arcname=f"data/{f.source}")
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "data.tgz").write_bytes(buf.getvalue())
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "www")
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/data.tgz"
        ds = dataclasses.replace(datasets.DATASETS["ravel"], archive_url=url)
        monkeypatch.setitem(datasets.DATASETS, "ravel", ds)
        dest = datasets.fetch("ravel", dest=tmp_path / "cache")
        assert set(datasets.verify("ravel", dest).values()) == {"ok"}
        # a tampered archive is refused
        victim = Path(src / ds.files[0].path).read_bytes().replace(b"Europe", b"Europa", 1)
        buf2 = io.BytesIO()
        with tarfile.open(fileobj=buf2, mode="w:gz") as tar:
            info = tarfile.TarInfo(f"data/{ds.files[0].source}")
            info.size = len(victim)
            tar.addfile(info, io.BytesIO(victim))
        (tmp_path / "www" / "data.tgz").write_bytes(buf2.getvalue())
        with pytest.raises(datasets.DataUnavailable, match="checksum mismatch"):
            datasets.fetch("ravel", dest=tmp_path / "cache2")
    finally:
        server.shutdown()


@pytest.mark.parametrize(
    "etype,n_entities,splits",
    [
        ("city", 3552, (1787, 818, 947)),
        ("nobel_prize_winner", 928, (460, 234, 234)),
        ("occupation", 799, (388, 210, 201)),
        ("physical_object", 563, (276, 150, 137)),
        ("verb", 986, (510, 234, 242)),
    ],
)
def test_entity_types_load_with_spec_counts(etype, n_entities, splits):
    d = data.load(etype)
    assert len(d.attributes) == n_entities
    assert tuple(len(d.entities(s)) for s in ("train", "val", "test")) == splits
    # the prompt split covers exactly the attribute templates
    assert set(d.prompt_split) == {t for ts in d.attribute_prompts.values() for t in ts}


def test_city_facts():
    d = data.load("city")
    assert d.attributes["Paris"]["Country"] == "France"
    assert d.attributes["Paris"]["Timezone"] == "Europe/Paris"
    counts = {a: len(ts) for a, ts in d.attribute_prompts.items()}
    assert counts == {
        "Country": 46, "Continent": 43, "Latitude": 42, "Longitude": 25, "Language": 44,
        "Timezone": 73,
    }  # fmt: skip
    assert [len(d.templates("Country", s)) for s in ("train", "val", "test")] == [22, 11, 13]
    assert (
        len(d.wiki_templates("train"))
        + len(d.wiki_templates("val"))
        + len(d.wiki_templates("test"))
        == 24
    )  # entity-free wiki templates


def test_unknown_entity_type_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown RAVEL entity type"):
        data.load("planet")
