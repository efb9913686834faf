"""FIND's output line (`Function input - output pairs: (x, y) (x, y) `) is written by the protocol
module both sides share (`interp_harness.agents.protocol`); these names stay for the runners and commands that
print it."""

from interp_harness.agents.protocol.reply import HEADER, find_line, format_pair
from interp_harness.agents.protocol.values import format_value

__all__ = ["HEADER", "find_line", "format_pair", "format_value"]
