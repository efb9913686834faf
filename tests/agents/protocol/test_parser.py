"""PYTHON(...) parsing. Expected values are written by hand from FIND's
`collect_interpretations.py`."""

import json
import subprocess
import sys

import pytest

from interp_harness.agents.protocol import Command, format_error, format_reply, parse_message
from interp_harness.function_store.models import CallOutput


# ---------------------------------------------------------------- default mode
@pytest.mark.parametrize(
    ("text", "path", "inputs"),
    [
        ("PYTHON(./temp/function.py 1 2 3)", "./temp/function.py", ["1", "2", "3"]),
        ("COMMAND: PYTHON(function.py -5.5 0 1e3)", "function.py", ["-5.5", "0", "1e3"]),
        ('PYTHON("./temp/function.py" 1 2)', "./temp/function.py", ["1", "2"]),
        ("PYTHON(./temp/function.py, 1, 2, 3)", "./temp/function.py", ["1", "2", "3"]),
        ("PYTHON(1 2 3)", None, ["1", "2", "3"]),
        ('PYTHON(function.py "hello world" x)', "function.py", ["hello world", "x"]),
        ("PYTHON(function.py 'it''s' \"a,b\")", "function.py", ["its", "a,b"]),
        ("PYTHON(function.py (1) 2)", "function.py", ["(1)", "2"]),
        ('PYTHON(function.py "a)b" c)', "function.py", ["a)b", "c"]),
        ("PYTHON(function.py)", "function.py", []),
        (
            "PYTHON(function.py $(touch /tmp/x) `id` ; rm -rf /)",
            "function.py",
            ["$(touch", "/tmp/x)", "`id`", ";", "rm", "-rf", "/"],
        ),
        ("PYTHON(function.py #3 a\\ b)", "function.py", ["#3", "a b"]),
    ],
)
def test_default_single_command(text, path, inputs):
    p = parse_message(text)
    assert p.errors == []
    assert p.commands == [Command(raw=text[text.index("PYTHON") :], path=path, inputs=inputs)]
    assert not p.no_command


def test_default_runs_every_command_in_order():
    text = "First PYTHON(function.py 1 2) then\nPYTHON(function.py 3)\nCOMMAND: PYTHON(4)"
    p = parse_message(text)
    assert [c.inputs for c in p.commands] == [["1", "2"], ["3"], ["4"]]


def test_default_ignores_longer_identifiers_and_other_commands():
    p = parse_message("MYPYTHON(1) and NOTE(2) and O(n)")
    assert p.commands == [] and p.errors == [] and p.no_command


@pytest.mark.parametrize("text", ['PYTHON(function.py "abc', "PYTHON(function.py 1 2"])
def test_default_malformed_gives_error(text):
    p = parse_message(text)
    assert p.commands == []
    assert len(p.errors) == 1 and "malformed command" in p.errors[0]
    assert not p.no_command


def test_default_unclosed_quote_inside_balanced_parens():
    # the scanner treats an apostrophe as a quote, so the ')' is inside it: no closing paren
    p = parse_message("PYTHON(function.py don't) more text")
    assert p.commands == [] and len(p.errors) == 1


def test_description_flags():
    p = parse_message("[DESCRIPTION]: f doubles x")
    assert p.has_description and not p.no_command and p.commands == []
    assert parse_message("I think so.").no_command


def test_default_newline_inside_a_command_separates_inputs():
    # default mode: a newline is whitespace like a space; every input of the command is kept
    p = parse_message("PYTHON(function.py 1 2\n3 4)")
    assert p.commands[0].inputs == ["1", "2", "3", "4"]
    p = parse_message('PYTHON(function.py "a\nb" c)')
    assert p.commands[0].inputs == ["a\nb", "c"]


# ---------------------------------------------------------------- find-compat mode
def compat(text):
    return parse_message(text, mode="find-compat")


def test_compat_first_match_only_and_leading_dot_slash_lost():
    p = compat("PYTHON(./temp/function.py 1 2) PYTHON(./temp/function.py 3)")
    # \b[^,]+ cannot start at '.', so the item is 'temp/function.py 1 2', as in FIND
    assert p.commands == [
        Command(raw="PYTHON(./temp/function.py 1 2)", path="temp/function.py", inputs=["1", "2"])
    ]


def test_compat_only_first_comma_item_used():
    p = compat('PYTHON("./temp/function.py", 1, 2)')
    assert p.commands == [
        Command(raw='PYTHON("./temp/function.py", 1, 2)', path="./temp/function.py", inputs=[])
    ]


def test_compat_shell_quoting_of_inputs():
    p = compat('PYTHON(./temp/function.py "hello world" x)')
    assert p.commands[0].inputs == ["hello world", "x"]


def test_compat_unrecognized_stem_before_real_command():
    p = compat("NOTE(this) then PYTHON(./temp/function.py 1)")
    assert p.commands == [] and p.errors == ["Unrecognized command"]
    assert format_error(p.errors[0]) == "Response: Unrecognized command"
    assert not p.no_command


def test_compat_stem_substring_rule_accepts_O():
    # "O" is a substring of "PYTHON(function.py)": FIND ran `python n`, which fails -> empty stdout
    p = compat("complexity O(n)")
    assert p.commands == [] and p.errors == [""]
    assert format_error(p.errors[0]) == "Response: "


def test_compat_nested_parens_must_be_upper():
    p = compat("PYTHON(./temp/function.py (1) 2)")
    assert p.commands == [] and p.errors == [] and p.no_command
    # the outer match fails, so the first match is the inner `X(1)`; 'X' is not in the stem text
    p = compat("PYTHON(./temp/function.py X(1) 2)")
    assert p.commands == [] and p.errors == ["Unrecognized command"]


def test_compat_triple_quote_errors():
    p = compat("PYTHON(./temp/function.py '''a''')")
    assert format_error(p.errors[0]) == (
        "Response: Error parsing multi-line string (''') Use a single line with escaped newlines instead (\")"
    )
    p = compat('PYTHON(./temp/function.py """a""")')
    assert p.errors == [
        'Error parsing multi-line string (""") Use a single line with escaped newlines instead (")'
    ]


def test_compat_single_quote_error():
    p = compat("PYTHON('./temp/function.py' 1)")
    assert format_error(p.errors[0]) == (
        "Response: Error parsing argument in single quotes. Use double quotes around the argument instead"
    )


def test_compat_reset_condition():
    assert compat("Let me think about it.").no_command
    assert not compat("[DESCRIPTION]: doubles").no_command
    assert compat("[DESCRIPTION]: doubles").has_description


def test_compat_shell_operators_are_never_run():
    p = compat("PYTHON(./temp/function.py 1; cat ./temp/function.py)")
    assert p.commands[0].inputs == ["1"]
    p = compat("PYTHON(./temp/function.py 1 $HOME `id` && touch /tmp/pwn)")
    assert p.commands[0].inputs == ["1", "$HOME", "`id`"]
    # a lower-case nested paren defeats FIND's recursive pattern: no command at all
    p = compat("PYTHON(./temp/function.py 1 $(touch /tmp/pwn))")
    assert p.commands == [] and p.no_command


def test_compat_other_script_path_gives_empty_reply():
    for text in ("PYTHON(function.py 1)", "PYTHON(../function.py 1)", "PYTHON(/etc/passwd)"):
        p = compat(text)
        assert p.commands == [] and p.errors == [""], text


# ---------------------------------------------------------------- replies
OUTS = [CallOutput(input="1", output="2.0"), CallOutput(input="-0.5", output="None")]


def test_reply_format_matches_find():
    assert format_reply(OUTS) == "Response: Function input - output pairs: (1, 2.0) (-0.5, None) \n"
    assert format_reply(OUTS, "find-compat") == format_reply(OUTS)


def test_reply_errors_default_vs_compat_crash():
    outs = [CallOutput(input="1", output="2.0"), CallOutput(input="abc", error="not a number")]
    assert (
        format_reply(outs)
        == "Response: Function input - output pairs: (1, 2.0) (abc, Error: not a number) \n"
    )
    assert format_reply(outs, "find-compat") == "Response: "
    assert format_reply(OUTS, "find-compat", compat_crash=True) == "Response: "


def test_reply_fixed_decimals_and_inputs_as_typed():
    outs = [
        CallOutput(input="New York", output="0.98765"),
        CallOutput(input="1e2", output="0.1"),
        CallOutput(input="x", output="not a number"),
        CallOutput(input="y", error="boom"),
    ]
    assert format_reply(outs, decimals=4) == (
        "Response: Function input - output pairs: (New York, 0.9877) (1e2, 0.1000) "
        "(x, not a number) (y, Error: boom) \n"
    )


def test_unknown_mode():
    with pytest.raises(ValueError):
        parse_message("x", mode="bash")


@pytest.mark.parametrize("mode", ["default", "find-compat"])
def test_overlong_message_is_refused_with_a_reason(mode):
    from interp_harness.agents.protocol import MAX_MESSAGE_CHARS

    text = "PYTHON(function.py " + "1 " * MAX_MESSAGE_CHARS + ") [DESCRIPTION]: x"
    p = parse_message(text, mode=mode)
    assert p.commands == [] and "message too long" in p.errors[0] and p.has_description
    # just under the bound, the same kind of message is read
    ok = parse_message("PYTHON(./temp/function.py " + "1 " * 1000 + ")", mode=mode)
    assert len(ok.commands) == 1 and len(ok.commands[0].inputs) == 1000


# FIND ran `python <item>` through /bin/sh: an unquoted newline ends the command, so only the
# inputs before it reached the function (the next line ran as another command, output to stderr).
@pytest.mark.parametrize(
    ("text", "inputs"),
    [
        ("PYTHON(./temp/function.py 1 2\n3 4)", ["1", "2"]),
        ("PYTHON(./temp/function.py 1 2 \n 3)", ["1", "2"]),
        ("PYTHON(./temp/function.py\n1 2)", []),
        ('PYTHON(./temp/function.py "a\nb" c\nd)', ["a\nb", "c"]),
        ("PYTHON(./temp/function.py 1 \\\n2)", ["1", "2"]),  # backslash-newline continues
        ("PYTHON(./temp/function.py a#b #c\nd)", ["a#b"]),  # '#' starts a comment at a word start
    ],
)
def test_compat_newline_ends_the_shell_command(text, inputs):
    p = compat(text)
    assert p.errors == []
    assert p.commands == [Command(raw=text, path="temp/function.py", inputs=inputs)]


def test_compat_empty_and_blank_arguments():
    # PYTHON(): FIND ran `python {}` (no file) -> empty stdout -> "Response: "
    p = compat("PYTHON()")
    assert p.commands == [] and p.errors == [""]
    # PYTHON( ): FIND's str.format raised IndexError and the whole function was retried;
    # we answer with an error reply instead (documented deviation)
    p = compat("PYTHON( )")
    assert p.commands == [] and len(p.errors) == 1 and p.errors[0].startswith("Error")


ARGV_PRINTER = "import json, sys\nprint(json.dumps(sys.argv[1:]))\n"
SHELL_ITEMS = [
    "1 2\n3 4",
    "\n1 2",
    '"a\nb" c\nd',
    "1 \\\n2",
    '"x \\\ny" z',
    "a#b #c\nd",
    "'it''s' \"q\\\"t\" a\\ b",
    "1 2; 3",
    "1 2 && 3",
    "tab\there",
]


@pytest.mark.parametrize("item", SHELL_ITEMS)
def test_compat_shell_words_match_the_real_sh(item, tmp_path):
    """Differential check of the word splitting against /bin/sh itself, which FIND's
    `Popen(..., shell=True)` used (fixed test strings only; nothing from an agent). Redirections
    are left out: there we keep the words and the shell would have sent the output elsewhere."""
    from interp_harness.agents.protocol.find_compat import shell_words

    script = tmp_path / "argv.py"
    script.write_text(ARGV_PRINTER)
    out = subprocess.run(
        ["/bin/sh", "-c", f"{sys.executable} {script} {item}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    ).stdout
    assert shell_words(item) == json.loads(out.splitlines()[0])
