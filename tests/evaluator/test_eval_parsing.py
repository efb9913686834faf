import pytest

from interp_harness.evaluator.parsing import parse_answer, parse_find_compat, parse_tolerant

MSG = (
    "I ran it.\n[DESCRIPTION]: The function doubles x.\n[DOMAIN]: All reals; no odd interval.\n"
    "[CODE]: \n```python\ndef helper(y):\n    return y\n\ndef f(x):\n    return 2*x\n```\n"
)


def test_find_compat_exact_tokens():
    p = parse_find_compat(MSG)
    assert p.description == "The function doubles x.\n"
    assert p.domain == "All reals; no odd interval.\n"
    assert p.code == "\ndef helper(y):\n    return y\n\ndef f(x):\n    return 2*x\n"
    assert p.func_name == "f"  # after the last "def "


def test_find_compat_needs_colon_and_space():
    msg = "intro [DESCRIPTION]:\nDoubles x. [CODE]:\n```\ndef f(x): return 2*x\n```"
    p = parse_find_compat(msg)
    # no "[DESCRIPTION]: " token: the whole message is description.txt; the judge's cut at
    # "[CODE]:" then drops the code (test below)
    assert p.description == "intro [DESCRIPTION]:\nDoubles x. "
    # code: "[CODE]:" without the space still splits; a bare ``` fence takes the last block
    assert p.code == "\ndef f(x): return 2*x\n"


def test_find_compat_rsplit_takes_first_domain_after_last_description():
    msg = "[DESCRIPTION]: a [DESCRIPTION]: b [DOMAIN]: c [DOMAIN]: d [CODE]: e"
    p = parse_find_compat(msg)
    assert p.description == "b "
    assert p.domain == "d "  # domain.txt: after the *last* [DOMAIN]:
    assert p.code == ""  # no fence: no code


def test_find_compat_python_fence_with_space():
    p = parse_find_compat("[CODE]: ``` python\ndef g(x):\n  return x\n``` trailing ```")
    assert p.code == "\ndef g(x):\n  return x\n"


def test_tolerant_accepts_case_and_missing_colon():
    msg = "[description] Adds one.\n[Domain]\nnothing odd\n[code]\n```py\ndef add(x):\n    return x+1\n```"
    p = parse_tolerant(msg)
    assert p.description == "Adds one."
    assert p.domain == "nothing odd"
    assert p.code == "def add(x):\n    return x+1\n"
    assert p.func_name == "add"


def test_tolerant_unfenced_code_and_last_block():
    p = parse_tolerant("[DESCRIPTION]: d\n[CODE]:\ndef f(x):\n    return x\n")
    assert "def f(x)" in p.code and p.func_name == "f"
    two = "[DESCRIPTION]: d [CODE]: ```python\ndef a(x): return 1\n``` better:\n```python\ndef b(x): return 2\n```"
    q = parse_tolerant(two)
    assert q.func_name == "b"


def test_tolerant_top_level_def_wins_over_nested():
    code = "[CODE]: ```python\ndef f(x):\n    def inner(y):\n        return y\n    return inner(x)\n```"
    assert parse_tolerant(code).func_name == "f"
    assert parse_find_compat(code).func_name == "inner"  # FIND's rule picks the last def


def test_parser_name_recorded():
    assert parse_answer(MSG).parser == "tolerant"
    assert parse_answer(MSG, "find-compat").parser == "find-compat"


# FIND's unit-testing script cuts description.txt at "[CODE]:" (no space needed) before the judge
# sees it (`unit_testing.py`), so code written after "[CODE]:\n" must never reach the judge prompt.
CODE_LEAK = "def secret_impl(x):\n    return x[::-1]"


@pytest.mark.parametrize("tag", ["[CODE]: ", "[CODE]:\n", "[CODE]:"])
@pytest.mark.parametrize("parser", ["find-compat", "tolerant"])
def test_description_is_cut_at_code_tag_with_or_without_space(tag, parser):
    msg = f"[DESCRIPTION]: Reverses the string.\n{tag}```python\n{CODE_LEAK}\n```\n"
    p = parse_answer(msg, parser)
    assert "secret_impl" not in p.description
    assert p.description.strip() == "Reverses the string."
    assert p.func_name == "secret_impl"


def test_find_compat_description_without_description_token_still_cut_at_code():
    # no "[DESCRIPTION]: " token: description.txt is the whole message, then the judge's cut
    msg = "intro [DESCRIPTION]:\nDoubles x. [CODE]:\n```\ndef f(x): return 2*x\n```"
    assert parse_find_compat(msg).description == "intro [DESCRIPTION]:\nDoubles x. "
