"""`harness import-inspect LOG`: an Inspect log of one of our tasks (or of `harness export --format
inspect`) becomes a harness run whose `harness report` equals the log's own scores; anything
else is refused with nothing stored."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from interp_harness.evaluator.report import wilson
from interp_harness.harness.cli import app
from interp_harness.harness.runs.report import build_report
from interp_harness.harness.store.events import DuplicateImport
from interp_harness.harness.store.repo import open_store

inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai is in the dev extra")
from inspect_ai.event import SpanBeginEvent  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score  # noqa: E402
from inspect_ai.tool import ToolCall, ToolCallError  # noqa: E402
from support.hostile_logs import TARGET, edit_samples, eval_bomb, eval_log, result, write  # noqa: E402
from support.hostile_logs import sample as hostile  # noqa: E402

from interp_harness.harness.inspect_tasks.bounded_log import LogBounds  # noqa: E402
from interp_harness.harness.inspect_tasks.importer import (  # noqa: E402
    ImportRefused,
    import_eval_log,
    read_log,
)

ROOT = Path(__file__).resolve().parents[3]
DATA = os.environ.get("HARNESS_DATA_DIR") or str(ROOT.parent / "shared" / "data")
MODEL = "mockllm/model"


def harness(db: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{db}", HARNESS_DATA_DIR=DATA)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        ["harness", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def cli(db: Path, *args: str) -> Result:
    """`harness ARGS` in this process (the same app; no interpreter start-up per command)."""
    env = {"DATABASE_URL": f"sqlite:///{db}", "HARNESS_DATA_DIR": DATA}
    return CliRunner().invoke(app, list(args), env=env)


def rows(report_json: str) -> list[dict]:
    """A report's rows but for the run's id (an import is a run of its own, with a new id)."""
    return [
        {k: v for k, v in r.items() if k != "run_id"}
        for r in json.loads(report_json)["report"]["rows"]
    ]


def test_run_export_import_gives_the_same_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    r = harness(
        a, tmp_path, "run", "--agent", "scripted-numeric", "-d", "find-gen", "-f", "numeric",
        "--limit", "2", "--seed", "0", "--no-floor", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    run_id = json.loads(r.stdout)["id"]

    monkeypatch.chdir(tmp_path)
    e = cli(a, "export", run_id, "--format", "inspect")
    assert e.exit_code == 0, e.output
    log = tmp_path / f"{run_id}.eval"  # the default: Inspect's own .eval (a zip), not JSON
    assert zipfile.is_zipfile(log)

    i = cli(b, "import-inspect", str(log), "--json")
    assert i.exit_code == 0, i.output
    imported = json.loads(i.stdout)
    assert imported["status"] == "completed" and imported["agent"] == "scripted-numeric"
    assert imported["id"] != run_id

    original = rows(cli(a, "report", run_id, "--json").stdout)
    again = rows(cli(b, "report", imported["id"], "--json").stdout)
    assert original and again == original
    assert any(r["metric"] == "code_success" and r["scored"] == 2 for r in again)

    # the same episodes, answers and transcripts
    store_a, store_b = open_store(f"sqlite:///{a}"), open_store(f"sqlite:///{b}")
    # (in the log's order: Inspect keeps samples by id)
    eps_a = sorted(store_a.episodes.of_run(run_id), key=lambda e: e.target_id)
    eps_b = sorted(store_b.episodes.of_run(imported["id"]), key=lambda e: e.target_id)
    assert [(e.target_id, e.final_answer, e.rounds, e.inputs) for e in eps_b] == [
        (e.target_id, e.final_answer, e.rounds, e.inputs) for e in eps_a
    ]
    for x, y in zip(eps_a, eps_b, strict=True):
        assert [(m.role, m.content) for m in store_b.episodes.messages(y.id)] == [
            (m.role, m.content) for m in store_a.episodes.messages(x.id)
        ]

    # the imported run says so wherever it is shown; the original does not (issue 38 item 10)
    assert imported["imported"] is True
    for db, rid, mark in ((a, run_id, False), (b, imported["id"], True)):
        (listed,) = [json.loads(x) for x in cli(db, "runs", "list", "--json").stdout.splitlines()]
        shown = json.loads(cli(db, "runs", "show", rid, "--json").stdout)
        report = json.loads(cli(db, "report", rid, "--json").stdout)
        assert (listed["imported"], shown["imported"], report["imported"]) == (mark, mark, mark)
        assert ("(imported)" in "".join(cli(db, "runs", "list").stdout.split())) is mark
        assert ("note: the run was imported" in cli(db, "report", rid).stdout) is mark
    again = cli(b, "export", imported["id"], "--format", "inspect", "-o", str(tmp_path / "re.eval"))
    assert "note: the run was imported from a file" in again.stderr
    meta = inspect_log.read_eval_log(str(tmp_path / "re.eval"), header_only=True).eval.metadata
    assert meta["interp_harness_imported"] is True
    jsonl = cli(b, "export", imported["id"])
    assert jsonl.exit_code == 0 and "note: the run was imported" in jsonl.stderr

    # a second import of the same eval is refused: still one run
    twice = cli(b, "import-inspect", str(log))
    assert twice.exit_code != 0 and "already imported" in twice.stderr
    assert [r.id for r in store_b.runs.latest()] == [imported["id"]]


def _sample(sid: str, answer: str | None, messages: list, **extra: Any) -> inspect_log.EvalSample:
    return inspect_log.EvalSample(
        id=sid,
        epoch=1,
        input="Describe f.",
        target="",
        metadata={"dataset": "find-gen", "family": "numeric", "variant": "plain"},
        messages=messages,
        output=ModelOutput.from_content(model=MODEL, content=answer or ""),
        **extra,
    )


def _scored(sid: str, answer: str, scores: list[dict], stats: dict) -> inspect_log.EvalSample:
    ok = {s["metric"]: s["value"] for s in scores if s["status"] == "ok" and s["value"] is not None}
    call = ToolCall(id="c1", function="PYTHON", arguments={"inputs": ["1", "2"]})
    bad = ToolCall(id="c2", function="PYTHON", arguments={"inputs": "nope"})
    return _sample(
        sid,
        answer,
        [
            ChatMessageSystem(content="You are an interpreter."),
            ChatMessageUser(content="Describe f."),
            ChatMessageAssistant(content="Let me call it.", tool_calls=[call, bad], model=MODEL),
            ChatMessageTool(content="(1, 2) (2, 4)", tool_call_id="c1", function="PYTHON"),
            ChatMessageTool(
                content="Error: inputs must be a list",
                tool_call_id="c2",
                function="PYTHON",
                error=ToolCallError(type="parsing", message="inputs must be a list"),
            ),
            ChatMessageAssistant(content=answer, model=MODEL),
        ],
        scores={
            "interp_harness": Score(
                value=ok, answer=answer, metadata={"scores": scores, "stats": stats}
            )
        },
        model_usage={MODEL: ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)},
    )


def _result(metric: str, value: float | None) -> dict:
    return {"metric": metric, "value": value, "status": "ok", "error_category": None,
            "error": None, "details": {"parser": "python"}}  # fmt: skip


def _failed(sid: str, error: str, answer: str | None, **extra: Any) -> inspect_log.EvalSample:
    """A sample that ended with an error (Inspect's message: the exception's repr)."""
    said = [ChatMessageAssistant(content=answer, model=MODEL)] if answer else []
    return _sample(
        sid,
        answer,
        [ChatMessageUser(content="Describe f."), *said],
        error=inspect_log.EvalError(
            message=f"RuntimeError({error!r})",
            traceback=f"Traceback ...\nRuntimeError: {error}",
            traceback_ansi="",
        ),
        **extra,
    )


def _contract_log(path: Path, task: str = "interp_harness/find") -> inspect_log.EvalLog:
    """A log in the shape the tasks write: two scored samples, one whose scorer raised and one
    whose solver raised."""
    stats = {"target_calls": 1, "inputs": 2, "rounds": 2}
    samples = [
        _scored("find-gen/numeric/g0", "[DESCRIPTION]: doubles", [
            _result("code_success", 1.0), _result("domain_iou", 0.5)], stats),
        _scored("find-gen/numeric/g1", "[DESCRIPTION]: halves", [
            _result("code_success", 0.0), _result("domain_iou", 0.8)], stats),
        # Inspect records a scorer that raised as the sample's error, inside the scorers' span
        _failed("find-gen/numeric/g2", "[judge] the judge is unreachable", "[DESCRIPTION]: x",
                events=[SpanBeginEvent(id="s1", name="scorers"),
                        SpanBeginEvent(id="s2", name="interp_harness", type="scorer",
                                       parent_id="s1")],
                store={"interp_harness:rounds": 1, "interp_harness:target_calls": 0,
                       "interp_harness:inputs": 0}),
        # the solver raised (no scorers span): the episode itself is an error
        _failed("find-gen/numeric/g3", "[target] the target service is down", None),
    ]  # fmt: skip
    log = inspect_log.EvalLog(
        eval=inspect_log.EvalSpec(
            created="2026-11-25T10:00:00+00:00",
            task=task,
            task_args={
                "dataset": "find-gen",
                "family": "numeric",
                "limit": 3,
                "seed": 0,
                "protocol": "tools",
                "max_rounds": 5,
            },  # fmt: skip
            dataset=inspect_log.EvalDataset(name="find-gen", samples=4),
            model=MODEL,
            config=inspect_log.EvalConfig(),
        ),
        status="success",
        samples=samples,
    )
    inspect_log.write_eval_log(log, str(path))
    return log


def test_contract_log_imports_episodes_transcripts_scores_and_scorer_errors(
    tmp_path: Path,
) -> None:
    log = _contract_log(tmp_path / "find.eval")
    store = open_store(f"sqlite:///{tmp_path / 'h.db'}")
    run_id = import_eval_log(store, inspect_log.read_eval_log(str(tmp_path / "find.eval")))

    run = store.runs.get(run_id)
    assert run is not None and run.status == "completed"
    assert (run.agent, run.dataset, run.family) == (f"inspect:{MODEL}", "find-gen", "numeric")
    assert run.spec["protocol"]["mode"] == "tools" and run.spec["budgets"]["max_rounds"] == 5
    eps = store.episodes.of_run(run_id)
    assert [e.target_id for e in eps] == [s.id for s in log.samples]
    assert [e.idx for e in eps] == [0, 1, 2, 3]
    g0, _, g2, g3 = eps
    assert (g0.status, g0.final_answer, g0.rounds, g0.target_calls, g0.inputs) == (
        "completed", "[DESCRIPTION]: doubles", 2, 1, 2)  # fmt: skip
    assert (g0.prompt_tokens, g0.completion_tokens) == (100, 20)

    msgs = store.episodes.messages(g0.id)
    assert [(m.step, m.role) for m in msgs] == list(
        enumerate(["system", "user", "assistant", "tool", "tool", "assistant"])
    )
    assert msgs[2].tool_calls == [
        {"id": "c1", "name": "PYTHON", "arguments": {"inputs": ["1", "2"]}},
        {"id": "c2", "name": "PYTHON", "arguments": {"inputs": "nope"}},
    ]
    assert (msgs[4].tool_call_id, msgs[4].is_error) == ("c2", True)
    calls = store.episodes.tool_calls(g0.id)
    assert [(c.step, c.idx, c.call_id, c.result, c.error) for c in calls] == [
        (2, 0, "c1", "(1, 2) (2, 4)", None),
        (2, 1, "c2", "Error: inputs must be a list", "inputs must be a list"),
    ]
    assert {(s.metric, s.value, s.status) for s in store.scores.of_episodes([g0.id])} == {
        ("code_success", 1.0, "ok"), ("domain_iou", 0.5, "ok")}  # fmt: skip

    # the scorer's error: an error row with its category, never a 0; the episode itself ended
    assert g2.status == "completed" and g2.error_category is None
    (err,) = store.scores.of_episodes([g2.id])
    assert (err.metric, err.value, err.status, err.error_category) == (
        "scoring", None, "error", "judge")  # fmt: skip
    assert "judge is unreachable" in (err.error or "")
    assert (g2.rounds, g2.final_answer) == (1, "[DESCRIPTION]: x")  # its counters: the task's store
    # the solver's error: the episode's, with its category, and no score at all
    g3_scores = store.scores.of_episodes([g3.id])
    assert (g3.status, g3.error_category, g3_scores) == ("error", "target", [])
    assert "target service is down" in (g3.error or "")

    # the report's values are the means Inspect's `mean` takes over the scored samples
    report = {r["metric"]: r for r in build_report(store, run).report["rows"]}
    values = {
        k: [s.scores["interp_harness"].value[k] for s in log.samples if s.scores]
        for k in ("code_success", "domain_iou")
    }
    cs, iou = report["code_success"], report["domain_iou"]
    assert (cs["value"], cs["scored"], cs["episodes"]) == (mean(values["code_success"]), 2, 4)
    successes = sum(v >= 0.5 for v in values["code_success"])
    assert (cs["ci_low"], cs["ci_high"]) == pytest.approx(wilson(successes, 2))
    assert cs["errors"] == {"judge": 1, "target": 1}
    assert iou["value"] == pytest.approx(mean(values["domain_iou"]))
    # IoU lies in [0, 1]: a percentile bootstrap, which over 2 values can only draw the means
    # a, (a+b)/2 and b (each end with probability 1/4 > 2.5%): the interval is [min, max]
    assert (iou["ci_low"], iou["ci_high"]) == pytest.approx(
        (min(values["domain_iou"]), max(values["domain_iou"]))
    )

    # the same eval again: refused, still one run
    with pytest.raises(DuplicateImport):
        import_eval_log(store, inspect_log.read_eval_log(str(tmp_path / "find.eval")))
    assert [r.id for r in store.runs.latest()] == [run_id]


def test_bad_input_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    # one real `harness` process: its exit status
    r = harness(db, tmp_path, "import-inspect", str(tmp_path / "missing.eval"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"cannot import {tmp_path / 'missing.eval'}: no such file" in r.stderr
    not_a_log = tmp_path / "notes.eval"
    not_a_log.write_text("just some text\n")
    foreign = tmp_path / "foreign.eval"  # another task, another scorer
    other = _contract_log(foreign, task="someone_else/task")
    for sample in other.samples:
        sample.scores = {"match": Score(value="C")}
    inspect_log.write_eval_log(other, str(foreign))
    # a log of ours whose last sample is broken (no metadata): refused whole, no partial run
    broken = _contract_log(tmp_path / "broken.eval")
    broken.samples[-1].metadata = {}
    inspect_log.write_eval_log(broken, str(tmp_path / "broken.eval"))

    for path, says in (
        (not_a_log, "not an Inspect eval log"),
        (foreign, "not a log of an interp_harness task"),
        (tmp_path / "broken.eval", "no dataset, family, variant in its metadata"),
    ):
        r = cli(db, "import-inspect", str(path))
        assert r.exit_code == 1 and says in " ".join(r.stderr.split()), (path, r.output)
        assert r.exception is None or isinstance(r.exception, SystemExit)  # no traceback
    store = open_store(f"sqlite:///{db}")
    assert store.runs.latest() == []

    with pytest.raises(ImportRefused):  # the function the CLI calls refuses the same way
        import_eval_log(store, broken)
    assert store.runs.latest() == []


# ---- imported logs are untrusted input (issue 38, items 6, 9, 10) ------------------------------
def _refused(db: Path, path: Path, says: str, env: dict[str, str] | None = None) -> None:
    """`harness import-inspect PATH` answers one line saying `says`, exits 1, stores nothing."""
    r = CliRunner().invoke(
        app,
        ["import-inspect", str(path)],
        env={"DATABASE_URL": f"sqlite:///{db}", "HARNESS_DATA_DIR": DATA, **(env or {})},
    )
    assert r.exit_code == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)  # no traceback
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], r.stderr
    assert lines[0].startswith(f"cannot import {path}: ") and "Traceback" not in r.output
    assert open_store(f"sqlite:///{db}").runs.latest() == []


def test_a_decompression_bomb_is_refused_before_inspect_reads_it(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    bomb = eval_bomb(tmp_path / "bomb.eval", 8 << 20)  # 8 MiB of one letter: ~8 kB of zip
    assert bomb.stat().st_size < 64 << 10
    # past the operator's bound on one member: refused on the zip's declared sizes, unread
    _refused(db, bomb, "too large: member 'samples/find-gen/numeric/g0_epoch_1.json' declares "
             "8,388,592 bytes inflated, over the 1,048,576 the operator allows "
             "(HARNESS_IMPORT_MAX_MEMBER_BYTES)", {"HARNESS_IMPORT_MAX_MEMBER_BYTES": str(1 << 20)})  # fmt: skip
    # past the bound on the whole log
    _refused(
        db, bomb, "too large: the log declares", {"HARNESS_IMPORT_MAX_LOG_BYTES": str(4 << 20)}
    )
    # a zip that lies about its sizes: the inflating stops past what it declared
    liar = eval_bomb(tmp_path / "liar.eval", 8 << 20, declared=2000)
    _refused(db, liar, "not as declared: member 'samples/find-gen/numeric/g0_epoch_1.json' "
             "inflates past the 2,000 bytes the zip declares")  # fmt: skip
    # a .json log is counted as it is copied
    as_json = write(eval_log([hostile()]), tmp_path / "log.json")
    _refused(db, as_json, "too large: the log inflates past the 1,024 bytes",
             {"HARNESS_IMPORT_MAX_LOG_BYTES": "1024"})  # fmt: skip
    # within the bounds, the same bomb is an ordinary (if long) log
    store = open_store(f"sqlite:///{db}")
    run_id = import_eval_log(store, read_log(bomb, LogBounds(16 << 20, 64 << 20)))
    assert [e.target_id for e in store.episodes.of_run(run_id)] == [TARGET]


def _usage(**fields: Any) -> dict[str, ModelUsage]:
    return {MODEL: ModelUsage(**{"input_tokens": 10, "output_tokens": 5, **fields})}


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: [hostile(usage=_usage(input_tokens=-(10**12)))],
         "input_tokens is -1000000000000; a live episode's is between 0 and 2,101,346,304"),
        (lambda: [hostile(usage=_usage(total_cost=-1e6))],
         "total_cost is -1000000.0; a live episode's is between 0 and"),
        (lambda: [hostile(usage=_usage(output_tokens=2**70))],
         "output_tokens is 1180591620717411303424; a live episode's is between 0 and"),
        (lambda: [hostile(epoch=2**62)], "epoch is 4611686018427387904; a live episode's is between 0 and 1"),
        (lambda: [hostile(stats={"rounds": 2**70, "target_calls": 0, "inputs": 0})],
         "rounds is 1180591620717411303424; a live episode's is between 0 and 501"),
        (lambda: [hostile(stats={"rounds": 1, "target_calls": -1, "inputs": 0})],
         "target_calls is -1; a live episode's is between 0 and 100,000"),
        (lambda: [hostile(scores=[result("nmse", 0.0, agent_grid={"x": [1.0, 2.0], "y": [1.0]})])],
         "score 'nmse': agent_grid has 2 x and 1 y values"),
        (lambda: [hostile(scores=[result("nmse", 0.0, agent_grid={"x": [{"a": 1}], "y": [1.0]})])],
         "score 'nmse': agent_grid holds \"{'a': 1}\", not a finite number"),
    ],
    ids=["negative-tokens", "negative-cost", "2**70-tokens", "epoch-2**62", "rounds-2**70",
         "negative-calls", "grid-lengths", "grid-dicts"],
)  # fmt: skip
def test_hostile_numbers_are_refused_with_their_cause(tmp_path: Path, make: Any, says: str) -> None:
    log = write(eval_log(make()), tmp_path / "hostile.eval")
    _refused(tmp_path / "h.db", log, says)


def _nan_cost(doc: dict[str, Any]) -> None:
    doc["model_usage"][MODEL]["total_cost"] = float("nan")


def _nan_score(doc: dict[str, Any]) -> None:
    doc["scores"]["interp_harness"]["metadata"]["scores"][0]["value"] = float("nan")


@pytest.mark.parametrize(
    ("change", "says"),
    [(_nan_cost, "total_cost is nan; a live episode's is between 0 and"),
     (_nan_score, "score 'code_success' is nan, not a finite number")],
    ids=["cost", "score"],
)  # fmt: skip
def test_nan_in_a_hand_edited_log_is_refused(tmp_path: Path, change: Any, says: str) -> None:
    """Inspect writes no NaN, but a log edited by hand (Python's JSON) may hold one."""
    log = edit_samples(write(eval_log([hostile()]), tmp_path / "nan.eval"), change)
    _refused(tmp_path / "h.db", log, says)


def test_an_exported_spec_keeps_no_secret_endpoint_path_or_dotted_agent(tmp_path: Path) -> None:
    """Only the operator sets a key, an endpoint, a file to read or an agent by module path: from
    a log they are dropped (named on stderr and in the import event), never stored or served."""
    secret = "sk-not-for-the-store"
    db = tmp_path / "h.db"
    dotted = {  # an agent by dotted path, with what only an operator may set
        "agent": "os:system", "dataset": "find-gen", "family": "numeric", "floor_for": "elsewhere",
        "agent_options": {"api_key": secret, "base_url": "http://attacker.invalid/v1",
                          "path": "/etc/passwd", "command": "id"},
    }  # fmt: skip
    known = {  # a provider agent this server knows: its caller options stay, the rest go
        "agent": "openai", "dataset": "find-gen", "family": "numeric",
        "agent_options": {"model": "gpt-4o", "temperature": 0.5, "api_key": secret,
                          "base_url": "http://attacker.invalid/v1"},
    }  # fmt: skip
    stored = {}
    for name, spec in (("hostile", dotted), ("known", known)):
        meta = {"interp_harness_run": f"run-{name}", "spec": spec, "agent": spec["agent"]}
        log = write(eval_log([hostile()], metadata=meta), tmp_path / f"{name}.eval")
        r = cli(db, "import-inspect", str(log), "--json")
        assert r.exit_code == 0, r.output
        assert "not stored from the log's spec (the operator's to set): " in r.stderr
        assert secret not in r.output
        stored[name] = json.loads(r.stdout)
        assert stored[name]["imported"] is True
    spec = stored["hostile"]["spec"]
    assert spec["agent"] == "os/system (imported)" and stored["hostile"]["agent"] == spec["agent"]
    assert spec["agent_options"] == {} and spec["floor_for"] is None
    assert stored["known"]["spec"]["agent_options"] == {"model": "gpt-4o", "temperature": 0.5}
    store = open_store(f"sqlite:///{db}")
    for out in stored.values():
        run = store.runs.get(out["id"])
        assert run is not None and secret not in json.dumps(run.spec)
        assert "attacker" not in json.dumps(run.spec) and "/etc/passwd" not in json.dumps(run.spec)
    event = store.events.first_data(stored["hostile"]["id"], "inspect_import")
    assert event is not None and set(event["dropped"]) == {
        "floor_for", "agent (a dotted path: relabelled)", "agent_options.api_key",
        "agent_options.base_url", "agent_options.path", "agent_options.command",
    }  # fmt: skip
