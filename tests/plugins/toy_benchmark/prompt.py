"""The toy task prompt (prompt family `toy`)."""

PROMPTS = {
    "toy": (
        "Hi, your job is to find out whether the function implemented by the {DIR} script "
        'shouts or whispers. Call it on some text: PYTHON({DIR} "Hello There").\n'
        "Reply with [DESCRIPTION]: shout, or [DESCRIPTION]: whisper."
    )
}
