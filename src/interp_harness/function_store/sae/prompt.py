"""The task prompt of SAE latent targets: the same text for every latent of every SAE, so nothing
in it names the SAE, its layer or the latent."""

_SAE = (
    "Hi, your job is to interpret a feature of a language model (a direction in its hidden "
    "states, learned by a sparse autoencoder), implemented in the ./temp/feature.py script. The "
    "script takes texts, runs the model on each and prints every token of the text followed by "
    "the feature's activation on it in parentheses, then the largest activation over the text, "
    "for example: The(0.00) cat(2.31) sat(0.10) [max 2.31].\n"
    "Run it on several texts at once, each in quotes: "
    'PYTHON(./temp/feature.py "text one" "text two" ...).\n'
    "Find out on which tokens, words or phrases the feature activates (a value above 0) and on "
    "which it does not; most features are sparse and stay at 0 on most tokens. Test many varied "
    "texts before you write a description.\n"
    "Give your description in this form.\n"
    "[DESCRIPTION]: Describe the strings the feature activates on; quote typical words or "
    'phrases, e.g. fires on "Monday", "Friday" and other names of weekdays.'
)

# prompt family -> template
PROMPTS: dict[str, str] = {"sae": _SAE}
