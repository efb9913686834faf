"""The three renderings of a benchmark's commands agree (agents/protocol/tools.py): a tool call
written as the text command it stands for is read back as the same call, through the harness's
own text parser (`parse_message`), for every registered benchmark's declared commands; an answer
call written as the tagged final message is read back as the same arguments; and the text a
FIND answer call renders is the text FIND's prompt asks for (the writer agents use)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from interp_harness.agents.protocol import answer, command, parse_answer, parse_message, quote_input
from interp_harness.agents.protocol.tools import from_answer, match_words, to_answer, to_words
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.benchmark import benchmarks

SETTINGS = settings(max_examples=60, deadline=None)
WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(" ,()'\"\\"),
    min_size=1,
    max_size=20,
).filter(lambda w: not w.startswith("--") and not w.endswith(".py"))
SPECS = [(b.family, s) for b in benchmarks() for s in b.commands]


def _value(schema: dict) -> st.SearchStrategy:  # type: ignore[type-arg]
    if "anyOf" in schema:
        return st.one_of(*(_value(o) for o in schema["anyOf"]))
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", 0), max_value=10_000)
    if kind == "array":
        return st.lists(_value(schema.get("items", {})), min_size=1, max_size=6)
    return WORD


@st.composite
def call_arguments(draw, spec: ToolSpec) -> dict:  # type: ignore[no-untyped-def,type-arg]
    props = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", []))
    args = {}
    for name, schema in props.items():
        if name in required or draw(st.booleans()):
            args[name] = draw(_value(schema))
    return args


def test_every_benchmark_declares_calls_and_one_answer() -> None:
    for b in benchmarks():
        if not b.commands:
            continue
        kinds = [s.kind for s in b.commands]
        assert kinds.count("answer") == 1 and "call" in kinds, b.family
        for s in b.commands:
            Draft202012Validator.check_schema(s.parameters)


@SETTINGS
@given(data=st.data())
def test_call_written_as_text_reads_back_as_the_same_call(data) -> None:  # type: ignore[no-untyped-def]
    family, spec = data.draw(st.sampled_from([x for x in SPECS if x[1].kind == "call"]))
    commands = next(b.commands for b in benchmarks() if b.family == family)
    args = data.draw(call_arguments(spec))
    words = to_words(spec, args)
    text = command("./temp/function.py", [quote_input(w) for w in words])
    [cmd] = parse_message(text).commands
    assert cmd.inputs == words
    back = match_words(commands, cmd.inputs)
    assert back is not None and back.name == spec.name
    assert back.arguments == args


@SETTINGS
@given(data=st.data())
def test_answer_written_as_text_reads_back(data) -> None:  # type: ignore[no-untyped-def]
    family, spec = data.draw(st.sampled_from([x for x in SPECS if x[1].kind == "answer"]))
    args = data.draw(call_arguments(spec))
    args = {k: v for k, v in args.items() if k != "featurizer"}  # JSON objects: below

    # the reader takes a tag's text up to the next tag: values holding "[" or a fence are
    # outside what it reads back (FIND's own reader cuts there too)
    def tidy(v):  # type: ignore[no-untyped-def]
        if isinstance(v, list) and all(isinstance(x, str) for x in v):  # circuits' components
            return [x.strip() for x in v]
        return v.strip() if isinstance(v, str) else v

    clean = {k: tidy(v) for k, v in args.items()}
    texts = [t for v in clean.values() for t in (v if isinstance(v, list) else [v])]
    items = [t for v in clean.values() if isinstance(v, list) for t in v]
    # a list is written comma-separated: a blank item reads back as none, one with a comma as two
    # (circuits' scorer reads its components by name from the text, not from this list)
    if any(isinstance(t, str) and (not t or "[" in t or "`" in t) for t in texts) or any(
        isinstance(t, str) and "," in t for t in items
    ):
        return
    text = to_answer(spec, clean)
    assert parse_message(text).has_description
    assert from_answer(spec, text) == clean


def test_find_answer_is_the_text_find_asks_for() -> None:
    [numeric] = [b for b in benchmarks() if b.family == "numeric"]
    submit = next(s for s in numeric.commands if s.kind == "answer")
    code = "def f(x):\n    return 2 * x + 1"
    args = {"description": "an affine map", "domain": "all reals", "code": code}
    assert to_answer(submit, args) == answer("an affine map", code, "all reals")
    parsed = parse_answer(to_answer(submit, args), "find-compat")
    assert (parsed.description.strip(), parsed.domain.strip()) == ("an affine map", "all reals")
    assert parsed.code.strip() == code


def test_featurizer_answer_is_json() -> None:
    [ravel] = [b for b in benchmarks() if b.family == "ravel"]
    submit = next(s for s in ravel.commands if s.kind == "answer")
    feat = {"kind": "rotation", "layer": 8, "arrays": {"weight": {"shape": [1, 2]}}}
    text = to_answer(submit, {"description": "a rotation", "featurizer": feat})
    assert text == "[DESCRIPTION]: a rotation\n[FEATURIZER]: " + (
        '{"kind": "rotation", "layer": 8, "arrays": {"weight": {"shape": [1, 2]}}}\n'
    )
    assert from_answer(submit, text)["featurizer"] == feat


def test_words_of_ravel_interchange() -> None:
    [ravel] = [b for b in benchmarks() if b.family == "ravel"]
    inter = next(s for s in ravel.commands if s.name == "interchange")
    args = {"template": "%s is in", "base": "Paris", "source": "Rome", "layer": 8}
    args |= {"neurons": [3, 17]}
    # the runner's own syntax (function_store/ravel/runner.py)
    assert to_words(inter, args) == [
        "interchange",
        "%s is in",
        "Paris",
        "Rome",
        "--layer",
        "8",
        "--neurons",
        "3",
        "17",
    ]
