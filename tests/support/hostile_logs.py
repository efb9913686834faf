"""Hostile Inspect logs for `harness import-inspect` (tests/system/adversarial/test_import.py and
tests/harness/inspect_tasks/test_import.py): a valid log of one of our tasks, and a
decompression bomb built from it (a `.eval` zip whose one sample inflates to a chosen size)."""

from __future__ import annotations

import json
import re
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import inspect_ai.log as inspect_log
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import Score

MODEL = "mockllm/model"
TARGET = "find-gen/numeric/g0"
_HOLE = "\u0000HOLE\u0000"  # where the bomb's filler goes in the sample's JSON


def result(metric: str, value: float | None, **details: Any) -> dict[str, Any]:
    """One ScoreResult as the scorer records it in its Score's metadata."""
    return {"metric": metric, "value": value, "status": "ok", "error_category": None,
            "error": None, "details": details}  # fmt: skip


def sample(
    sid: str = TARGET,
    *,
    epoch: int = 1,
    scores: list[dict[str, Any]] | None = None,
    stats: dict[str, Any] | None = None,
    usage: dict[str, ModelUsage] | None = None,
    input: str = "Describe f.",
    answer: str = "[DESCRIPTION]: doubles",
) -> inspect_log.EvalSample:
    """A scored sample of find-gen/numeric (code_success 1.0 unless `scores`)."""
    scores = scores if scores is not None else [result("code_success", 1.0)]
    ok = {s["metric"]: s["value"] for s in scores if s["value"] is not None}
    meta = {"scores": scores, "stats": stats or {"rounds": 1, "target_calls": 0, "inputs": 0}}
    return inspect_log.EvalSample(
        id=sid,
        epoch=epoch,
        input=input,
        target="",
        metadata={"dataset": "find-gen", "family": "numeric", "variant": "plain"},
        messages=[],
        output=ModelOutput.from_content(model=MODEL, content=answer),
        scores={"interp_harness": Score(value=ok, metadata=meta)},
        model_usage=usage
        if usage is not None
        else {MODEL: ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)},
    )


def eval_log(
    samples: list[inspect_log.EvalSample],
    *,
    model: str = MODEL,
    metadata: dict[str, Any] | None = None,
    epochs: int | None = None,
) -> inspect_log.EvalLog:
    """A finished log of `inspect eval interp_harness/find` with `samples`."""
    return inspect_log.EvalLog(
        eval=inspect_log.EvalSpec(
            created="2026-11-25T10:00:00+00:00",
            task="interp_harness/find",
            task_args={"dataset": "find-gen", "family": "numeric"},
            dataset=inspect_log.EvalDataset(name="find-gen", samples=len(samples)),
            model=model,
            config=inspect_log.EvalConfig(epochs=epochs),
            metadata=metadata,
        ),
        status="success",
        samples=samples,
    )


def write(log: inspect_log.EvalLog, path: Path) -> Path:
    inspect_log.write_eval_log(log, str(path))
    return path


def eval_bomb(path: Path, inflated_bytes: int, *, declared: int | None = None) -> Path:
    """A valid `.eval` of one sample whose input is `inflated_bytes` of one repeated letter,
    deflated: about 1 kB on disk per MB inflated, written without ever holding it whole. With
    `declared`, the zip lies: it says the sample inflates to that many bytes."""
    small = write(eval_log([sample(input=_HOLE)]), path.with_suffix(".small.eval"))
    with zipfile.ZipFile(small) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info)
            if not info.filename.startswith("samples/"):
                out.writestr(info.filename, data)
                continue
            head, tail = data.decode().split(json.dumps(_HOLE)[1:-1], 1)
            chunk = b"A" * (1 << 20)
            with out.open(info.filename, "w", force_zip64=declared is None) as f:
                f.write(head.encode())
                left = max(inflated_bytes - len(data), 0)
                while left > 0:
                    f.write(chunk[: min(left, len(chunk))])
                    left -= len(chunk)
                f.write(tail.encode())
    small.unlink()
    if declared is not None:
        _declare(path, declared)
    return path


def _declare(path: Path, size: int) -> None:
    """Overwrite each sample member's uncompressed size in its local header and its central
    directory entry (32-bit fields: such a bomb is written without zip64)."""
    data = bytearray(path.read_bytes())
    # (signature, offset of the name length, of the name, of the size field)
    for sig, name_len_at, name_at, size_at in (
        (b"PK\x03\x04", 26, 30, 22),
        (b"PK\x01\x02", 28, 46, 24),
    ):
        for m in re.finditer(re.escape(sig), data):
            (n,) = struct.unpack_from("<H", data, m.start() + name_len_at)
            if data[m.start() + name_at : m.start() + name_at + n].startswith(b"samples/"):
                struct.pack_into("<L", data, m.start() + size_at, size)
    path.write_bytes(bytes(data))


def edit_samples(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Rewrite the `.eval` at `path` with `change` applied to each sample's JSON (as a dict;
    Python's JSON writes NaN and big integers as they are, as a hand-edited log may hold)."""
    with zipfile.ZipFile(path) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members:
            if name.startswith("samples/"):
                doc = json.loads(data)
                change(doc)
                data = json.dumps(doc).encode()
            out.writestr(name, data)
    return path
