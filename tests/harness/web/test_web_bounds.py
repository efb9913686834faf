"""Long agent messages are served cut, with a link to the full text (issue 27, item 5): an episode
with three 40 MB messages (stored before agent messages were capped) costs the server little
memory however often its pages are viewed, the REST transcript and the page stay small and say
what was cut, and the full text streams from the store in bounded memory."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from support.trust_helpers import HarnessServer

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

MB = 1 << 20
SIZE = 40 * MB  # characters per message, as in the attack
FIGURES = os.environ.get("HARNESS_TEST_RSS_FIGURES")  # a file to append the measured figures to


def _text(k: int) -> str:
    return f"<msg{k}>" + "0123456789abcdef" * (SIZE // 16) + f"</msg{k}>"


def _status(pid: int, field: str) -> int:
    """A /proc/PID/status field in bytes (VmRSS: now, VmHWM: the peak)."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(field)


def _reset_peak(pid: int) -> None:
    """Start VmHWM afresh from the current RSS (Linux >= 4.0; the process is this test's own)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def _fill(db: Path) -> tuple[str, str, str]:
    """A run with one small episode and one whose three assistant messages (and final answer)
    are 40 MB each; returns (run id, small episode id, big episode id)."""
    store = Store(make_engine(f"sqlite:///{db}"))
    spec = RunSpec(agent="scripted-numeric", dataset="find-gen", family="numeric")
    run = store.runs.create(spec, ["find-gen/numeric/f00000", "find-gen/numeric/f00001"])
    row = {"dataset": "find-gen", "family": "numeric", "variant": "clean"}
    store.episodes.ensure(
        run.id,
        [
            {"idx": 0, "target_id": "find-gen/numeric/f00000", **row},
            {"idx": 1, "target_id": "find-gen/numeric/f00001", **row},
        ],
    )
    small, big = store.episodes.of_run(run.id)
    for ep, texts in ((small, ["short answer"]), (big, [_text(k) for k in range(3)])):
        msgs = [{"step": 0, "role": "system", "content": "the task"}]
        for k, t in enumerate(texts):
            msgs.append({"step": 2 * k + 1, "role": "assistant", "content": t})
            msgs.append({"step": 2 * k + 2, "role": "user", "content": "go on"})
        store.episodes.add_messages(ep.id, msgs)
        store.episodes.finish(
            ep.id, run.id, status="completed", end_reason="description", final_answer=texts[-1]
        )
    store.runs.set_status(run.id, "completed")
    store.engine.dispose()
    return run.id, small.id, big.id


@pytest.fixture(scope="module")
def big_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("bounds")
    ids = _fill(home / "harness.db")
    srv = HarnessServer(home).start(timeout=90)
    yield srv, ids
    srv.stop()


@pytest.mark.slow
def test_pages_of_a_40mb_message_episode_stay_small(big_server) -> None:  # type: ignore[no-untyped-def]
    srv, (run_id, small, big) = big_server
    pid = srv.proc.pid
    api = httpx.Client(base_url=srv.url, timeout=300)
    # warm up: every module a page imports is loaded, every cache made
    for url in ("/", f"/ui/runs/{run_id}", f"/ui/episodes/{small}", f"/episodes/{small}"):
        assert api.get(url).status_code == 200, url
    _reset_peak(pid)
    base_rss, base_peak = _status(pid, "VmRSS"), _status(pid, "VmHWM")

    def view(k: int) -> int:
        r = api.get(f"/episodes/{big}" if k % 2 else f"/ui/episodes/{big}")
        assert r.status_code == 200
        return len(r.content)

    with ThreadPoolExecutor(12) as pool:  # twelve anonymous page views at once, as in the attack
        sizes = list(pool.map(view, range(12)))
    peak = _status(pid, "VmHWM") - base_peak
    rss = _status(pid, "VmRSS") - base_rss
    figures = {"peak_growth_mb": round(peak / MB, 1), "rss_growth_mb": round(rss / MB, 1),
               "base_rss_mb": round(base_rss / MB, 1), "largest_response_kb":
               round(max(sizes) / 1024, 1)}  # fmt: skip
    if FIGURES:
        with open(FIGURES, "a") as f:
            f.write(json.dumps({"test": "views", **figures}) + "\n")

    detail = api.get(f"/episodes/{big}").json()
    cut = [m for m in detail["messages"] if m["truncated"]]
    assert len(cut) == 3 and all(m["content_chars"] == len(_text(0)) for m in cut)
    assert all(len(m["content"]) < 100_000 and m["content_url"] for m in cut)
    assert detail["final_answer_truncated"] and detail["final_answer_chars"] == len(_text(2))
    assert max(sizes) < 2 * MB, figures
    html = api.get(f"/ui/episodes/{big}").text
    assert html.count('class="note truncated"') == 4  # three messages and the final answer
    assert cut[0]["content_url"] in html
    assert peak < 200 * MB, f"twelve views of the episode grew the server's peak RSS: {figures}"


@pytest.mark.slow
def test_full_text_streams_in_bounded_memory(big_server) -> None:  # type: ignore[no-untyped-def]
    srv, (_, _, big) = big_server
    pid = srv.proc.pid
    detail = httpx.get(f"{srv.url}/episodes/{big}", timeout=300).json()
    url = next(m for m in detail["messages"] if m["step"] == 3)["content_url"]
    _reset_peak(pid)
    base_peak = _status(pid, "VmHWM")
    expected = _text(1)
    got, n = [], 0
    with httpx.stream("GET", srv.url + url, timeout=300) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        for part in r.iter_bytes():
            n += len(part)
            if not got or n > len(expected) - 64:
                got.append(part)
    assert n == len(expected.encode())
    assert got[0].startswith(b"<msg1>0123") and b"".join(got).endswith(b"cdef</msg1>")
    peak = _status(pid, "VmHWM") - base_peak
    if FIGURES:
        with open(FIGURES, "a") as f:
            f.write(json.dumps({"test": "stream", "peak_growth_mb": round(peak / MB, 1)}) + "\n")
    assert peak < 150 * MB, f"streaming a 40 MB message grew the peak RSS by {peak / MB:.0f} MB"

    # a part of it, and of the final answer
    part = httpx.get(srv.url + url, params={"offset": 6, "limit": 16}, timeout=60)
    assert part.text == "0123456789abcdef"
    tail = httpx.get(srv.url + detail["final_answer_url"], params={"offset": len(_text(2)) - 7})
    assert tail.text == "</msg2>"
    assert httpx.get(f"{srv.url}/episodes/{big}/messages/99/content").status_code == 404
