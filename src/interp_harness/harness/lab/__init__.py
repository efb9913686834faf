"""The lab of protocol modes `code` and `code-tools`: one sandboxed Python process per episode
in which the agent's cells run, with the target as Python functions whose every call the episode
meters and records (docs/code-mode.md).

- `kernel.py`: the program inside the sandbox (stdlib only);
- `frames.py`: the channel's messages, as the orchestrator validates them;
- `api.py`: the `target` module written from the benchmark's commands, and a call's value;
- `sandbox.py`, `process.py`: the bubblewrap command, the running process and its hard limits;
- `session.py`: one episode's lab (restarts, a cell's outcome and reply);
- `turns.py`: the episode loop's part (metering, recording, answers naming a lab function);
- `prompt.py`, `limits.py`: what the prompt says, the operator's limits.
"""
