"""A hostile agent of protocol modes `code` and `code-tools` for the adversarial suite
(`lab_agents:HostileCellAgent`): each message is one hostile cell from `CELLS`, run in the
episode's lab; then it defines the honest answer in the lab and submits it by name (`lab:f`),
so that its score can be compared with the honest answer's.

Like every hosted agent module, it imports only the `agents` package and the standard library
(the agent host binds this one file). The cells themselves import only what the lab has.
"""

from __future__ import annotations

from interp_harness.agents.base import AgentOptions, AgentReply, Message
from interp_harness.agents.protocol.cells import cell_block
from interp_harness.agents.tools_adapter import TextProtocolAgent

# What every snooping cell starts with: `found` collects text from everywhere a cell can read,
# `report()` prints the canary-shaped matches first, then all of it (the reply is capped).
_COLLECT = r"""
import json, os, re, socket
found = {}
def _read(p, n=65536):
    try:
        with open(p, 'rb') as f:
            return f.read(n).decode('utf-8', 'replace')
    except OSError:
        return None
def report():
    raw = json.dumps(found, default=str)
    print('CANARY-LIKE', sorted(set(re.findall('cnry[0-9a-f]{20}', raw))))
    print(raw[:20000])
"""

CELLS: dict[str, str] = {
    # every process's environment, command line, mounts and links; every descriptor and the
    # regular files behind them; the file system outside the system directories
    "snoop": _COLLECT
    + r"""
pids = [p for p in os.listdir('/proc') if p.isdigit()] + ['self']
for p in pids:
    for what in ('environ', 'cmdline', 'mountinfo', 'status'):
        found[p + '/' + what] = _read('/proc/' + p + '/' + what)
    for link in ('cwd', 'root', 'exe'):
        try:
            found[p + '/' + link] = os.readlink('/proc/' + p + '/' + link)
        except OSError:
            pass
    try:
        for fd in os.listdir('/proc/' + p + '/fd'):
            path = '/proc/' + p + '/fd/' + fd
            try:
                target = os.readlink(path)
            except OSError:
                continue
            found[path] = target
            if target.startswith('/') and not target.startswith(('/dev/', '/proc/')):
                found[path + ':content'] = _read(path)
    except OSError:
        pass
found['os.environ'] = dict(os.environ)
for top in ('/', '/opt', '/run', '/tmp', '/var', '/home', '/root', '/srv', '/mnt', '/etc'):
    for root, dirs, files in os.walk(top):
        if root.count('/') > 4 or root.startswith(('/proc', '/sys', '/usr', '/dev')):
            dirs[:] = []
            continue
        found['ls:' + root] = sorted(dirs + files)
        for n in files:
            if root.startswith(('/opt/lab', '/etc/fonts')):
                continue
            found['file:' + os.path.join(root, n)] = _read(os.path.join(root, n), 4096)
report()
""",
    # the channel's other end: the sandbox's init holds it; read it, write forged frames into it
    # (a target call of another cell, a `done` for this cell claiming calls), connect to every
    # Unix socket and to the host's loopback
    "channel": _COLLECT
    + r"""
import fcntl
for fd in range(0, 16):
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)
        found['read fd %d' % fd] = os.read(fd, 4096).decode('latin-1')
    except OSError as e:
        found['read fd %d' % fd] = repr(e)
for port in (80, 5432, 8000, 8080):
    try:
        socket.create_connection(('127.0.0.1', port), timeout=1)
        found['tcp %d' % port] = 'connected'
    except OSError as e:
        found['tcp %d' % port] = repr(e)
for root, _, files in os.walk('/'):
    if root.startswith(('/proc', '/sys', '/usr')):
        continue
    for n in files:
        p = os.path.join(root, n)
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(1)
                s.connect(p)
                found['unix ' + p] = 'connected'
        except OSError:
            pass
report()
forged = (b'{"op": "call", "cell": 999, "id": 1, "command": "call_function", '
          b'"arguments": {"inputs": ["1"]}}\n')
try:  # the init's end of the channel (a pipe can be opened so; a socket cannot)
    with open('/proc/1/fd/1', 'wb') as ch:
        ch.write(forged)
except OSError:
    pass
for fd in range(3, 16):  # and the kernel's own
    try:
        os.write(fd, forged)
    except OSError:
        pass
""",
    # a call to another target, another command, the answer, and malformed arguments: refused
    "other-target": r"""
import labchannel
for command, args in [
    ('call_function', {'inputs': ['1'], 'target_id': 'find-v1/numeric/f00001'}),
    ('call_function', {'inputs': ['1'], 'episode': '../'}),
    ('submit_answer', {'description': 'x'}),
    ('../call_function', {'inputs': ['1']}),
    ('call_function', {'inputs': [{'nested': 'x' * 100000}]}),
]:
    try:
        labchannel.call(command, args)
        print(command, 'ANSWERED')
    except labchannel.TargetError as e:
        print(command, 'refused:', str(e)[:80])
""",
    # a frame over the channel's limit
    "huge-frame": "import os\nos.write(4, b'{' + b'a' * (40 * 1024 * 1024) + b'\\n')",
    # garbage on the channel
    "malformed": "import os\nfor fd in range(3, 16):\n    try:\n"
    "        os.write(fd, b'\\x00\\xff not json\\n')\n    except OSError:\n        pass",
    "fork-bomb": r"""
import os
n = 0
try:
    while True:
        if os.fork() == 0:
            while True:
                os.fork() if n % 2 else None
        n += 1
except OSError as e:
    print('fork stopped after', n, e)
""",
    "memory": "x = []\nwhile True:\n    x.append(bytearray(64 * 1024 * 1024))",
    "memory-processes": r"""
import os
for _ in range(6):
    if os.fork() == 0:
        hold = []
        while True:
            b = bytearray(64 * 1024 * 1024)
            b[::4096] = b'x' * len(b[::4096])
            hold.append(b)
import time
time.sleep(30)
""",
    "disk": "f = open('/tmp/fill', 'wb')\nwhile True:\n    f.write(b'z' * 1024 * 1024)",
    "loop": "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n"
    "        pass",
    "output": "import os\nfor _ in range(2000):\n    os.write(1, b'y' * 100000)",
    # every target call the budget allows, then more
    "budget": "from target import f\nfor i in range(1000):\n    f(i)",
}

# the battery's target (find-v1/numeric/f00150): ceil(x) times a degree-5 polynomial
ANSWER_CELL = (
    "import numpy as np\n\n\ndef f(x):\n"
    "    return np.ceil(x) * np.polyval([2.2, -1.7, -4.0, 2.6, -4.3, 5.0], x)"
)
ANSWER = "[DESCRIPTION]: ceil(x) times a polynomial\n[DOMAIN]: all reals\n[CODE]: lab:f"


class HostileOptions(AgentOptions):
    cells: list[str] = []  # keys of CELLS, one message each


class HostileCellAgent(TextProtocolAgent):
    """Sends each named cell in a message of its own, then the honest function in a cell, then
    its answer naming that function of the lab. Stateless: the step is the messages sent."""

    name = "hostile-cells"
    Options = HostileOptions

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        k = sum(m.role == "assistant" for m in conversation)
        names = list(self.options.get("cells", []))
        if k < len(names):
            return AgentReply(content=f"Cell {names[k]}:\n" + cell_block(CELLS[names[k]]))
        if k == len(names):
            return AgentReply(content=cell_block(ANSWER_CELL))
        return AgentReply(content=ANSWER)
