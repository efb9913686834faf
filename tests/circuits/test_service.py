"""The intervention service's compiled transformers (`/v1/circuits`), on a real uvicorn server of
compiled models only (`harness intervention serve --model none`: no language model is loaded)
over a copy of the session's built targets: its replies equal `CircuitModel`'s in process, ids
that climb out of the folder or are not in a catalog are refused, nothing of a truth file is in
any reply, and the runner forwards a target's experiments to it with the same replies."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from support import stop_process
from support.intervention_server import start_server

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.runtime import RuntimeContext, call_target, prepare_target
from interp_harness.model_services.intervention.circuit_model import CircuitModel

LIB = "circuits-lib/sort/0"
# secrets in the server's environment, as an operator's would be: no reply may carry one
ENV_CANARIES = {
    "HARNESS_API_TOKENS": "canary-circuits-api-token-5c1e",
    "OPENAI_API_KEY": "canary-circuits-openai-key-93ab",
    "HARNESS_JUDGE_API_KEY": "canary-circuits-judge-key-07fd",
}


@pytest.fixture(scope="module")
def served(
    circuits_built: dict[str, list[cb.CircuitTruth]],
    circuits_cache: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Path]]:
    """(URL, the served folder): the built datasets as `harness circuits build` left them (truth
    files beside the weights), plus a planted catalog whose entry points outside its folder."""
    folder = tmp_path_factory.mktemp("served") / "circuits"
    shutil.copytree(circuits_cache / "data" / "circuits", folder)
    (folder / "planted").mkdir()
    rows = [{"id": "planted/x/0", "weights": "../circuits-lib/circuits-lib--sort--0.npz"}]
    (folder / "planted" / "catalog.json").write_text(json.dumps({"targets": rows}))
    log = tmp_path_factory.mktemp("circuits-server") / "server.log"
    with pytest.MonkeyPatch.context() as mp:
        for k, v in ENV_CANARIES.items():
            mp.setenv(k, v)
        proc, url = start_server("none", log, "--circuits-dir", str(folder))
    try:
        yield url, folder
    finally:
        stop_process(proc)


class Replies:
    """Posts and gets against the server, keeping every reply's text for the canary check."""

    def __init__(self, url: str) -> None:
        self.url = url + "/v1/circuits"
        self.texts: list[str] = []

    def get(self, path: str = "") -> httpx.Response:
        r = httpx.get(self.url + path, timeout=30)
        self.texts.append(r.text)
        return r

    def post(self, route: str, body: dict[str, Any], status: int = 200) -> Any:
        r = httpx.post(f"{self.url}/{route}", json=body, timeout=30)
        self.texts.append(r.text)
        assert r.status_code == status, r.text
        return r.json()


def _model(folder: Path, target: str) -> CircuitModel:
    dataset = target.split("/")[0]
    return CircuitModel.from_npz(folder / dataset / f"{cb.safe(target)}.npz")


def _inputs(m: CircuitModel, n: int, seed: int) -> list[list[Any]]:
    rng = np.random.default_rng(seed)
    return [m.random_inputs(1, int(rng.integers(1, m.max_len + 1)), seed + i)[0] for i in range(n)]


def _truths(built: dict[str, list[cb.CircuitTruth]]) -> list[cb.CircuitTruth]:
    return [t for ts in built.values() for t in ts]


def _canaries(truths: list[cb.CircuitTruth]) -> set[str]:
    """What only a truth file says: roles (RASP operations and tracr's variables), programs,
    distractors' operations (short strings are left out: they could occur by chance); and the
    secrets of the server's environment."""
    out: set[str] = set(ENV_CANARIES.values())
    for t in truths:
        out |= {*t.roles.values(), t.program, *t.distractors}
    return {c for c in out if len(c) >= 8}


def test_replies_equal_the_model_in_process(
    served: tuple[str, Path], circuits_built: dict[str, list[cb.CircuitTruth]]
) -> None:
    url, folder = served
    api = Replies(url)
    truths = _truths(circuits_built)
    listed = api.get().json()["data"]
    assert sorted(listed) == sorted(t.id for t in truths)  # the planted entry is not served

    # hand-worked: the sort program sorts its input
    assert api.post("run", {"target": LIB, "inputs": [[3, 1, 2], [5, 2]]})["results"] == [
        [1, 2, 3],
        [2, 5],
    ]
    gen = next(t for t in truths if t.dataset == cb.GEN)
    for truth in (next(t for t in truths if t.id == LIB), gen):
        tid = truth.id
        m = _model(folder, tid)
        info = api.get(f"/{tid}").json()
        assert info == {
            "id": tid,
            "vocab": m.vocab,
            "max_len": m.max_len,
            "n_layers": m.n_layers,
            "n_heads": m.n_heads,
            "output_kind": m.output_kind,
            "components": m.all_components(),
        }
        xs = _inputs(m, 12, 1)
        full = [x for x in xs if len(x) == m.max_len] or [xs[0]]
        comps = truth.circuit
        body = {"target": tid, "inputs": xs}
        assert api.post("run", body)["results"] == m.run(xs)
        for kind in ("zero", "mean", "resample"):
            got = api.post("ablate", {**body, "components": comps, "kind": kind, "seed": 3})
            assert got["results"] == m.ablate(xs, comps, kind, seed=3), kind
        ref = _inputs(m, 20, 9)
        got = api.post("ablate", {**body, "components": comps, "kind": "mean", "reference": ref})
        assert got["results"] == m.ablate(xs, comps, "mean", reference=ref)
        src = [list(reversed(x)) for x in xs]
        got = api.post("patch", {"target": tid, "base": xs, "source": src, "components": comps})
        assert got["results"] == m.patch(xs, src, comps)
        for site in (comps[0], "L0H0.pattern", "L0MLP", f"L{m.n_layers - 1}.resid_post", "embed"):
            got = api.post("activations", {"target": tid, "inputs": xs[:16], "component": site})
            a = np.array(got["results"], dtype=np.float64)  # None (past an input's end) -> NaN
            np.testing.assert_array_equal(a, m.activations(xs[:16], site), err_msg=site)
        words = ["".join(map(str, full[0])) if all(len(str(v)) == 1 for v in m.vocab) else ""]
        words = [w for w in words if w] + [",".join(map(str, full[0]))]
        got = api.post("tokenize", {"target": tid, "texts": words})["results"]
        ids = m.encode([full[0]])[0][0, 1:].tolist()
        assert got == [{"tokens": full[0], "ids": ids}] * len(words)

    texts = "\n".join(api.texts)
    canaries = _canaries(truths)
    assert len(canaries) >= 10  # every target's roles and program: the check has teeth
    leaked = [c for c in canaries if c in texts]
    assert not leaked, leaked


@pytest.mark.parametrize(
    "target",
    [
        "../circuits-lib/sort/0",
        "circuits-lib/../circuits-lib/sort/0",
        "circuits-lib/sort/0/../../../etc/passwd",
        "/etc/passwd",
        "..",
        "circuits-lib/circuits-lib--sort--0.npz",
    ],
)
def test_ids_that_name_a_path_are_refused(served: tuple[str, Path], target: str) -> None:
    api = Replies(served[0])
    # the pattern refuses each of these, or the catalogs do not list it
    r = httpx.post(f"{api.url}/run", json={"target": target, "inputs": [[1]]}, timeout=30)
    assert r.status_code in (400, 404), r.text
    assert r.json()["error"]["message"]
    assert str(served[1]) not in r.text and ".npz" not in r.text.replace(target, "")


def test_bad_input_is_a_400_that_names_nothing_of_the_target(
    served: tuple[str, Path], circuits_built: dict[str, list[cb.CircuitTruth]]
) -> None:
    api = Replies(served[0])
    assert api.post("run", {"target": "planted/x/0", "inputs": [[1]]}, 404)
    assert api.post("run", {"target": "circuits-lib/sort/7", "inputs": [[1]]}, 404)
    cases = [
        ("run", {"target": LIB, "inputs": [[9]]}),  # not in the vocabulary
        ("run", {"target": LIB, "inputs": [["1"]]}),  # "1" is not the token 1
        ("run", {"target": LIB, "inputs": [[1] * 6]}),  # longer than the model's inputs
        ("run", {"target": LIB, "inputs": [[1]] * 65}),  # more inputs than a call takes
        ("ablate", {"target": LIB, "inputs": [[1]], "components": ["L9H0"]}),
        ("ablate", {"target": LIB, "inputs": [[1]], "components": ["L0H0"], "kind": "half"}),
        ("patch", {"target": LIB, "base": [[1, 2]], "source": [[1]], "components": ["L0MLP"]}),
        ("activations", {"target": LIB, "inputs": [[1]], "component": "L0H9.pattern"}),
        ("activations", {"target": LIB, "inputs": [[1]] * 17, "component": "L0MLP"}),
        ("tokenize", {"target": LIB, "texts": ["1,x"]}),
    ]
    for route, body in cases:
        err = api.post(route, body, 400)["error"]["message"]
        assert err and "circuits-lib--" not in err and "truth" not in err, (route, err)
    r = httpx.post(f"{api.url}/run", content=b'{"target": "x", "inputs": [[NaN]]}', timeout=30)
    assert r.status_code == 400
    texts = "\n".join(api.texts)
    assert not [c for c in _canaries(_truths(circuits_built)) if c in texts]


def test_the_runner_forwards_to_the_service(
    served: tuple[str, Path], in_circuits_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = served
    target = prepare_target(Catalog().get(LIB))
    m = CircuitModel.from_npz(target.hidden.spec["weights"])
    comps = m.components()[:2]
    calls = [
        ["task"],
        ["312", "52", "9,9"],
        ["ablate", "31245", "54321", "--components", *comps, "--kind", "mean", "--seed", "4"],
        ["ablate", "312", "--components", *comps, "--kind", "resample", "--reference", "123"],
        ["patch", "312", "--source", "231", "--components", *comps],
        ["activations", "312", "45", "--component", "L0H0.pattern"],
        ["ablate", "312", "--components", "L9H0"],  # the agent's error, the same message
        ["patch", "312", "--source", "23", "--components", "L0MLP"],
    ]
    monkeypatch.delenv("HARNESS_CIRCUITS_URL", raising=False)
    local = [call_target(target, words) for words in calls]
    # a backbone forwarded for another family's targets is not where circuits experiments go
    other = RuntimeContext(extra={"backbone_url": "http://127.0.0.1:9/v1"})
    assert call_target(target, calls[2], other) == local[2]
    monkeypatch.setenv("HARNESS_CIRCUITS_URL", url)  # the operator's setting
    forwarded = [call_target(target, words) for words in calls]
    assert forwarded == local
    assert local[2][0].output and local[6][0].error_category == "agent"
    # a service that does not serve the target: the fixed message, an infrastructure error
    gone = target.model_copy(update={"id": "circuits-lib/sort/7"})
    [out] = call_target(gone, ["312"])
    assert out.error_category == "infrastructure" and "sort/7" not in (out.error or "")
