"""A loopback OpenAI-compatible endpoint that records the JSON body of every request and answers
chat completions with a fixed text (after the scripted `replies`, one per request, in order) and a
fixed `usage` (what the provider says it billed).

A request whose body holds `QUOTE` is answered as a provider that quotes the credential it got
would answer (in its body and a header; streamed in 5-byte pieces when it asks for a stream)."""

from __future__ import annotations

import json
from typing import Any

from support import LoopbackHTTP, QuietHandler, chat_completion

QUOTE = "quote-my-credential"


class OpenAIStub(LoopbackHTTP):
    def __init__(
        self,
        reply: str = "COMMAND: PYTHON(./temp/function.py 1)",
        usage: dict[str, int] | None = None,
        models: tuple[str, ...] = ("cheap-model",),
        replies: tuple[str, ...] = (),
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        script = list(replies)
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append({"method": "GET", "path": self.path, "body": None})
                self.send_json(200, {"object": "list", "data": [{"id": m} for m in models]})

            def do_DELETE(self) -> None:  # noqa: N802 - recorded: what a provider key could do
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.requests.append({"method": "DELETE", "path": self.path, "body": None})
                self.send_json(200, {"deleted": True})

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
                if QUOTE in json.dumps(body):
                    return self.quote(self.headers.get("authorization") or "", body)
                model = body.get("model") if isinstance(body, dict) else None
                billed = usage or {"prompt_tokens": 1, "completion_tokens": 1}
                text = script.pop(0) if script else reply
                self.send_json(200, chat_completion(text, model, billed))

            def quote(self, cred: str, body: Any) -> None:
                said = f"Incorrect API key provided: {cred}"
                if not (isinstance(body, dict) and body.get("stream")):
                    data = json.dumps({"error": {"message": said, "type": "invalid_api_key"}})
                    self.send_response(401)
                    self.send_header("x-seen-credential", cred)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data.encode())
                    return
                chunk = {
                    "object": "chat.completion.chunk",
                    "choices": [{"delta": {"content": said}}],
                }
                data = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
                self.send_response(200)
                self.send_header("x-seen-credential", cred)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for i in range(0, len(data), 5):  # the credential split across pieces
                    self.wfile.write(data[i : i + 5])
                    self.wfile.flush()
                self.close_connection = True

        self.serve(Handler)

    def posts(self) -> list[Any]:
        return [r["body"] for r in self.requests if r["method"] == "POST"]
