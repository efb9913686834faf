"""The task prompts of FIND's numeric functions, in the project's own words (FIND's original
prompt files replace them when the data directory holds them: interp_harness.harness.episode.prompts)."""

# FIND's prompt files each open with this sentence; {DIR2FUNC} is filled in by the harness
# (FIND's own placeholder, kept so that its prompt files and ours are read the same way).
_NUMERIC = (
    "Hi, your job is to interpret a function f(x) implemented in the {DIR2FUNC} script. "
    "f(x) takes numerical inputs.\n"
    "The only thing you can do is call f(x) on a value of x by running PYTHON({DIR2FUNC} value).{MLP}\n"
    "Describe the function implemented by f(x) by running experiments on it.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} value1 value2 value3 ...).\n"
    "You may call it several times on the same input. Test a wide range of values before you "
    "write a description; you can test values between [-128 and 128].\n"
    "The output may be noisy. Aim for a good, simple description of f(x) that explains most of "
    "its behaviour; f(x) may combine several different operations.\n"
    "Inside the domain there may be an interval where the function behaves differently. If so, "
    "describe that interval.\n"
    "Your description of the function must have three parts.\n"
    "First, [DESCRIPTION]: Describe in language what the function does.\n"
    "[DOMAIN]: What is the domain of the function? Is there an interval where the function "
    "behaves unexpectedly? What are the numeric bounds of that interval, and what happens there?\n"
    "[CODE]: Write python code that approximates the behaviour of the function."
)

# prompt family (as FIND names its prompt files) -> template
PROMPTS: dict[str, str] = {
    "numeric": _NUMERIC.replace("{MLP}", ""),
    "numeric_mlp": _NUMERIC.replace("{MLP}", " f(x) is implemented by an MLP."),
}
