"""A loopback OpenAI-compatible endpoint that records the JSON body of every request and answers
chat completions with a fixed text and a fixed `usage` (what the provider says it billed)."""

from __future__ import annotations

import json
from typing import Any

from support import LoopbackHTTP, QuietHandler, chat_completion


class OpenAIStub(LoopbackHTTP):
    def __init__(
        self,
        reply: str = "COMMAND: PYTHON(./temp/function.py 1)",
        usage: dict[str, int] | None = None,
        models: tuple[str, ...] = ("cheap-model",),
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append({"method": "GET", "path": self.path, "body": None})
                self.send_json(200, {"object": "list", "data": [{"id": m} for m in models]})

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                outer.requests.append(
                    {
                        "method": "POST",
                        "path": self.path,
                        "body": body,
                        "authorization": self.headers.get("authorization"),
                    }
                )
                model = body.get("model") if isinstance(body, dict) else None
                billed = usage or {"prompt_tokens": 1, "completion_tokens": 1}
                self.send_json(200, chat_completion(reply, model, billed))

        self.serve(Handler)

    def posts(self) -> list[Any]:
        return [r["body"] for r in self.requests if r["method"] == "POST"]
