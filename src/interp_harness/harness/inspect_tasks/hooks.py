"""Stop what an eval started when its run ends: the sandboxed target services (they start on the
first target call), the ephemeral episode store of protocol "text" and any lab of protocol "code"
a sample's cleanup did not close. A later run of the same
process starts them again; atexit covers a process that ends without Inspect's run end, and
`sweep_stale` (on the next start) what a killed process left behind."""

from __future__ import annotations

from inspect_ai.hooks import Hooks, RunEnd, hooks

from interp_harness.harness.inspect_tasks.lab_tool import LABS
from interp_harness.harness.inspect_tasks.resources import resources
from interp_harness.harness.inspect_tasks.text import EPISODES


@hooks(name="interp_harness_cleanup", description="Stops the interp_harness target services.")
class CleanupHooks(Hooks):
    async def on_run_end(self, data: RunEnd) -> None:
        await LABS.aclose()
        await resources().aclose()
        EPISODES.close()
