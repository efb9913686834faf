"""Registry of reference datasets: official sources, checksums, and where a local copy lives.

Resolution order for the data directory: `HARNESS_DATA_DIR` (a local copy, e.g. `../shared/data` in
tests and CI), else the cache (`HARNESS_CACHE_DIR`, default `~/.cache/interp-harness/data`), which
`harness data fetch NAME` fills from the official sources. Nothing fetched is shipped with the project.

Each benchmark declares its own datasets beside its code (`register`, in the modules its record
names in `Benchmark.reference_data`); this module holds the machinery and names none of them.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import threading
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from interp_harness.function_store.benchmark import benchmarks, load_ref


class DataUnavailable(RuntimeError):
    """A reference file is neither in HARNESS_DATA_DIR nor in the cache."""


@dataclass(frozen=True)
class FileSpec:
    path: str  # relative to the data directory
    source: str  # path in the official repository, or member name inside the archive
    sha256: str  # of the file as stored (after `extract`, when there is one)
    extract: str | None = None  # name in EXTRACTORS: the file is derived from the source's text


# extractor name -> (source bytes -> the file's bytes); a family's data module adds its own
EXTRACTORS: dict[str, Callable[[bytes], bytes]] = {}


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    files: tuple[FileSpec, ...]
    base_url: str | None = None  # files are fetched one by one from base_url + source
    archive_url: str | None = None  # or all from one tar archive (members matched by file name)
    notes: str = ""


class _Registry(MutableMapping[str, Dataset]):
    """The registered datasets. The families' declarations are imported on the first read, not
    at import: a record's module may import this one while the registry loads its records."""

    def __init__(self) -> None:
        self._items: dict[str, Dataset] = {}
        self._lock = threading.RLock()
        self._declared = False
        self._declaring = False

    def declare(self) -> None:
        """Import every registered family's dataset declarations (once)."""
        if self._declared:
            return
        with self._lock:
            if self._declared or self._declaring:
                return
            self._declaring = True
            try:
                for record in benchmarks():
                    for module in record.reference_data:
                        load_ref(module)  # a module path: imported for its declarations
            finally:
                self._declaring = False
            self._declared = True

    def __getitem__(self, name: str) -> Dataset:
        self.declare()
        return self._items[name]

    def __setitem__(self, name: str, ds: Dataset) -> None:
        self._items[name] = ds  # `register` runs while declarations are imported: no declare

    def __delitem__(self, name: str) -> None:
        self.declare()
        del self._items[name]

    def __iter__(self) -> Iterator[str]:
        self.declare()
        return iter(self._items)

    def __len__(self) -> int:
        self.declare()
        return len(self._items)


DATASETS = _Registry()
# Other names a dataset answers to (`register(..., aliases=...)`).
ALIASES: dict[str, str] = {}


def _canonical(name: str) -> str:
    DATASETS.declare()
    return ALIASES.get(name, name)


def register(ds: Dataset, aliases: tuple[str, ...] = ()) -> Dataset:
    DATASETS[ds.name] = ds
    ALIASES.update(dict.fromkeys(aliases, ds.name))
    return ds


def cache_dir() -> Path:
    return (
        Path(os.environ.get("HARNESS_CACHE_DIR", Path.home() / ".cache" / "interp-harness"))
        / "data"
    )


def data_dir() -> Path:
    """The directory reference files are read from."""
    env = os.environ.get("HARNESS_DATA_DIR")
    return Path(env).expanduser().resolve() if env else cache_dir()


def data_path(rel: str) -> Path:
    """Path of one reference file; raises DataUnavailable with what to do when it is missing."""
    p = data_dir() / rel
    if p.exists():
        return p
    owner = next((d.name for d in DATASETS.values() if any(f.path == rel for f in d.files)), None)
    hint = f"run `harness data fetch {owner}`" if owner else "check the path"
    raise DataUnavailable(
        f"reference file {rel!r} not found in {data_dir()}: {hint}, or set HARNESS_DATA_DIR "
        "to a directory that holds a copy (e.g. ../shared/data)"
    )


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(name: str, root: Path | None = None) -> dict[str, str]:
    """Check every file of a dataset: returns {path: "ok" | "missing" | "checksum mismatch"}."""
    root = root or data_dir()
    out = {}
    for f in DATASETS[_canonical(name)].files:
        p = root / f.path
        if not p.exists():
            out[f.path] = "missing"
        else:
            out[f.path] = "ok" if sha256_of(p.read_bytes()) == f.sha256 else "checksum mismatch"
    return out


def fetch(
    name: str,
    *,
    dest: Path | None = None,
    client: httpx.Client | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Download a dataset into the cache (or `dest`), verifying checksums. Returns the directory."""
    name = _canonical(name)
    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}")
    ds = DATASETS[name]
    dest = dest or cache_dir()
    own = client is None
    client = client or httpx.Client(follow_redirects=True, timeout=60)
    try:
        if ds.archive_url:
            blobs = _archive_members(client, ds.archive_url)
            todo = [(f, blobs.get(Path(f.source).name)) for f in ds.files]
        else:
            fetched: dict[str, bytes] = {}  # a source several files derive from is fetched once
            for f in ds.files:
                if f.source not in fetched:
                    fetched[f.source] = _get(client, ds.base_url + f.source)
            todo = [(f, fetched[f.source]) for f in ds.files]
        for f, data in todo:
            if data is None:
                raise DataUnavailable(f"{f.source} not found in {ds.archive_url}")
            if f.extract:
                try:
                    data = EXTRACTORS[f.extract](data)
                except (SyntaxError, ValueError, StopIteration, KeyError, IndexError) as e:
                    raise DataUnavailable(
                        f"could not derive {f.path} from {f.source}: {type(e).__name__}: {e}"
                    ) from e
            if sha256_of(data) != f.sha256:
                raise DataUnavailable(f"checksum mismatch for {f.path} from the official source")
            target = dest / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if progress:
                progress(f.path)
    finally:
        if own:
            client.close()
    return dest


def _get(client: httpx.Client, url: str) -> bytes:
    try:
        r = client.get(url)
        r.raise_for_status()
    except httpx.HTTPError as e:
        raise DataUnavailable(
            f"could not download {url} ({e.__class__.__name__}: {e}). Offline? Set HARNESS_DATA_DIR "
            "to a directory holding a copy of the reference data (e.g. ../shared/data)."
        ) from e
    return r.content


def _archive_members(client: httpx.Client, url: str) -> dict[str, bytes]:
    raw = _get(client, url)
    out = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[Path(m.name).name] = tar.extractfile(m).read()
    return out
