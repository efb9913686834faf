"""The orchestrator's side of agent hosts: the bubblewrap host process and its requests (`host`),
its network (`net`: the provider forwarder, usage metering, key scrubbing), what an agent class
declares (`info`) and how a host's failures are worded (`errors`)."""
