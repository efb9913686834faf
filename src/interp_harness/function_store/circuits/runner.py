"""Runner of circuits targets: the compiled model runs in the target service itself, on CPU, as
the numeric family's MLP targets do (a model of a few hundred kilobytes answers in
milliseconds; no model service is involved). Its weights travel inline: the preparer (run by
the orchestrator before a target enters its sandbox) puts the `.npz` bytes into the hidden spec,
so the sandboxed service reads no host file.

When the operator serves the compiled models from the intervention service
(`harness intervention serve --model none`, its URL in HARNESS_CIRCUITS_URL), the experiments
go there instead (`RemoteCircuitModel`, the same interface
and the same replies); the words are parsed here either way.

A call's words are parsed with the same declaration the text protocol renders (`COMMANDS`), so
the words of `PYTHON(./temp/model.py ablate abc --components L0H1 --kind mean)` and of the
tool call `ablate(inputs=["abc"], components=["L0H1"], kind="mean")` are one call. Replies are
JSON; errors about an input are the agent's (the message says what to fix), anything else is a
fixed string: nothing of the weights' path, the truth or the program reaches the agent.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from interp_harness.agents.protocol.tools import match_words
from interp_harness.function_store.circuits.commands import COMMANDS
from interp_harness.function_store.runtime import register_preparer
from interp_harness.model_services.intervention import schemas as S
from interp_harness.sdk import CallOutput, RuntimeContext, Target, register_runner

log = logging.getLogger(__name__)

# the intervention service's bounds are the same (one declaration)
MAX_INPUTS = S.CIRCUIT_MAX_INPUTS  # inputs of one run / ablate / patch call
MAX_READ = S.CIRCUIT_MAX_READ  # inputs of one activations call: [input][position][unit]
MAX_REFERENCE = S.CIRCUIT_MAX_REFERENCE  # reference inputs of one ablation
DECIMALS = 4
UNAVAILABLE = "the model could not be run (its weights are unavailable)"
FAILED = "the experiment failed inside the model"
INLINE = "weights_npz_b64"  # the spec key the preparer fills


class CommandError(ValueError):
    """A malformed call; the message is shown to the agent."""


def _round(v: Any) -> Any:
    if isinstance(v, float | np.floating):
        f = float(v)
        return None if math.isnan(f) else round(f, DECIMALS)
    return v


def _nested(a: np.ndarray) -> Any:
    if a.ndim == 0:
        return _round(a.item())
    return [_nested(x) for x in a]


class CircuitRunner:
    def __init__(self, target: Target, ctx: RuntimeContext | None) -> None:
        self.target = target
        self.spec = target.hidden.spec
        self.url = circuits_url()
        self._model: Any = None
        self._lock = threading.Lock()

    def model(self) -> Any:
        with self._lock:
            if self._model is None and self.url:
                from interp_harness.model_services.intervention.circuits_client import (
                    CircuitsClient,
                    CircuitsSettings,
                    RemoteCircuitModel,
                )

                base = CircuitsSettings.from_env()
                settings = (base or CircuitsSettings(url=self.url)).model_copy(
                    update={"url": self.url}
                )
                client = CircuitsClient(settings)
                try:
                    self._model = RemoteCircuitModel(client, self.target.id)
                except Exception:
                    client.close()
                    raise
            if self._model is None:
                from interp_harness.model_services.intervention.circuit_model import CircuitModel
                from interp_harness.model_services.intervention.compiled import (
                    CompiledTransformer,
                )

                inline = self.spec.get(INLINE)
                if inline:
                    from interp_harness.model_services.intervention.compiled import load_npz

                    arrays, meta = load_npz(io.BytesIO(base64.b64decode(inline)))
                    self._model = CircuitModel(arrays, meta, threads=1)
                else:
                    self._model = CircuitModel.from_npz(self.spec["weights"], threads=1)
                assert isinstance(self._model.net, CompiledTransformer)
            return self._model

    # ---- words -> values ----------------------------------------------------------------------

    def parse_input(self, word: str, m: Any) -> list[Any]:
        from interp_harness.model_services.intervention.circuit_model import parse_word

        return parse_word(word, m.vocab, m.max_len)

    def _inputs(
        self, words: Sequence[str], m: Any, cap: int, what: str = "inputs"
    ) -> list[list[Any]]:
        if not words:
            raise CommandError(f"give at least one of the {what}")
        if len(words) > cap:
            raise CommandError(f"at most {cap} {what} per call (got {len(words)})")
        return [self.parse_input(w, m) for w in words]

    # ---- the call -----------------------------------------------------------------------------

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        from interp_harness.model_services.intervention.circuit_model import CircuitInputError

        words = list(inputs)
        shown = " ".join(words)
        call = match_words(COMMANDS, words)
        if call is None:
            return [
                CallOutput(
                    input=shown,
                    error="could not read the command; see the task prompt for its forms",
                    error_category="agent",
                )
            ]
        try:
            m = self.model()
        except Exception as e:  # noqa: BLE001 - a missing or unreadable file: a fixed message
            log.warning("circuits target %s: %s", self.target.id, e)
            return [CallOutput(input=shown, error=UNAVAILABLE, error_category="infrastructure")]
        args = call.arguments
        try:
            if call.name == "run":
                return self._run(args.get("inputs", []), m)
            return [CallOutput(input=shown, output=json.dumps(self._one(call.name, args, m)))]
        except (CommandError, CircuitInputError) as e:
            return [CallOutput(input=shown, error=str(e), error_category="agent")]
        except Exception as e:  # noqa: BLE001 - a fault of ours: logged, a fixed message shown
            log.exception("circuits target %s: %s", self.target.id, e)
            return [CallOutput(input=shown, error=FAILED, error_category="infrastructure")]

    def _run(self, words: list[str], m: Any) -> list[CallOutput]:
        from interp_harness.model_services.intervention.circuit_model import CircuitInputError

        if len(words) > MAX_INPUTS:
            raise CommandError(f"at most {MAX_INPUTS} inputs per call (got {len(words)})")
        out: list[CallOutput] = []
        parsed: list[tuple[int, list[Any]]] = []
        for i, w in enumerate(words):
            try:
                parsed.append((i, self.parse_input(w, m)))
                out.append(CallOutput(input=w))
            except (CommandError, CircuitInputError) as e:
                out.append(CallOutput(input=w, error=str(e), error_category="agent"))
        if parsed:
            results = m.run([x for _, x in parsed])
            for (i, _), r in zip(parsed, results, strict=True):
                out[i] = CallOutput(input=words[i], output=json.dumps([_round(v) for v in r]))
        return out

    def _one(self, name: str, args: dict[str, Any], m: Any) -> Any:
        if name == "task":
            return self.task(m)
        if name == "activations":
            xs = self._inputs(args.get("inputs", []), m, MAX_READ)
            component = args.get("component")
            if not component:
                raise CommandError("name the component: --component L0H0 (or L0MLP, ...)")
            return _nested(m.activations(xs, str(component)))
        if name == "ablate":
            xs = self._inputs(args.get("inputs", []), m, MAX_INPUTS)
            ref = args.get("reference")
            reference = self._inputs(ref, m, MAX_REFERENCE, "reference inputs") if ref else None
            out = m.ablate(
                xs,
                args.get("components", []),
                kind=args.get("kind") or "zero",
                reference=reference,
                seed=int(args.get("seed") or 0),
            )
            return [[_round(v) for v in r] for r in out]
        if name == "patch":
            base = self._inputs(args.get("base", []), m, MAX_INPUTS, "base inputs")
            source = self._inputs(args.get("source", []), m, MAX_INPUTS, "source inputs")
            if len(base) != len(source):
                raise CommandError("give one source input per base input")
            out = m.patch(base, source, args.get("components", []))
            return [[_round(v) for v in r] for r in out]
        raise CommandError(f"unknown command {name!r}")

    def task(self, m: Any) -> dict[str, Any]:
        """What the agent is told about this target: nothing of the program, only its interface."""
        return {
            "vocabulary": list(m.vocab),
            "max_length": m.max_len,
            "layers": m.n_layers,
            "heads_per_layer": m.n_heads,
            "components": m.all_components(),
            "outputs": "one value per position"
            + (", a number" if m.output_kind == "numerical" else ", from a finite set of values"),
        }


def circuits_url() -> str | None:
    """Where the experiments run: HARNESS_CIRCUITS_URL (operator); None: in this process. Not
    a runtime context's forwarded `backbone_url`: the record declares no model service, so that URL,
    when there is one, is another family's backbone."""
    return os.environ.get("HARNESS_CIRCUITS_URL") or None


@register_runner("circuits")
def _factory(target: Target, ctx: RuntimeContext) -> CircuitRunner:
    runner = CircuitRunner(target, ctx)
    # Loaded here, before the first call's clock starts (the service builds a runner outside
    # it), as the numeric family loads its MLPs: torch's import (2 s on an idle core, several
    # times that on a loaded one) is no experiment's time. A failure is the call's to report.
    with contextlib.suppress(Exception):
        runner.model()
    return runner


@register_preparer("circuits")
def _prepare(target: Target) -> Target:
    """The weights inline (the sandboxed service reads no host file)."""
    spec = dict(target.hidden.spec)
    if spec.get(INLINE) or not spec.get("weights"):
        return target
    spec[INLINE] = base64.b64encode(Path(spec["weights"]).read_bytes()).decode("ascii")
    return target.model_copy(update={"hidden": target.hidden.model_copy(update={"spec": spec})})
