"""The task prompts of FIND's entity and relation modules, in the project's own words (FIND's
original prompt files replace them when the data directory holds them: interp_harness.harness.episode.prompts)."""

# {DIR2FUNC}: FIND's placeholder, filled in by the harness (as in numeric/prompt.py)
_ENTITIES = (
    "Hi, your job is to interpret a function f(x) implemented in the {DIR2FUNC} script. "
    "f(x) takes word inputs and returns a value between 0 and 1; a value closer to 1 "
    "means the word is associated with a particular concept.\n"
    "Your task is to find out which concept that is. f(x) may be selective for more than one "
    "concept; if so, describe every concept it is selective for.\n"
    "Describe the function implemented by f(x) by running experiments on it. Test a diverse, "
    "random selection of words from many categories: common and rare, concrete and abstract.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} word1 word2 word3 ...).\n"
    "Run many tests before you write a description.\n"
    "Aim for a good, simple description of f(x) that explains most of its behaviour.\n"
    "Give your description of the function in this form.\n"
    "[DESCRIPTION]: Describe in language what the function does."
)

_RELATIONS = (
    "Hi, your job is to interpret a function f(x) implemented in the {DIR2FUNC} script. "
    "f(x) takes word inputs and applies a rule to the input word.\n"
    "Describe the rule implemented by f(x) by running experiments on it. Test a diverse "
    "selection of words covering real-world concepts such as places, events and people.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} word1 word2 word3 ...).\n"
    "Run many tests before you write a description.\n"
    "Aim for a good, simple description of f(x) that explains most of its behaviour. For some "
    "inputs the function may not behave the way its rule suggests; if so, describe the part of "
    "the domain where the usual rule does not hold.\n"
    "Your description of the function must have two parts.\n"
    "[DESCRIPTION]: Describe in language the rule the function applies.\n"
    "[DOMAIN]: Is there a part of the domain where the usual rule does not hold? If so, describe "
    "that corruption. If not, describe the domain where the rule applies."
)

# prompt family (as FIND names its prompt files) -> template, one mapping per benchmark unit
ENTITIES_PROMPTS: dict[str, str] = {"neurons_entities": _ENTITIES}
RELATIONS_PROMPTS: dict[str, str] = {"neurons_relations": _RELATIONS}
