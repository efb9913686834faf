"""The task prompt of FIND's string functions, in the project's own words (FIND's original
prompt file replaces it when the data directory holds it: interp_harness.harness.episode.prompts)."""

# {DIR2FUNC}: FIND's placeholder, filled in by the harness (as in numeric/prompt.py)
_STRINGS = (
    "Hi, your job is to interpret a function f(x) implemented in the {DIR2FUNC} script. "
    "f(x) takes string inputs.\n"
    "The only thing you can do is call f(x) on an input string by running "
    "PYTHON({DIR2FUNC} string).\n"
    "Describe the function implemented by f(x) by running experiments on it.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} string1 string2 string3 ...).\n"
    "Test a wide range of inputs before you write a description.\n"
    "Aim for a good, simple description of f(x) that explains most of its behaviour; f(x) may "
    "combine several different operations.\n"
    "Give your description of the function in this form.\n"
    "[DESCRIPTION]: Describe in language what the function does.\n"
    "[CODE]: Write python code that approximates the behaviour of the function."
)

# prompt family (as FIND names its prompt files) -> template
PROMPTS: dict[str, str] = {"strings": _STRINGS}
