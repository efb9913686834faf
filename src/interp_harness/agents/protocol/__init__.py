"""FIND's text protocol, written once for both sides: the agent (and the agent host, which may
import nothing else of ours) and the harness and evaluator. Each part has its writer and its
reader side by side, and a property test checks that what one writes the other reads back
(tests/agents/protocol/test_protocol_roundtrip.py).

- commands (`commands.py`, `find_compat.py`, `lexer.py`): the agent writes
  `PYTHON(./temp/function.py v1 v2 ...)` (`command`, `quote_input`); the harness reads every
  command of a message (`parse_message(text, mode)`, mode `default` or FIND's `find-compat`).
- replies (`reply.py`): the harness writes `Response: Function input - output pairs: (x, y) ...`
  exactly as FIND (`format_reply`, `format_error`); the agent reads the pairs (`parse_pairs`).
- values (`values.py`): outputs are printed as FIND's `str()` (`format_value`) and read back as
  the number FIND's scoring computes with (`parse_number`, `parse_value`).
- the final answer (`answer.py`): `[DESCRIPTION]: ... [DOMAIN]: ... [CODE]: ...` (`answer`) and
  its two readers (`parse_answer(message, "tolerant" | "find-compat")`).
- a whole conversation (`conversation.py`): what the scripted agents re-read each step.

Harness loop:
    parsed = parse_message(text, mode)
    for cmd in parsed.commands: reply = format_reply(await client.call(target_id, cmd.inputs), mode)
    for err in parsed.errors: reply = format_error(err)
"""

from interp_harness.agents.protocol.answer import ParsedAnswer, ParserName, answer, parse_answer
from interp_harness.agents.protocol.commands import (
    DEFAULT_PATH,
    MAX_MESSAGE_CHARS,
    command,
    command_inputs,
    parse_message,
    quote_input,
)
from interp_harness.agents.protocol.conversation import (
    Observation,
    function_path,
    next_chunk,
    numeric_points,
    observations,
    task_prompt,
)
from interp_harness.agents.protocol.models import (
    DESCRIPTION_TAG,
    MODES,
    Command,
    Mode,
    ParsedMessage,
)
from interp_harness.agents.protocol.reply import (
    HEADER,
    PREFIX,
    Output,
    find_line,
    format_error,
    format_pair,
    format_reply,
    parse_pairs,
    split_outputs,
    would_crash_in_find,
)
from interp_harness.agents.protocol.values import (
    UnparseableValue,
    fmt_number,
    format_decimals,
    format_value,
    parse_number,
    parse_value,
)

__all__ = [
    "DEFAULT_PATH",
    "DESCRIPTION_TAG",
    "HEADER",
    "MAX_MESSAGE_CHARS",
    "MODES",
    "PREFIX",
    "Command",
    "Mode",
    "Observation",
    "Output",
    "ParsedAnswer",
    "ParsedMessage",
    "ParserName",
    "UnparseableValue",
    "answer",
    "command",
    "command_inputs",
    "find_line",
    "fmt_number",
    "format_decimals",
    "format_error",
    "format_pair",
    "format_reply",
    "format_value",
    "function_path",
    "next_chunk",
    "numeric_points",
    "observations",
    "parse_answer",
    "parse_message",
    "parse_number",
    "parse_pairs",
    "parse_value",
    "quote_input",
    "split_outputs",
    "task_prompt",
    "would_crash_in_find",
]
