"""What the episode page and the runs list say about a run's shape (issue 40 item 9): a text
protocol call is titled by the command the agent wrote (its script), the answer shows the parts
it has, and a floor run names its targets' family. The neuron side of the label is in
tests/neurons/test_neuron_rest.py."""

from __future__ import annotations

import re

import httpx


def _answer(page: str) -> str:
    """The page's final-answer section."""
    return page[page.index('id="answer"') : page.index('id="truth"')]


def test_a_numeric_episode_names_its_script_and_shows_domain_and_code(server, filled) -> None:  # type: ignore[no-untyped-def]
    run = filled["numeric"]
    eps = server.api.get(f"/runs/{run['id']}/episodes").json()
    page = httpx.get(f"{server.url}/ui/episodes/{eps[0]['id']}", timeout=60).text
    titles = re.findall(r"Command \d+: <code>(.*?)</code>", page)
    assert titles and set(titles) == {"PYTHON(./temp/function.py …)"}, titles
    answer = _answer(page)
    assert "<dt>Description</dt>" in answer
    assert "<dt>Domain</dt>" in answer and re.search(r"<dt>Code[ <]", answer), answer


def test_the_floor_run_names_its_family(server, filled) -> None:  # type: ignore[no-untyped-def]
    floor = filled["floor"]
    assert floor["family"] == "numeric", floor
    listed = {r["id"]: r for r in server.api.get("/runs").json()}
    assert listed[floor["id"]]["family"] == "numeric"
    page = httpx.get(f"{server.url}/", timeout=60).text
    row = re.search(rf'<tr class="run-row" data-run="{floor["id"]}".*?</tr>', page, re.DOTALL)
    assert row is not None, page[:3000]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.DOTALL)
    assert cells[3] == "numeric", cells  # the Family column
