"""Model services: the processes that host a model for targets and scorers (the LM backbone, an
OpenAI-compatible server; the intervention service over a causal LM), with their clients and wire
schemas. The layer below `function_store`: it imports nothing else of this project."""
