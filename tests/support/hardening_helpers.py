"""A loopback OpenAI-compatible stand-in: `GET /v1/models` lists the given ids, chat completions
answer with a fixed reply. It records every request (method, path)."""

from __future__ import annotations

import json

from support import LoopbackHTTP, QuietHandler, chat_completion, free_port


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    return free_port()


class OpenAIStandIn(LoopbackHTTP):
    def __init__(self, models: tuple[str, ...] = ("stand-in",), reply: str = "Hello.") -> None:
        self.models, self.reply = list(models), reply
        self.requests: list[tuple[str, str]] = []
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append(("GET", self.path))
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": m, "object": "model", "owned_by": "test"} for m in outer.models]
                    self.send_json(200, {"object": "list", "data": data})
                else:
                    self.send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                outer.requests.append(("POST", self.path))
                if body.get("model") not in outer.models:
                    self.send_json(404, {"error": {"message": f"no model {body.get('model')!r}"}})
                    return
                self.send_json(200, chat_completion(outer.reply, body["model"]))

        self.serve(Handler)
