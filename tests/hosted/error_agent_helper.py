"""The helper module `error_agent_imports` imports (beside it, not inside a package)."""

ANSWER = "[DESCRIPTION]: x\n[DOMAIN]: all\n[CODE]: ```python\ndef f(x):\n    return x\n```"
