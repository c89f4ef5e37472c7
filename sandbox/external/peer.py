"""Which local processes belong to an external agent's episode, read from ``/proc`` (Linux).

An episode's URLs carry a random token, but the token is in the agent's environment, and any
process of the same user can read ``/proc/<pid>/environ``: another episode's agent could post a
``Finish`` into this one. So once the agent's command is started, the episode's server answers
only connections made by the agent's own processes, which the kernel says and no process can
forge:

- **who connected**: the server sees the client's ``127.0.0.1:<port>``; the kernel's socket
  diagnostics (``sock_diag`` over netlink, else ``/proc/net/tcp``) give that socket's inode,
  and the process holding ``socket:[<inode>]`` among its ``/proc/<pid>/fd`` links is the one
  that connected (the agent's processes are looked at first, every process only when none of
  them holds it);
- **whose process it is**: the agent runs in a session of its own (``setsid``: its session id
  is its pid); a process belongs to the episode when it is in that session, or when its parent
  chain leads to a process that is (a child that called ``setsid`` itself). A process cannot
  join another's session, nor change its parent.

The same walk finds what to stop when the episode ends (``EpisodeProcesses.members``): the
session, every descendant (a child in a new session included), and every process whose
environment still holds the episode's token (``marker``: a daemon whose parent is gone).

Limits: Linux only (without ``/proc/net/tcp`` nothing is checked: the token alone guards, as
on other systems); a process that left the session and whose parent died is not the agent's
for the check (it can no longer call the tools, it is still stopped through ``marker`` unless
it also cleared its environment); an agent whose processes are not the command's descendants
(a container started through a daemon) must turn the check off (``-O bind_process=false``);
processes of another user cannot be read (not the agent's). An agent served over HTTP
(``-O url=``) is not a local process: its episodes are guarded by the token only.
May import the standard library only.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["EpisodeProcesses", "Proc", "processes", "socket_inode"]

PROC = "/proc"


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    sid: int


def _stat(pid: int) -> Proc | None:
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = text.rsplit(")", 1)[-1].split()  # the name may hold spaces and parentheses
    if len(rest) < 4 or rest[0] == "Z":  # a zombie has ended
        return None
    return Proc(pid, int(rest[1]), int(rest[3]))


def processes() -> Iterator[Proc]:
    """Every live process this one can see."""
    with contextlib.suppress(OSError):
        for name in os.listdir(PROC):
            if name.isdigit() and (proc := _stat(int(name))) is not None:
                yield proc


NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, NLMSG_ERROR, NLM_F_REQUEST = 4, 20, 2, 1
_LOOPBACK = socket.inet_aton("127.0.0.1") + bytes(12)
_NO_COOKIE = struct.pack("=III", 0, 0xFFFFFFFF, 0xFFFFFFFF)  # any interface, no cookie
_INODE_AT = 16 + 4 + 48 + 16  # nlmsghdr, inet_diag_msg's head, its sockid, four u32 before


def _diag_inode(client_port: int, server_port: int) -> int | None:
    """The inode from the kernel's socket diagnostics (``sock_diag``: one exact lookup, about
    40 us), or None when it has no such socket. ``OSError`` when netlink is not there."""
    sockid = struct.pack("!HH", client_port, server_port) + _LOOPBACK + _LOOPBACK + _NO_COOKIE
    request = struct.pack("=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
    header = struct.pack("=IHHII", 16 + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(1.0)
        nl.send(header + request)
        answer = nl.recv(8192)
    kind = struct.unpack_from("=H", answer, 4)[0] if len(answer) >= 16 else NLMSG_ERROR
    if kind != SOCK_DIAG_BY_FAMILY or len(answer) < _INODE_AT + 4:
        return None
    return int(struct.unpack_from("=I", answer, _INODE_AT)[0])


def socket_inode(client_port: int, server_port: int) -> int | None:
    """The inode of the TCP socket connected from ``127.0.0.1:client_port`` to
    ``127.0.0.1:server_port`` on this machine (the client's end), or None when there is none:
    asked of ``sock_diag``, else read from ``/proc/net/tcp`` (slower: the whole table)."""
    with contextlib.suppress(OSError):
        return _diag_inode(client_port, server_port)
    try:
        with open(f"{PROC}/net/tcp", "rb") as fh:
            table = fh.read().decode("ascii", "replace").splitlines()[1:]
    except OSError:
        return None
    for row in table:
        cols = row.split()
        if len(cols) < 10:
            continue
        local, remote = cols[1].rpartition(":")[2], cols[2].rpartition(":")[2]
        with contextlib.suppress(ValueError):
            if int(local, 16) == client_port and int(remote, 16) == server_port:
                return int(cols[9])
    return None


def _holds(pid: int, link: str) -> bool:
    try:
        fds = os.listdir(f"{PROC}/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"{PROC}/{pid}/fd/{fd}") == link:
                return True
    return False


def _environ_holds(pid: int, marker: bytes) -> bool:
    try:
        with open(f"{PROC}/{pid}/environ", "rb") as fh:
            return marker in fh.read()
    except OSError:
        return False


@dataclass
class EpisodeProcesses:
    """The processes of one agent started in a session of its own (see the module docstring)."""

    leader: int
    """The agent's pid: its session id and process group."""
    marker: bytes = b""
    """Text of the episode's environment that no other process has (its token)."""
    _allowed: set[int] = field(default_factory=set)
    """Inodes of sockets already found to be the agent's."""
    _known: set[int] = field(default_factory=set)
    """The agent's processes when last looked up (a new connection is looked for among
    them first: a few fd tables instead of every process)."""

    @staticmethod
    def available() -> bool:
        return os.path.exists(f"{PROC}/net/tcp")

    def members(self, *, by_marker: bool = False) -> set[int]:
        """The agent's live processes: its session, their descendants, and (``by_marker``)
        every process whose environment holds ``marker``."""
        procs = {p.pid: p for p in processes()}
        own = {pid for pid, p in procs.items() if p.sid == self.leader}
        if self.leader in procs:
            own.add(self.leader)
        children: dict[int, list[int]] = {}
        for p in procs.values():
            children.setdefault(p.ppid, []).append(p.pid)
        todo = list(own)
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in own:
                    own.add(child)
                    todo.append(child)
        if by_marker and self.marker:
            me = os.getpid()
            own |= {pid for pid in procs if pid != me and _environ_holds(pid, self.marker)}
        own.discard(os.getpid())
        return own

    def connected(self, client_port: int, server_port: int) -> bool:
        """Whether the connection from ``client_port`` was made by one of the agent's processes
        (True without ``/proc``: nothing to check)."""
        if not self.available():
            return True
        inode = socket_inode(client_port, server_port)
        if inode is None:
            return False
        if inode in self._allowed:
            return True
        link = f"socket:[{inode}]"
        if not any(_holds(pid, link) for pid in self._known):
            self._known = self.members()  # a process started since, or one that ended
            if not any(_holds(pid, link) for pid in self._known):
                return False
        self._allowed.add(inode)
        return True

    def signal_all(self, sig: int) -> set[int]:
        """Send ``sig`` to the agent's group and to each of its processes (``members`` with
        the marker); the pids signalled."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.leader, sig)
        found = self.members(by_marker=True)
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        return found
