"""One registry of everything that confines code (harness/sandbox/base.py `BACKENDS`): the
command and service backends, `local` (the compose daemons' backend) and the lab's sessions
(`lab-bwrap`, `lab-docker`), each a `Sandbox` that says what it offers and refuses the rest."""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import ClassVar

import pytest

from interp_harness.harness.sandbox import BACKENDS, Limits, Sandbox, SandboxError, sandbox_class
from interp_harness.harness.sandbox.local import LocalSandbox


def test_every_backend_is_a_sandbox_named_as_registered() -> None:
    assert {"bwrap", "docker", "inprocess", "local", "lab-bwrap", "lab-docker"} <= set(BACKENDS)
    for name in BACKENDS:
        cls = sandbox_class(name)
        assert issubclass(cls, Sandbox) and cls.name == name, name
        assert cls.offers and cls.offers <= {"run", "service", "session"}, name
    assert sandbox_class("local") is LocalSandbox
    # the lab's backends hold a session (its kernel on a channel) and nothing else
    assert sandbox_class("lab-bwrap").offers == sandbox_class("lab-docker").offers == {"session"}
    assert "session" not in sandbox_class("bwrap").offers


def test_a_backend_refuses_what_it_does_not_offer() -> None:
    lab = sandbox_class("lab-bwrap")()
    with pytest.raises(SandboxError, match="'lab-bwrap' does not run commands; it offers: session"):
        lab.run(["true"])
    with pytest.raises(SandboxError, match="does not start sessions; it offers: run, service"):
        asyncio.run(
            LocalSandbox().start_session(
                {"m.py": b""}, main="m.py", limits=Limits(), stderr=tempfile.TemporaryFile()
            )
        )


def test_a_backend_must_define_the_hooks_of_what_it_offers() -> None:
    with pytest.raises(TypeError, match="offers 'session' but does not define _start_session"):

        class Half(Sandbox):  # noqa: F841 - the class statement is what fails
            name = "half"
            offers: ClassVar[frozenset[str]] = frozenset({"session"})


def test_local_runs_a_command_through_the_registry() -> None:
    res = sandbox_class("local")().run(["/bin/sh", "-c", "echo $HOME; echo ok"])
    home, ok = res.stdout.decode().splitlines()
    assert res.returncode == 0 and ok == "ok"
    assert home and home != os.environ.get("HOME")  # its own files directory, not ours


@pytest.mark.usefixtures("needs_bwrap")
async def test_a_lab_bwrap_session_is_a_confined_process_on_its_pipes() -> None:
    echo = (
        b"import os, sys\n"
        b"print(os.getuid(), os.path.exists('/work'), os.path.exists('/opt/lab/echo.py'),"
        b" flush=True)\n"
        b"for line in sys.stdin:\n    print(line.strip().upper(), flush=True)\n"
    )
    backend = sandbox_class("lab-bwrap")(tmp_mb=8, packages=())
    log = tempfile.TemporaryFile()
    s = await backend.start_session(
        {"echo.py": echo}, main="echo.py", limits=Limits(memory_mb=512, max_procs=16), stderr=log
    )
    try:
        assert s.proc.stdin is not None and s.proc.stdout is not None
        first = await asyncio.wait_for(s.proc.stdout.readline(), 30)
        assert first == b"65534 False True\n", log.read()  # uid nobody, no host tree, its files
        s.proc.stdin.write(b"hi\n")
        await s.proc.stdin.drain()
        assert await asyncio.wait_for(s.proc.stdout.readline(), 10) == b"HI\n"
        assert s.jail.cpu_s() >= 0.0
        await s.jail.started()
    finally:
        s.jail.kill()
        await asyncio.wait_for(s.proc.wait(), 10)
        await s.jail.release()
        log.close()
    assert s.proc.returncode is not None
