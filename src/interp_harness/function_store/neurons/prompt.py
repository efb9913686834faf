"""The task prompt of neuron targets (Huang et al. 2023): the same text for every neuron, so
nothing in it names the neuron."""

_NEURONS = (
    "Hi, your job is to interpret a neuron of a language model, implemented in the "
    "./temp/neuron.py script. The script takes texts, runs the model on each and prints every "
    "token of the text followed by the neuron's activation on it in parentheses, then the "
    "largest activation over the text, for example: The(0.00) cat(2.31) sat(0.10) [max 2.31].\n"
    "Run it on several texts at once, each in quotes: "
    'PYTHON(./temp/neuron.py "text one" "text two" ...).\n'
    "Find out on which tokens, words or phrases the neuron activates (a value above 0) and on "
    "which it does not. Test many varied texts before you write a description.\n"
    "Give your description in this form.\n"
    "[DESCRIPTION]: Describe the strings the neuron activates on; quote typical words or "
    'phrases, e.g. fires on "Monday", "Friday" and other names of weekdays.'
)

# prompt family -> template
PROMPTS: dict[str, str] = {"neurons": _NEURONS}
