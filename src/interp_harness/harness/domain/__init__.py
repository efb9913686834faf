"""The run's domain types, at the bottom of the orchestrator: the run spec and its modes
(`spec`), the catalog cache (`catalogs`), the rendezvous of an external agent's episodes
(`rendezvous`) and how a run names its agent class (`agent_class`). The store, runs, episode,
executors and MCP import them; they import no other part of the orchestrator but `sandbox`,
`policy` and `providers`."""
