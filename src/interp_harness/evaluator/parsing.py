"""The final-answer reader lives in the protocol module both sides share
(`interp_harness.agents.protocol.answer`); this name stays because the scorers, the web views and many tests
import it from here."""

from interp_harness.agents.protocol.answer import (
    ParsedAnswer,
    ParserName,
    func_name_find_compat,
    func_name_tolerant,
    parse_answer,
    parse_find_compat,
    parse_tolerant,
)

__all__ = [
    "ParsedAnswer",
    "ParserName",
    "func_name_find_compat",
    "func_name_tolerant",
    "parse_answer",
    "parse_find_compat",
    "parse_tolerant",
]
