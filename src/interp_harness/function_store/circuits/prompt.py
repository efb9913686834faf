"""The task prompt of circuits targets: the same text for every target (the `task` command gives
the target's vocabulary, length and shape), ending with the answer's format (answer.py)."""

from interp_harness.function_store.circuits.answer import ANSWER_FORMAT

_CIRCUITS = (
    "Hi, your job is to find the circuit of a small transformer: which of its attention heads "
    "and MLPs compute its output, what each of them does, and what function of its input the "
    "model computes. You query the model through the ./temp/model.py script. Start with "
    "PYTHON(./temp/model.py task): it gives the input vocabulary, the longest input, the number "
    "of layers and heads per layer, the components' names and what the outputs are. The model "
    "reads a sequence of tokens and gives one output per position. Some of its components do "
    "work that does not reach the output you are asked about.\n"
    "Write an input as its tokens separated by commas (a,b,c) or, when every token is one "
    "character, together (abc). Experiments:\n"
    "PYTHON(./temp/model.py abc bca) runs the model and prints each input's outputs;\n"
    "PYTHON(./temp/model.py activations abc bca --component L0H1) prints a component's "
    "activations per input and position (a head's output before its output projection, an "
    "MLP's output; L0H1.pattern is the head's attention over the input positions, L0.resid_mid "
    "and L0.resid_post the residual stream after layer 0's attention and MLP, embed the "
    "embeddings);\n"
    "PYTHON(./temp/model.py ablate abc bca --components L0H1 L1MLP --kind mean) prints the "
    "outputs with those components ablated (--kind zero, mean or resample; mean and resample "
    "take their values from random inputs of the same length, or from --reference inputs, "
    "--seed N draws others);\n"
    "PYTHON(./temp/model.py patch abc --source cba --components L0H1) prints the outputs on abc "
    "with the components' activations taken from cba (one source per base input, of the same "
    "length).\n"
    "Heads are named L{layer}H{head} and MLPs L{layer}MLP, counting from 0.\n" + ANSWER_FORMAT
)

# prompt family -> template
PROMPTS: dict[str, str] = {"circuits": _CIRCUITS}
