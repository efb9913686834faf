"""The task prompt of RAVEL localisation targets: the same text for every target; the
`task` command of the target names the attribute."""

_RAVEL = (
    "Hi, your job is to localise an attribute of entities inside a language model, which you can "
    "query through the ./temp/model.py script. Start with PYTHON(./temp/model.py task): it names "
    "the entity type, the attribute to localise, the other attributes, and train entities and "
    "prompt templates you may use. Then run experiments:\n"
    'PYTHON(./temp/model.py activations "text one" "text two" --layer 8 --top 16) prints, for '
    "each text, the residual-stream dims of that layer with the largest |value| at the text's "
    "last token, as dim(value);\n"
    'PYTHON(./temp/model.py interchange "%s is a city in the country of" Berlin Rome --layer 8 '
    "--neurons 3 17 250 --tokens 3) prints the model's next tokens on the template filled with "
    "the first entity, before and after those dims at the first entity's last token are copied "
    "from the same position of the template filled with the second entity.\n"
    "Find a layer and a small set of dims that carry the attribute: copying them should change "
    "the model's answer about that attribute to the second entity's value, and leave its answers "
    "about the other attributes unchanged. You are scored on entities you have not seen.\n"
    "Give your answer in this form (the [DESCRIPTION] line ends the experiment).\n"
    "[DESCRIPTION]: a sentence on how you found the dims.\n"
    "[LAYER]: 8\n"
    "[NEURONS]: 3, 17, 250\n"
    "Instead of [LAYER] and [NEURONS] you may upload a featurizer of that layer's residual stream: "
    '[FEATURIZER]: {"kind": "rotation", "layer": 8, "arrays": {"weight": {"shape": [k, n], '
    '"dtype": "float32", "data": "<base64 of the little-endian floats>"}}} (k orthonormal rows, '
    "the features that carry the attribute; kinds mask and autoencoder are accepted too)."
)

# prompt family -> template
PROMPTS: dict[str, str] = {"ravel": _RAVEL}
