"""Runs, from request to final status, one job per module.

- `admission`: `admit(spec) -> RunPlan`, the one step that checks and plans a run (the agent
  through the policy, the targets, the floor runs, then pre-flight) for every path that starts
  one (`harness run`, POST /runs, the web form); `create_run` (admit, then store).
- `selection`: the targets a run spec names (SelectionError otherwise).
- `catalogs`: the target catalogs by find-gen seed.
- `plan`: a run's plan (agent class, targets, floor runs), made by admission, stored with the run,
  and read back by whoever executes it.
- `preflight`: the checks that a planned run can work (keys, endpoints, services, the lab).
- `leases`: which process executes a run (owner ids, lease checks).
- `prepare`: a claimed run's in-memory state and its episodes.
- `finish`: a run's final status from its episodes.
- `scheduler`: the loop that claims runs and hands episodes to an executor within limits.
- `views`, `report`: what a run and its episodes look like from outside (API, CLI, web pages).
"""
