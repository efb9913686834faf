"""The lab of protocol modes `code` and `code-tools`: one sandboxed Python process per episode
in which the agent's cells run, with the target as Python functions whose every call the episode
meters and records (docs/code-mode.md).

- `kernel.py`: the program inside the sandbox (stdlib only);
- `frames.py`: the channel's messages, as the orchestrator validates them;
- `api.py`: the `target` module written from the benchmark's commands, and a call's value;
- `sandbox.py`, `docker_lab.py`: the lab's backends in the sandbox registry (`lab-bwrap`,
  `lab-docker`: a session, the kernel on its pipes, and the jail that confines it);
- `process.py`: the running kernel, its channel and its hard limits;
- `session.py`: one episode's lab (restarts, a cell's outcome and reply);
- `turns.py`: `LabTurn`, the episode loop's collaborator (metering, recording, answers naming a
  lab function);
- `prompt.py`, `limits.py`: what the prompt says, the operator's limits.
"""
