"""Adversarial agent messages through the real protocol + sandboxed target service.

The canary of every served target's hidden truth must never appear in a reply, and nothing an
agent writes is ever executed (the marker files below are never created)."""

import os
import uuid

import pytest

from interp_harness.agents.protocol import format_error, format_reply, parse_message
from interp_harness.function_store.service.client import TargetServiceError
from interp_harness.harness.target_client import ServiceTargetClient

MARK = f"/tmp/leak-audit-{uuid.uuid4().hex}"
LEAK_TARGETS = ["find-v1/numeric/f00473", "find-v1/numeric/f00000"]  # a corrupted fn, an MLP


def adversarial_messages() -> list[str]:
    long_input = "9" * 200_000
    many = " ".join(str(i) for i in range(5000))
    return [
        "PYTHON(function.py; cat function.py)",
        "PYTHON(./temp/function.py 1; cat ./temp/function.py)",
        f"PYTHON(./temp/function.py 1 && touch {MARK}-and)",
        f"PYTHON(./temp/function.py $(touch {MARK}-subst))",
        f"PYTHON(./temp/function.py `touch {MARK}-tick`)",
        f'PYTHON(./temp/function.py "$(touch {MARK}-dq)" 1)',
        f"PYTHON(./temp/function.py 1 | tee {MARK}-pipe)",
        f"PYTHON(./temp/function.py 1 > {MARK}-redir)",
        "PYTHON(../function.py 1)",
        "PYTHON(../../../../etc/passwd)",
        "PYTHON(/sandbox/find-v1__numeric__f00473.json)",
        "PYTHON(/proc/self/environ 1)",
        "PYTHON(./temp/function.py $HOME ${HARNESS_SERVICE_TARGETS_DIR} $PATH)",
        "PYTHON(./temp/function.py __import__('os').system('id'))",
        'PYTHON(./temp/function.py "__import__(\\"os\\").listdir(\\"/sandbox\\")")',
        "PYTHON(./temp/function.py nan inf -inf 1e309 0x10 1_000)",
        f"PYTHON(./temp/function.py {long_input})",
        f"PYTHON(./temp/function.py {many})",
        "PYTHON(./temp/function.py \udcff\udcfe \x00 \u202e1)",  # non-UTF-8 bytes (surrogateescape), NUL
        "PYTHON(./temp/function.py " + "(" * 50 + ")" * 50 + ")",
        "PYTHON(./temp/function.py '''x''') PYTHON(./temp/function.py \"\"\"x\"\"\")",
        "NOTE(read function.py) PYTHON(./temp/function.py 1)",
    ]


def forbidden_texts(catalog) -> list[str]:
    out = []
    for tid in LEAK_TARGETS:
        h = catalog.get(tid).hidden
        out.append(h.canary)
        if h.code:
            out.append(h.code.strip().splitlines()[-1].strip())  # the return expression
    return [s for s in out if s]


async def replies_for(client, target_id, text, mode):
    parsed = parse_message(text, mode=mode)
    replies = [format_error(e) for e in parsed.errors]
    for cmd in parsed.commands:
        try:
            outs = await client.call(target_id, cmd.inputs)
            replies.append(format_reply(outs, mode))
        except TargetServiceError as e:
            assert e.category in ("agent", "target"), e.detail  # never an infrastructure crash
            replies.append(format_error(e.detail))
    return replies


@pytest.mark.parametrize("mode", ["default", "find-compat"])
async def test_no_canary_and_nothing_executed(leak_pool, leak_catalog, mode):
    client = ServiceTargetClient(leak_catalog, leak_pool)
    forbidden = forbidden_texts(leak_catalog)
    assert any(f.startswith("CANARY-") for f in forbidden)
    n_replies = 0
    try:
        for tid in LEAK_TARGETS:
            for text in adversarial_messages():
                for reply in await replies_for(client, tid, text, mode):
                    n_replies += 1
                    for f in forbidden:
                        assert f not in reply, (text[:80], f)
                    assert "root:x:0" not in reply  # /etc/passwd content never comes back
    finally:
        await client.aclose()
    assert n_replies > len(adversarial_messages())
    leftovers = [p for p in os.listdir("/tmp") if p.startswith(os.path.basename(MARK))]
    assert leftovers == []
