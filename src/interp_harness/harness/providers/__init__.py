"""LLM providers: the operator's profiles (`profiles`) and the checks on what an agent may
send through the forwarder (`requests`)."""
