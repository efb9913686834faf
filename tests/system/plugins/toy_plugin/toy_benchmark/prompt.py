"""The toy task prompt (prompt family `toy`)."""

PROMPTS = {
    "toy": (
        "Hi, your job is to find out whether the function implemented by the {DIR2FUNC} script "
        'shouts or whispers. Call it on some text: PYTHON({DIR2FUNC} "Hello There").\n'
        "Reply with [DESCRIPTION]: shout, or [DESCRIPTION]: whisper."
    )
}
