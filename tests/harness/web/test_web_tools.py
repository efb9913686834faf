"""Protocol mode `tools` on the episode page: an assistant message's tool calls are tool-call
events (name, arguments as indented JSON), each `tool` message is that tool's result (a failed
one marked), and agent text in tool arguments is escaped, in the server's HTML and in a real
browser (Debian chromium via playwright)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.orch_helpers import Server, server_env
from support.tool_episode import REPLY, XSS, tools_episode
from support.web_helpers import artifacts_dir

LONG = "x" * 30_000


# Module scope, requested before `browser`: asyncio.run must not run while playwright holds a loop.
@pytest.fixture(scope="module")
def tools_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, str]]:
    """The server, the episode of tool_episode.SCRIPT and one whose tool call has 30,000
    characters of arguments."""
    tmp: Path = tmp_path_factory.mktemp("web-tools")
    url = f"sqlite:///{tmp / 'harness.db'}"
    _, ep = asyncio.run(tools_episode(url))
    _, long = asyncio.run(tools_episode(url, [[{"name": "run_python", "arguments": {"c": LONG}}]]))
    srv = Server(server_env(url), tmp / "server.log").start()
    yield srv, ep.id, long.id
    srv.stop()


def test_tool_calls_are_events_in_the_html(tools_server) -> None:  # type: ignore[no-untyped-def]
    srv, ep_id, _ = tools_server
    html = httpx.get(f"{srv.url}/ui/episodes/{ep_id}", timeout=60).text
    assert "<script>window.pwned" not in html  # the agent's markup never reaches the page raw
    # the arguments as indented JSON, escaped (not Jinja's \u003c form: readable as sent)
    args = json.dumps({"code": XSS}, indent=2).replace("<", "&lt;").replace(">", "&gt;")
    assert args.replace('"', "&#34;") in html
    assert 'data-tool-call="t0_0"' in html and 'data-tool-call="t0_1"' in html
    assert 'data-tool-result="t0_1"' in html
    assert html.count('class="turn role-tool') == 2 and html.count("tool-error") == 1


def test_episode_page_shows_tool_events_in_a_browser(tools_server, browser) -> None:  # type: ignore[no-untyped-def]
    srv, ep_id, _ = tools_server
    page = browser.new_page()
    try:
        page.goto(f"{srv.url}/ui/episodes/{ep_id}")
        assert page.evaluate("typeof window.pwned") == "undefined"
        first, second = (
            page.locator(".tool-call[data-tool-call='t0_0']"),
            page.locator(".tool-call[data-tool-call='t0_1']"),
        )
        assert first.locator(".tool-name").inner_text() == "call_function"
        assert json.loads(first.locator("pre.tool-args").inner_text()) == {"inputs": ["0", "1"]}
        # the call that reached the target shows the target call's inputs and outputs
        assert first.locator("table.io tbody tr").count() == 2
        assert second.locator(".tool-name").inner_text() == "run_python"
        assert json.loads(second.locator("pre.tool-args").inner_text()) == {"code": XSS}
        assert "failed" in second.locator("h3").inner_text()
        assert second.locator("table.io").count() == 0  # it never reached the target

        ok = page.locator("li.role-tool[data-tool-result='t0_0']")
        bad = page.locator("li.role-tool[data-tool-result='t0_1']")
        assert "call_function" in ok.locator("summary").inner_text()
        assert ok.locator("pre.content").inner_text() == REPLY
        assert "tool-error" not in (ok.get_attribute("class") or "")
        assert "tool-error" in (bad.get_attribute("class") or "")
        assert "error" in bad.locator("summary .bad").inner_text()
        assert bad.locator("pre.content").inner_text().startswith("Error: unknown tool")
        # the message that submitted: its call is an event with the answer's parts
        submit = page.locator(".tool-call[data-tool-call='t1_0']")
        assert submit.locator(".tool-name").inner_text() == "submit_answer"
        assert json.loads(submit.locator("pre.tool-args").inner_text())["domain"] == "all reals"
        assert submit.locator(".tool-outcome").inner_text() == "answer submitted"
        page.locator("#transcript").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir() / "episode-tools.png"), full_page=True)
    finally:
        page.close()


def test_long_tool_arguments_are_cut_on_the_page(tools_server) -> None:  # type: ignore[no-untyped-def]
    srv, _, ep_id = tools_server
    html = httpx.get(f"{srv.url}/ui/episodes/{ep_id}", timeout=60).text
    assert "x" * 19_000 in html and "x" * 20_001 not in html
    whole = len(json.dumps({"c": LONG}, indent=2))
    assert f"Showing the first 20000 of {whole} characters of the arguments" in html
    # the API serves the call whole
    d = httpx.get(f"{srv.url}/episodes/{ep_id}", timeout=60).json()
    assert d["tool_calls"][0]["arguments"] == {"c": LONG}
