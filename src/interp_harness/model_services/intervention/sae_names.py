"""The one rule for SAE names (a served SAE's key, its folder under the cache): letters, digits,
`_`, `.`, `-`, not starting with `.` or `-` (no `..`, nothing a shell or a path reads specially).
Torch-free, so the CLI's option defaults can import it cheaply."""

import re

NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def valid_name(name: str) -> bool:
    return bool(NAME_RE.match(name))
