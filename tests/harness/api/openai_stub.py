"""A loopback OpenAI-compatible endpoint that records the JSON body of every request and answers
chat completions with a fixed text and a fixed `usage` (what the provider says it billed)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIStub:
    def __init__(
        self,
        reply: str = "COMMAND: PYTHON(./temp/function.py 1)",
        usage: dict[str, int] | None = None,
        models: tuple[str, ...] = ("cheap-model",),
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append({"method": "GET", "path": self.path, "body": None})
                self._send({"object": "list", "data": [{"id": m} for m in models]})

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
                self._send(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model") if isinstance(body, dict) else None,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": usage or {"prompt_tokens": 1, "completion_tokens": 1},
                    }
                )

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def posts(self) -> list[Any]:
        return [r["body"] for r in self.requests if r["method"] == "POST"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
