"""Protocol mode `code` on the episode page and in `GET /episodes/{id}`: the lab's cells as a
notebook (code, what each printed, returned and raised, the target calls each made), the API's
`cells` true to the stored rows and to the OpenAPI document, and nothing a cell printed turned
into markup, a script or a link; a cell's figure served as a PNG, only under its episode
(real `harness serve`, real bwrap labs, Debian chromium).
In-process, on SQLite and PostgreSQL: a cell's texts are cut in SQL, by characters, for the
views, and whole in the export."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import httpx
import jsonschema
import notebook_agents as hostile
import pytest
from support import HOSTED
from support.trust_helpers import ROOT
from support.web_helpers import artifacts_dir

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.views import PREVIEW_CHARS, episode_detail
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

COUNTERS = {"rounds": 1, "target_calls": 3, "inputs": 4, "prompt_tokens": 0,
            "completion_tokens": 0, "cost_usd": 0.0, "active_s": 0.0}  # fmt: skip


def _cell(**kw: Any) -> dict[str, Any]:
    row = {"step": 1, "idx": 0, "number": 1, "code": "pass", "status": "ok", "stdout": "",
           "stderr": "", "value": None, "error": None, "traceback": None, "cut": {},
           "first_call": 0, "n_calls": 0, "wall_s": 0.1}  # fmt: skip
    return row | kw


def test_cells_are_cut_in_sql_and_carry_their_calls(db_url: str) -> None:
    store = Store(make_engine(db_url))
    run = store.runs.create(RunSpec(agent="a", dataset="find-gen"), ["t0"])
    store.episodes.ensure(run.id, [{"idx": 0, "target_id": "t0", "dataset": "find-gen",
                                    "family": "numeric", "variant": "clean"}])  # fmt: skip
    [ep] = store.episodes.of_run(run.id)
    store.episodes.add_step(ep.id, {"step": 1, "role": "assistant", "content": "m"}, COUNTERS)
    long_code = "é" * (PREVIEW_CHARS + 5)  # two bytes each: the cut counts characters
    long_tb = "t" * (PREVIEW_CHARS + 1)
    calls = [  # a command (idx 0), then two calls of cell 1; cell 2 made none
        {"step": 1, "idx": i, "inputs": [str(i)], "outputs": [{"input": str(i), "output": "1"}]}
        for i in range(3)
    ]
    cells = [
        _cell(code=long_code, stdout="out\n", cut={"stdout": 7}, first_call=1, n_calls=2),
        _cell(idx=1, number=2, status="error", error="E", traceback=long_tb, first_call=3),
    ]
    reply = {"step": 2, "role": "user", "content": "r"}
    with store.transaction() as tx:
        tx.episodes.add_step(ep.id, reply, COUNTERS, calls=calls)
        tx.lab.add_cells(ep.id, cells)

    shown = episode_detail(store, ep, preview=True).cells
    assert [c.number for c in shown] == [1, 2]
    one, two = shown
    assert one.code == long_code[:PREVIEW_CHARS] and one.shown_chars == {"code": len(long_code)}
    assert (one.stdout, one.cut, one.status) == ("out\n", {"stdout": 7}, "ok")
    assert [(c.step, c.idx, c.inputs) for c in one.calls] == [(1, 1, ["1"]), (1, 2, ["2"])]
    assert two.traceback == long_tb[:PREVIEW_CHARS]
    assert two.shown_chars == {"traceback": len(long_tb)}
    assert (two.error, two.value, two.calls, two.code) == ("E", None, [], "pass")
    whole = episode_detail(store, ep).cells  # the export's
    assert whole[0].code == long_code and whole[1].traceback == long_tb
    assert whole[0].shown_chars == {} and len(whole[0].calls) == 2


# ---- a served app ------------------------------------------------------------------------------
def _wait(url: str, run_id: str, timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = httpx.get(f"{url}/runs/{run_id}", timeout=30).json()
        if d["status"] in ("completed", "failed", "cancelled"):
            return d
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} did not end")


@pytest.fixture(scope="module")
def served(start_module_server: Callable[..., Any]) -> dict[str, Any]:
    """One server; an episode of scripted-numeric-code and one of the hostile cells, ended."""
    path = os.pathsep.join([str(HOSTED), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {"HARNESS_API_ALLOW_DOTTED_AGENTS": "1", "PYTHONPATH": path}  # notebook_agents
    srv = start_module_server(env)
    base = {"dataset": "find-gen", "family": "numeric", "limit": 1, "floor": False,
            "protocol": {"mode": "code"}}  # fmt: skip
    out: dict[str, Any] = {"server": srv}
    for key, agent in (("numeric", "scripted-numeric-code"),
                       ("hostile", "notebook_agents:HostileCellAgent")):  # fmt: skip
        r = srv.post_run({**base, "agent": agent})
        assert r.status_code == 201, r.text
        d = _wait(srv.url, r.json()["id"])
        assert d["status"] == "completed", d
        [ep] = httpx.get(f"{srv.url}/runs/{d['id']}/episodes", timeout=30).json()
        out[key] = httpx.get(f"{srv.url}/episodes/{ep['id']}", timeout=30).json()
    out["store"] = Store(make_engine(f"sqlite:///{srv.home / 'harness.db'}"))
    return out


@pytest.mark.slow
@pytest.mark.usefixtures("needs_bwrap")
def test_the_api_lists_a_code_episodes_cells(served: dict[str, Any]) -> None:
    d, store = served["numeric"], served["store"]
    assert d["status"] == "completed" and d["target_calls"] > 0
    [row] = store.lab.cells(d["id"])
    [cell] = d["cells"]
    assert (cell["number"], cell["step"], cell["status"]) == (1, row.step, "ok")
    assert (cell["code"], cell["stdout"], cell["shown_chars"]) == (row.code, row.stdout, {})
    assert "call_function" in cell["code"] and cell["stdout"]
    # its calls: the stored target calls of its step in its range, all of the episode's here
    stored = [c for c in store.episodes.target_calls(d["id"]) if c.step == row.step]
    assert cell["n_calls"] == d["target_calls"] == len(stored)
    assert [c["inputs"] for c in cell["calls"]] == [c.inputs for c in stored]
    assert sum(len(c["inputs"]) for c in cell["calls"]) == d["inputs"]
    # the response is what the OpenAPI document says
    doc = httpx.get(f"{served['server'].url}/openapi.json", timeout=30).json()
    props = doc["components"]["schemas"]["EpisodeDetail"]["properties"]
    assert "cells" in props
    schema = {"$ref": "#/components/schemas/EpisodeDetail", "components": doc["components"]}
    jsonschema.Draft202012Validator(schema).validate(d)
    jsonschema.Draft202012Validator(schema).validate(served["hostile"])


@pytest.mark.slow
@pytest.mark.usefixtures("needs_bwrap")
def test_the_episode_page_shows_the_notebook(served: dict[str, Any], page: Any) -> None:
    d, url = served["numeric"], served["server"].url
    [cell] = d["cells"]
    page.goto(f"{url}/ui/episodes/{d['id']}")
    nb = page.locator("ol.notebook > li.cell")
    assert nb.count() == 1
    li = page.locator("li.cell[data-cell='1']")
    assert li.locator("pre.cell-code").text_content() == cell["code"]
    assert li.locator("[data-part='stdout'] pre").text_content() == cell["stdout"]
    assert "ok" in li.locator("h3 .status").inner_text()
    # each target call with its inputs and outputs, under the cell
    assert li.locator(".call").count() == cell["n_calls"]
    assert li.locator("table.io tbody tr").count() == d["inputs"]
    # the message that holds the cell links to it; its calls are not listed as commands
    turn = page.locator(f"li.turn[data-step='{cell['step']}']")
    assert turn.locator(".cells-run a[href='#cell-1']").count() == 1
    assert turn.locator(".call").count() == 0
    li.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir() / "episode-notebook.png"), full_page=True)


@pytest.mark.slow
@pytest.mark.usefixtures("needs_bwrap")
def test_what_a_cell_printed_never_becomes_markup(served: dict[str, Any], page: Any) -> None:
    d, url = served["hostile"], served["server"].url
    one, two = d["cells"]
    # the lab kept the hostile texts as they were printed, raised and returned
    assert one["stdout"].startswith("\n" + hostile.STDOUT + "\n")
    assert hostile.STDERR in one["stderr"] and one["value"] == repr(hostile.LINK)
    assert two["status"] == "error" and hostile.RAISED in two["error"]
    assert any(hostile.BAD_INPUT in c["inputs"] for c in one["calls"])

    html = httpx.get(f"{url}/ui/episodes/{d['id']}", timeout=30).text
    for raw in ("<script>window.pwned", "<img src=x", "href='javascript:", 'href="javascript:'):
        assert raw not in html, raw

    page.goto(f"{url}/ui/episodes/{d['id']}")
    assert page.evaluate("typeof window.pwned") == "undefined"
    cell = page.locator("li.cell[data-cell='1']")
    assert cell.locator("pre.cell-code").text_content() == one["code"]
    assert cell.locator("[data-part='stdout'] pre").text_content() == one["stdout"]
    assert cell.locator("[data-part='stderr'] pre").text_content() == one["stderr"]
    assert cell.locator("[data-part='value'] pre").text_content() == one["value"]
    assert hostile.BAD_INPUT in cell.locator("table.io code").all_text_contents()
    # its figure, from the figure route
    [ref] = one["figures"]
    img = cell.locator("figure.cell-figure img")
    assert img.count() == 1 and img.get_attribute("src") == ref["url"]
    img.scroll_into_view_if_needed()
    shown = "() => { const i = document.querySelector('li.cell[data-cell=\"1\"] figure img');"
    page.wait_for_function(shown + " return i.complete && i.naturalWidth > 0; }")
    assert page.evaluate(shown + " return i.naturalWidth; }") == ref["width"]
    err = page.locator("li.cell[data-cell='2'] [data-part='error'] pre")
    assert err.text_content() == two["error"]
    # no element came from a cell: no link to javascript:, no img, only the page's own script
    assert page.locator("a[href^='javascript' i]").count() == 0
    assert page.locator("img[onerror], img[src='x']").count() == 0
    scripts = page.evaluate("[...document.scripts].map(s => [s.src, s.textContent])")
    assert scripts == [[f"{url}/ui/static/live.js", ""]]
    page.screenshot(path=str(artifacts_dir() / "episode-notebook-hostile.png"), full_page=True)


@pytest.mark.slow
@pytest.mark.usefixtures("needs_bwrap")
def test_a_cells_figure_is_served_as_a_png(served: dict[str, Any]) -> None:
    d, store, url = served["hostile"], served["store"], served["server"].url
    [stored] = store.lab.figures(d["id"])
    [ref] = d["cells"][0]["figures"]  # a reference: the bytes are at its url
    assert ref["url"] == f"/episodes/{d['id']}/figures/{stored.id}.png"
    assert (ref["id"], ref["index"], ref["width"], ref["height"]) == (
        stored.id, 0, stored.width, stored.height
    )  # fmt: skip
    assert d["cells"][1]["figures"] == [] and served["numeric"]["cells"][0]["figures"] == []
    r = httpx.get(url + ref["url"], timeout=30)
    assert r.status_code == 200 and r.content == stored.png
    assert r.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert r.headers["content-type"] == "image/png"
    assert r.headers["x-content-type-options"] == "nosniff"
    # only under its own episode; an unknown one is a 404 too
    other = served["numeric"]["id"]
    for path in (f"/episodes/{other}/figures/{stored.id}.png",
                 f"/episodes/{d['id']}/figures/{stored.id + 1000}.png",
                 f"/episodes/nope/figures/{stored.id}.png"):  # fmt: skip
        assert httpx.get(url + path, timeout=30).status_code == 404, path
    doc = httpx.get(f"{url}/openapi.json", timeout=30).json()
    route = doc["paths"]["/episodes/{episode_id}/figures/{figure_id}.png"]["get"]
    assert "image/png" in route["responses"]["200"]["content"]
