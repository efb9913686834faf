"""Runs, from request to final status, one job per module.

- `selection`: the agent class and the targets a run spec names (SelectionError otherwise).
- `catalogs`: the target catalogs by find-gen seed.
- `plan`: a run's plan (agent class, targets, floor runs), computed once when the run is created,
  stored with it, and read back by whoever executes it; `create_run`.
- `admission`: the plan, then the pre-flight checks on it (POST /runs, `harness run`).
- `leases`: which process executes a run (owner ids, lease checks).
- `prepare`: a claimed run's in-memory state and its episodes.
- `finish`: a run's final status from its episodes.
- `scheduler`: the loop that claims runs and hands episodes to an executor within limits.
- `views`, `report`: what a run and its episodes look like from outside (API, CLI, web pages).
"""
