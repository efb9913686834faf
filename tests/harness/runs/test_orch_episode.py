"""The episode loop in process (SQLite): transcripts, FIND's prompts and protocol quirks, budgets,
error states and resumption. Expected texts are typed from FIND's `collect_interpretations.py`
and `prompts/` or read from the data files.
"""

from __future__ import annotations

import pytest
from support.orch_helpers import run_in_process

from interp_harness.function_store.datasets import data_path
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.episode.runner import NO_COMMAND_HINT, EpisodeRunner, prompts
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.selection import SelectionError
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

F0 = "orch-test/numeric/f00000"  # f(x) = 2x + 1
F1 = "orch-test/numeric/f00001"  # f(x) = -3x + 0.5
E0 = "orch-test/entities/f00000"  # f(w) = min(1, len(w) / 10)
PROBE = "orch_agents:ProbeAgent"


def spec(agent: str = PROBE, ids: list[str] | None = None, **kw) -> dict:  # type: ignore[no-untyped-def]
    return {"agent": agent, "dataset": "orch-test", "ids": ids or [F0], **kw}


def find_prompt(name: str) -> str:
    return (
        data_path(f"find/prompts/interpreter/{name}.txt")
        .read_text()
        .replace("{DIR2FUNC}", "./temp/function.py")
    )


async def test_transcript_of_an_interactive_episode(sqlite_url: str) -> None:
    store, [run] = await run_in_process(sqlite_url, spec(agent_options={"n_calls": 3}))
    assert run.status == "completed"
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert [m.step for m in msgs] == list(range(9))
    assert [m.role for m in msgs] == ["system", "user"] + ["assistant", "user"] * 3 + ["assistant"]
    system = msgs[0].content
    assert "PYTHON(function.py)" in system and '"COMMAND: "' in system and '"Response: "' in system
    assert msgs[1].content == find_prompt("numeric")  # FIND's own file, {DIR2FUNC} filled in
    assert msgs[2].content == "Let me test x=0.\nCOMMAND: PYTHON(./temp/function.py 0)"
    # f(x) = 2x + 1, printed as FIND's CLI does: trailing space, then print()'s newline
    assert msgs[3].content == "Response: Function input - output pairs: (0, 1.0) \n"
    assert msgs[5].content == "Response: Function input - output pairs: (1, 3.0) \n"
    assert msgs[7].content == "Response: Function input - output pairs: (2, 5.0) \n"
    assert msgs[8].content.startswith("[DESCRIPTION]: affine map; last pair [('2', '5.0')]")
    assert [(c.step, c.inputs) for c in store.episodes.target_calls(ep.id)] == [
        (2, ["0"]),
        (4, ["1"]),
        (6, ["2"]),
    ]
    assert (ep.status, ep.end_reason, ep.final_answer) == (
        "completed",
        "description",
        msgs[8].content,
    )
    assert (ep.rounds, ep.target_calls, ep.inputs) == (4, 3, 3)
    assert (ep.prompt_tokens, ep.completion_tokens) == (40, 20)
    assert ep.cost_usd == pytest.approx(0.004)
    scores = {s.metric: s.value for s in store.scores.of_episodes([ep.id])}
    assert scores == {"answered": 1.0, "calls": 3.0}


def test_own_prompts_when_find_files_are_absent(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    text, source = prompts.prompt_template("numeric_mlp")
    assert source == "own"
    p = prompts.task_prompt("numeric_mlp")
    for needle in (
        "./temp/function.py value1 value2 value3",
        "[-128 and 128]",
        "MLP",
        "[DESCRIPTION]:",
        "[DOMAIN]:",
        "[CODE]:",
    ):
        assert needle in p
    assert "{DIR2FUNC}" not in p
    rel = prompts.task_prompt("neurons_relations")
    assert "[DOMAIN]:" in rel and "[CODE]" not in rel


async def test_round_cap_default_mode(sqlite_url: str) -> None:
    s = spec("orch_agents:SilentAgent", budgets={"max_rounds": 3})
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert sum(m.role == "assistant" for m in msgs) == 3
    assert [m.content for m in msgs if m.role == "user"][1:] == ["Response: " + NO_COMMAND_HINT] * 2
    assert (ep.status, ep.end_reason, ep.final_answer) == ("budget_exhausted", "rounds", "")
    # the agent failed to answer within its rounds: scored (as FIND scores an empty answer)
    assert {s.metric: s.value for s in store.scores.of_episodes([ep.id])}["answered"] == 0.0
    assert run.status == "completed"


async def test_find_compat_allows_21_rounds_and_resets_on_no_command(sqlite_url: str) -> None:
    s = spec("orch_agents:SilentAgent", protocol={"mode": "find-compat"})
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert sum(m.role == "assistant" for m in msgs) == 21  # FIND's `round_count > 20`
    resets = [m for m in msgs if m.role == "user" and m.resets_context]
    assert len(resets) == 20
    assert all(m.content == find_prompt("numeric") for m in resets)
    # after a reset the agent sees only the system prompt and the task prompt again
    conv = EpisodeRunner._conversation(msgs[:-1])
    assert [m.role for m in conv] == ["system", "user"]
    assert conv[1].content == find_prompt("numeric")


@pytest.mark.parametrize(
    ("mode", "calls", "reply"),
    [
        (
            "default",
            [["1", "2"], ["3"]],
            "Response: Function input - output pairs: (1, 3.0) (2, 5.0) \n"
            "Response: Function input - output pairs: (3, 7.0) ",
        ),
        (
            "find-compat",
            [["1", "2"]],
            "Response: Function input - output pairs: (1, 3.0) (2, 5.0) \n",
        ),
    ],
)
async def test_commands_per_message(sqlite_url: str, mode: str, calls, reply) -> None:  # type: ignore[no-untyped-def]
    s = spec("orch_agents:TwoCommandsAgent", protocol={"mode": mode})
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == calls
    assert store.episodes.messages(ep.id)[3].content == reply
    assert ep.target_calls == len(calls)


@pytest.mark.parametrize(
    ("budgets", "reason", "rounds", "calls"),
    [
        ({"max_target_calls": 2}, "target_calls", 3, 2),
        ({"max_tokens": 30}, "tokens", 2, 2),  # 15 tokens per agent message
    ],
)
async def test_budgets_end_the_episode(sqlite_url: str, budgets, reason, rounds, calls) -> None:  # type: ignore[no-untyped-def]
    s = spec(agent_options={"n_calls": 10}, budgets=budgets)
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason) == ("budget_exhausted", reason)
    assert (ep.rounds, ep.target_calls) == (rounds, calls)
    assert len(store.episodes.target_calls(ep.id)) == calls


async def test_calls_made_before_the_target_call_budget_ends_a_message_are_stored(
    sqlite_url: str,
) -> None:
    """A message with two commands and one target call left: the first runs and is stored (with
    the counters), the second does not run."""
    s = spec("orch_agents:TwoCommandsAgent", budgets={"max_target_calls": 1})
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "target_calls")
    calls = store.episodes.target_calls(ep.id)
    assert [(c.step, c.idx, c.inputs) for c in calls] == [(2, 0, ["1", "2"])]
    assert (ep.target_calls, ep.inputs) == (1, 2)


async def test_wall_time_budget(sqlite_url: str) -> None:
    # Every agent call takes 3 s and the budget is 1 s, so the first call must be cut while it
    # runs: waiting for it would end the episode after 3 s or more. The margins are wide
    # because a loaded CI machine adds most of a second before the first call.
    s = spec(agent_options={"n_calls": 10, "delay": 3.0}, budgets={"max_wall_s": 1.0})
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "wall_time")
    assert ep.rounds == 0
    assert 1.0 <= ep.active_s < 3.0


async def test_agent_failure_is_an_error_state_not_a_score(sqlite_url: str) -> None:
    store, [run] = await run_in_process(sqlite_url, spec("orch_agents:FailingAgent", ids=[F0, F1]))
    eps = store.episodes.of_run(run.id)
    assert {(e.status, e.error_category) for e in eps} == {("error", "agent")}
    assert all("insufficient credits" in e.error for e in eps)
    assert store.scores.of_run(run.id) == []  # never a 0
    assert run.status == "failed" and run.error == "every episode ended in error"


async def test_scoring_hook_failure_is_recorded_as_infrastructure_error(sqlite_url: str) -> None:
    import orch_plugin

    store, [run] = await run_in_process(sqlite_url, spec(), hook=orch_plugin.failing_hook)
    [ep] = store.episodes.of_run(run.id)
    [score] = store.scores.of_episodes([ep.id])
    assert (score.metric, score.status, score.error_category, score.value) == (
        "scoring",
        "error",
        "infrastructure",
        None,
    )
    assert "judge endpoint unreachable" in score.error
    assert ep.status == "completed"


async def test_exemplar_initialisation_and_entity_replies(sqlite_url: str) -> None:
    s = spec("orch_agents:EchoAgent", ids=[E0], protocol={"method": "exemplars"})
    # in-process (agent isolation none) so that the test can read what the agent was shown
    store, [run] = await run_in_process(sqlite_url, s, agent_isolation="none")
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    hint = (
        '\nWe advise you to start with the following words: ["Paris", "L\\u00f3pez Obrador", "dog"]'
    )
    assert msgs[1].content == find_prompt("neurons_entities") + hint
    # entity scores print with 4 decimals as FIND's entity CLI does
    assert (
        msgs[3].content
        == "Response: Function input - output pairs: (Paris, 0.5000) (dog, 0.3000) \n"
    )
    assert ep.exemplar_init and ep.status == "completed"
    # nothing the agent was shown carries the target's hidden canary or runner
    import orch_plugin

    from interp_harness.function_store.models import make_canary

    shown = "".join(m.content for conv in orch_plugin.EchoAgent.seen for m in conv)
    assert "Paris" in shown and make_canary(E0) not in shown and "orchtest-length" not in shown


async def test_single_round_method_stops_after_two_messages(sqlite_url: str) -> None:
    s = spec(ids=[E0], agent_options={"n_calls": 5}, protocol={"method": "single_round"})
    store, [run] = await run_in_process(sqlite_url, s)
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user", "assistant"]
    assert (ep.status, ep.end_reason) == ("completed", "single_round")
    assert (
        ep.final_answer
        == msgs[4].content
        == "Let me test x=1.\nCOMMAND: PYTHON(./temp/function.py 1)"
    )


def test_exemplar_methods_need_exemplars(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    bad = RunSpec.model_validate(spec(protocol={"method": "exemplars"}))
    with pytest.raises(SelectionError, match="needs exemplars"):
        create_run(store, bad, CatalogCache())


async def test_resume_executes_a_stored_command_once_and_continues(sqlite_url: str) -> None:
    """A stored agent message whose command never ran (the process died) runs on resume; the
    agent is not asked for that message again."""
    from support.orch_helpers import resume_in_process

    store = Store(make_engine(sqlite_url))
    run = create_run(store, RunSpec.model_validate(spec()), CatalogCache())
    store.episodes.ensure(
        run.id,
        [
            {
                "idx": 0,
                "target_id": F0,
                "dataset": "orch-test",
                "family": "numeric",
                "variant": "clean",
            }
        ],
    )
    [ep] = store.episodes.of_run(run.id)
    store.runs.set_status(run.id, "running")
    store.episodes.update(ep.id, status="running")
    store.episodes.add_messages(
        ep.id,
        [
            {"step": 0, "role": "system", "content": prompts.SYSTEM_PROMPT},
            {"step": 1, "role": "user", "content": find_prompt("numeric")},
            {"step": 2, "role": "assistant", "content": "COMMAND: PYTHON(./temp/function.py 7)"},
        ],
    )
    run = await resume_in_process(store, run.id)
    assert run.status == "completed"
    msgs = store.episodes.messages(ep.id)
    assert msgs[3].content == "Response: Function input - output pairs: (7, 15.0) \n"
    assert msgs[4].content == "Let me test x=1.\nCOMMAND: PYTHON(./temp/function.py 1)"
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [["7"], ["1"], ["2"]]
    assert store.episodes.get(ep.id).rounds == 4


async def test_system_prompt_file_override(sqlite_url: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    text = "A system prompt a user supplies,\nkept byte for byte.\n"
    (tmp_path / "system.txt").write_text(text, encoding="utf-8")
    monkeypatch.setenv("HARNESS_SYSTEM_PROMPT_FILE", str(tmp_path / "system.txt"))
    store, [run] = await run_in_process(sqlite_url, spec(agent_options={"n_calls": 1}))
    [ep] = store.episodes.of_run(run.id)
    assert store.episodes.messages(ep.id)[0].content == text


async def test_score_hook_reads_targets_through_the_episodes_client(sqlite_url: str) -> None:
    """The hook's scoring context calls targets through the orchestrator's target client (so a
    scorer's ground truth comes from the sandboxed services) and runs agent code through the
    harness's sandboxes."""
    from interp_harness.evaluator.api import ScoreResult
    from interp_harness.evaluator.scorer import ScoringContext

    runners = []

    async def hook(target, answer, stats, ctx: ScoringContext):  # type: ignore[no-untyped-def]
        runners.append(ctx.code_runner)
        outs = await ctx.call(target.id, ["0", "1"])
        return [ScoreResult(metric="via_client", value=float(outs[1].output))]

    # no floor run: its episode would call the hook too, whenever it ends before this run's
    store, [run] = await run_in_process(sqlite_url, spec(floor=False), hook=hook)
    [ep] = store.episodes.of_run(run.id)
    scores = store.scores.of_episodes([ep.id])
    assert {s.metric: s.value for s in scores} == {"via_client": 3.0}  # 2*1 + 1
    # by name: another test may have reloaded the module
    assert [f"{r.__module__}:{r.__qualname__}" for r in runners] == [
        "interp_harness.harness.sandbox.code_runner:run_in_sandbox"
    ]
