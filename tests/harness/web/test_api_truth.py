"""With API tokens configured, an episode's score details that carry ground truth (the true
corrupted interval, expected outputs) go only to requests with a token; the rest is public."""

from __future__ import annotations

import json

from support.web_helpers import AUTH

from interp_harness.harness.api.schemas import SAFE_DETAILS


def test_episode_score_details_need_a_token(server, filled) -> None:  # type: ignore[no-untyped-def]
    for family in ("numeric", "strings"):
        ep_id = server.api.get(f"/runs/{filled[family]['id']}/episodes").json()[0]["id"]
        anon = server.api.get(f"/episodes/{ep_id}").json()
        authed = server.api.get(f"/episodes/{ep_id}", headers=AUTH).json()
        assert anon["messages"] == authed["messages"] and anon["calls"] == authed["calls"]
        assert [s["value"] for s in anon["scores"]] == [s["value"] for s in authed["scores"]]
        hidden = {k for s in authed["scores"] for k in s["details"]} - SAFE_DETAILS
        assert hidden, f"{family}: the authorised reader sees no truth-bearing detail"
        for a, b in zip(anon["scores"], authed["scores"], strict=True):
            assert a["details"] == {k: v for k, v in b["details"].items() if k in SAFE_DETAILS}
        shown = json.dumps(anon)
        for key in hidden:
            assert f'"{key}"' not in shown
