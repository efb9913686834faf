"""SAE test cases: the tiny build's options (a few seconds on a shared CPU core) and a hand-made
latent that fires exactly on " Monday" / " Friday", with the right explanation."""

from __future__ import annotations

from interp_harness.evaluator.sae.scorer import Latent
from interp_harness.evaluator.token_activations.testset import TokenActs
from interp_harness.function_store.sae.build import BuildOptions

# small enough for a few seconds on a shared CPU core
TINY = BuildOptions(
    model="llama-tiny-random",
    layer=1,
    d_sae=64,
    k=4,
    tokens=2000,
    steps=60,
    batch_size=128,
    corpora=("python-docs",),
    max_held_out_texts=60,
    n_latents=6,
    n_activating=4,
    n_non_activating=4,
    max_density=0.3,
    device="cpu",
)


def ex(*pairs: tuple[str, float]) -> TokenActs:
    return TokenActs("".join(t for t, _ in pairs), [t for t, _ in pairs], [a for _, a in pairs])


# a latent that fires exactly on " Monday" / " Friday"
ACTIVE = [
    ex(("The", 0), (" meeting", 0), (" is", 0), (" on", 0), (" Monday", 3.0), (".", 0)),
    ex(("See", 0), (" you", 0), (" Friday", 2.0), (" then", 0)),
    ex(("Monday", 1.0), (" again", 0)),
    ex(("By", 0), (" Friday", 0.5), (" noon", 0)),
]
QUIET = [
    ex(("The", 0), (" weather", 0), (" is", 0), (" mild", 0)),
    ex(("Cold", 0), (" weather", 0), (" ahead", 0)),
    ex(("A", 0), (" dog", 0), (" barked", 0)),
    ex(("It", 0), (" rained", 0)),
]
RIGHT = 'fires on "Monday", "Friday"'
LATENT = Latent("sae/m/s/7", RIGHT, ACTIVE, QUIET)
