"""Runner of RAVEL localisation targets: a small declarative command set over the intervention
service (no code runs in the model process). The first word of a call names the command:

    task
        the attribute to localise, train entities with their values, a few train templates
    activations "text" ["text" ...] [--layer L] [--top K]
        the residual stream (block output) of layer L at each text's last token: the K dims of
        largest |value|, `dim(value)` (K <= hidden size or `all`; default 16)
    interchange "template with %s" BASE SOURCE --layer L --neurons D [D ...] [--tokens N]
        the model's next N tokens on template % BASE, before and after the dims D of layer L at
        BASE's last token are taken from the same site of template % SOURCE (RAVEL's site)

Numbers may be separated by spaces or commas. Errors are fixed strings: nothing of the
service's messages reaches the agent.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence

from pydantic import BaseModel

from interp_harness.function_store.call_clock import model_request
from interp_harness.function_store.intervention_access import connect
from interp_harness.function_store.ravel.instances import entity_span, fill
from interp_harness.model_services.intervention.client import InterventionClient, InterventionError
from interp_harness.model_services.intervention.schemas import ModelInfo
from interp_harness.sdk import CallOutput, RuntimeContext, Target, register_runner

log = logging.getLogger(__name__)

COMMANDS = ("task", "activations", "interchange")
DEFAULT_TOP = 16
MAX_TEXTS = 16
MAX_TOKENS = 8
UNAVAILABLE = "the model could not be read (intervention service unavailable)"
USAGE = {
    "task": "task",
    "activations": 'activations "text" ["text" ...] [--layer L] [--top K]',
    "interchange": 'interchange "template with %s" BASE SOURCE --layer L --neurons D D ... '
    "[--tokens N]",
}


class CommandError(ValueError):
    """A malformed command; the message is shown to the agent."""


class Parsed(BaseModel):
    command: str
    args: list[str]
    layer: int | None = None
    top: int = DEFAULT_TOP
    neurons: list[int] = []
    tokens: int = 3


def _ints(words: list[str]) -> list[int]:
    out = []
    for w in words:
        for part in w.split(","):
            if part.strip():
                try:
                    out.append(int(part))
                except ValueError:
                    raise CommandError(f"not an integer: {part!r}") from None
    return out


def parse(words: Sequence[str]) -> Parsed:
    """`[command, positional..., --flag value...]`; flag values run to the next `--flag`."""
    if not words or words[0] not in COMMANDS:
        raise CommandError(f"the first word must be one of {', '.join(COMMANDS)}")
    cmd, rest = words[0], list(words[1:])
    args: list[str] = []
    flags: dict[str, list[str]] = {}
    current: list[str] | None = None
    for w in rest:
        if w.startswith("--"):
            name = w[2:]
            if name not in ("layer", "top", "neurons", "tokens"):
                raise CommandError(f"unknown option {w}; usage: {USAGE[cmd]}")
            current = flags.setdefault(name, [])
        elif current is not None:
            current.append(w)
        else:
            args.append(w)
    p = Parsed(command=cmd, args=args)
    if flags.get("top") == ["all"]:
        flags.pop("top")
        p.top = 0  # every dim
    for name in ("layer", "top", "tokens"):
        if name in flags:
            vals = _ints(flags[name])
            if len(vals) != 1:
                raise CommandError(f"--{name} takes one integer; usage: {USAGE[cmd]}")
            setattr(p, name, vals[0])
    p.neurons = _ints(flags.get("neurons", []))
    return p


class RavelRunner:
    def __init__(self, target: Target, ctx: RuntimeContext | None) -> None:
        self.spec = target.hidden.spec
        self.model: str = self.spec["model"]
        self.ctx = ctx
        self._conn: tuple[InterventionClient, ModelInfo] | None = None
        self._lock = threading.Lock()

    def _connect(self) -> tuple[InterventionClient, ModelInfo]:
        """Connected and checked once; the model's shape is read then, not on every call."""
        with self._lock:
            if self._conn is None:
                self._conn = connect(self.model, self.ctx)
            return self._conn

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        words = list(inputs)
        shown = " ".join(words)
        try:
            p = parse(words)
            if p.command == "task":
                return [CallOutput(input="task", output=self._task())]
            client, info = self._connect()
            if p.layer is None or not 0 <= p.layer < info.n_layers:
                raise CommandError(f"--layer must be in 0..{info.n_layers - 1}")
            if p.command == "activations":
                return self._activations(client, p, info.hidden_size)
            return [CallOutput(input=shown, output=self._interchange(client, p, info.hidden_size))]
        except CommandError as e:
            return [CallOutput(input=shown, error=str(e), error_category="agent")]
        except InterventionError as e:
            log.warning("ravel target %s: %s", self.spec.get("attribute"), e)
            return [CallOutput(input=shown, error=UNAVAILABLE, error_category="infrastructure")]

    def _task(self) -> str:
        """Compact JSON (the scripted agent parses it; a model reads it as easily)."""
        return json.dumps(self.spec["task"], ensure_ascii=False)

    def _activations(self, client: InterventionClient, p: Parsed, width: int) -> list[CallOutput]:
        texts = p.args
        if not texts or len(texts) > MAX_TEXTS or any(not t.strip() for t in texts):
            raise CommandError(
                f"give 1 to {MAX_TEXTS} non-empty texts; usage: {USAGE['activations']}"
            )
        if not 0 <= p.top <= width:
            raise CommandError(f"--top must be in 1..{width} or all")
        with model_request() as report:  # its queue wait is not the target's time
            reply = client.activations(
                {
                    "texts": texts,
                    "component": "block_output",
                    "layers": [p.layer],
                    "positions": "last",
                }
            )
            report(reply.queue_s)
        res = reply.results
        out = []
        for text, r in zip(texts, res, strict=True):
            vec = r.layers[0].values[0]
            top = sorted(range(len(vec)), key=lambda i: (-abs(vec[i]), i))[: p.top or None]
            dims = " ".join(f"{i}({vec[i]:+.2f})" for i in top)
            out.append(
                CallOutput(input=text, output=f"layer {p.layer} token {r.tokens[-1]!r}: {dims}")
            )
        return out

    def _interchange(self, client: InterventionClient, p: Parsed, width: int) -> str:
        if len(p.args) != 3 or p.args[0].count("%s") != 1:
            raise CommandError(f"usage: {USAGE['interchange']} (the template has one %s)")
        template, base, source = p.args
        if not p.neurons or any(not 0 <= d < width for d in p.neurons):
            raise CommandError(f"--neurons: one or more dims in 0..{width - 1}")
        if not 1 <= p.tokens <= MAX_TOKENS:
            raise CommandError(f"--tokens must be in 1..{MAX_TOKENS}")
        site = {
            "layer": p.layer,
            "component": "block_output",
            "base_positions": {"char_span": list(entity_span(template, base))},
            "source_positions": {"char_span": list(entity_span(template, source))},
            "neurons": sorted(set(p.neurons)),
        }
        req = {
            "examples": [{"base": fill(template, base), "sources": [fill(template, source)]}],
            "sites": [site],
            "max_new_tokens": p.tokens,
        }
        with model_request() as report:
            swapped = client.interchange(req)
            report(swapped.queue_s)
        r = swapped.results[0]
        before = r.original.text if r.original else ""
        return f"before {before!r} after {r.intervened.text!r}"


@register_runner("ravel")
def _factory(target: Target, ctx: RuntimeContext) -> RavelRunner:
    return RavelRunner(target, ctx)
