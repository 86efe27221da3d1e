"""Keeping the student's code away from the checker, below Python: the process table, the files, the network.

Two layers, each used where the system has it:

  - `harden()`: the referee (and every process of the checker) makes itself non-dumpable
    (prctl PR_SET_DUMPABLE 0, Linux): another process of the same user can no longer open its
    /proc/<pid>/fd/*, read its memory or attach a debugger to it. Elsewhere it does nothing.
  - `enter()`: on Linux where unprivileged user namespaces work (checked at run time, once, by
    `problem()`), each worker starts in namespaces of its own (as `unshare --user --map-root-user
    --pid --mount --net` would): its own process table (it cannot see, signal or kill the checker),
    every file system read-only (it cannot rewrite the checker's files, the toolkit, the Python it
    runs on, or the teacher's checkout), a private writable tmp (TMPDIR, on a tmpfs of its own) and no
    network but a loopback of its own (up, so a notebook's own offline model server answers the notebook's
    cells; nothing outside the namespace can be reached through it).

The worker the referee started stays outside the namespace and only mirrors how the one inside
ended (its exit code, or the signal that killed it), so the referee's time limits and crash messages
hold as before. `TOOLKIT_CHECK_SANDBOX=off` turns the namespaces off (the fallback path, for tests and
for a system where they misbehave); `problem()` then says so, and the class report says it once.

This module imports only the standard library: `python -I -S _sandbox.py --selftest` is its run-time check.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import signal
import socket
import struct
import subprocess
import sys

SETTING = "TOOLKIT_CHECK_SANDBOX"  # "off": no namespaces
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
PRIVATE_TMP = "/dev/shm"  # a tmpfs of the worker's own is mounted here; TMPDIR points into it

_problem: str | None = None


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


def harden() -> bool:
    """Make this process non-dumpable (its /proc entries and memory closed to other processes); False if not."""
    libc = _libc()
    if libc is None:
        return False
    return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


_selftest_run: subprocess.Popen | None = None


def problem() -> str:
    """Why the workers cannot be isolated here ("" when they can): checked once per process."""
    global _problem
    if _problem is None:
        _problem = _find_problem()
    return _problem


def check_soon() -> None:
    """Start the run-time check now, in the background (its answer is read by the first `problem()`)."""
    global _selftest_run
    if _problem is None and _selftest_run is None and not _switched_off() and sys.platform.startswith("linux"):
        try:
            _selftest_run = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), "--selftest"],
                                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True)
        except OSError:
            _selftest_run = None


def _switched_off() -> bool:
    return os.environ.get(SETTING, "").strip().lower() in ("off", "0", "no", "false")


def _find_problem() -> str:
    global _selftest_run
    if _switched_off():
        return f"已用 {SETTING}=off 关闭隔离"
    if not sys.platform.startswith("linux"):
        return f"只有 Linux 能隔离（这台机器是 {sys.platform}）"
    check_soon()
    if _selftest_run is None:
        return "自检没能运行"
    try:
        out, err = _selftest_run.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        _selftest_run.kill()
        return "自检没有在 30 秒内结束"
    finally:
        code, _selftest_run = _selftest_run.returncode, None
    if code == 0 and out.strip() == "ok":
        return ""
    return (out.strip() or err.strip().splitlines()[-1:] or [f"退出码 {code}"])[0][:200]


def plan() -> dict | None:
    """What a new worker is told: the namespaces to enter, or None where they are off or do not work."""
    return None if problem() else {"readonly": True}


class SandboxError(OSError):
    """The namespaces could not be set up (the reason in Chinese)."""


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SandboxError(err, f"{what} 失败：{os.strerror(err)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter(readonly: bool = True) -> None:
    """Move this (single-threaded) process into namespaces of its own; return in the process that goes on.

    This process unshares, then forks twice: the outer one (the worker the referee knows) waits and ends
    as the inner one ended; the middle one is the namespace's init (pid 1), which mounts the file systems
    and reaps; the inner one (pid 2) returns and serves."""
    libc = _libc()
    if libc is None:
        raise SandboxError(0, "没有 libc")
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID), "unshare")
    _map_ids(libc, uid, gid)
    _loopback_up()
    read_end, write_end = os.pipe()
    if os.fork():
        _mirror(read_end, write_end)  # never returns
    os.close(read_end)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _mount(libc, readonly)
    inner = os.fork()
    if inner:
        _init(inner, write_end)  # never returns
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.close(write_end)
    tmp = os.path.join(PRIVATE_TMP, "tmp")
    os.makedirs(tmp, exist_ok=True)
    os.environ.update(TMPDIR=tmp, IPYTHONDIR=os.path.join(tmp, ".ipython"),
                      MPLCONFIGDIR=os.path.join(tmp, ".matplotlib"))


def _map_ids(libc: ctypes.CDLL, uid: int, gid: int) -> None:
    """Map root of the new user namespace to this user, as `unshare --map-root-user` does.

    A worker forked from the non-dumpable referee (the notebook's referee forks its workers) is non-dumpable
    too, and the /proc/self files of a non-dumpable process belong to global root: an ordinary user could not
    open its own uid_map (root could, which is how this went unnoticed). So the process is dumpable for the
    three writes only, and non-dumpable again before anything else runs: the other processes of the user that
    could attach to it meanwhile are the kernel that asked for the check (which runs the student's code
    anyway) and the referee; earlier workers are in namespaces of their own and cannot name it. Everything
    forked after this, the worker that runs the student's code included, inherits the non-dumpable state."""
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    finally:
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # not harden(): finding libc again runs ldconfig, and the first
        # process forked after unshare(CLONE_NEWPID) would be that one, the namespace's init, gone at once


def _loopback_up() -> None:
    """Bring up the new network namespace's own loopback (as `ip link set lo up`; a namespace's lo starts down):
    a notebook's cells talk to the offline model the notebook itself serves on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)  # struct ifreq: the name, then ifr_flags
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def _close_all_but(keep: int) -> None:
    os.closerange(0, keep)
    os.closerange(keep + 1, 1 << 16)


def _mirror(read_end: int, write_end: int) -> None:
    """Outside the namespaces: wait for the inside to end, then end the same way (exit code or signal)."""
    os.close(write_end)
    _close_all_but(read_end)  # the pipe to the referee among them: its end must see the inside die
    status = b""
    while True:
        chunk = os.read(read_end, 64)
        if not chunk:
            break
        status += chunk
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        pass
    kind, _, value = status.decode("ascii", "replace").partition(" ")
    if kind == "S" and value.isdigit():
        signal.signal(int(value), signal.SIG_DFL)
        os.kill(os.getpid(), int(value))
    os._exit(int(value) if kind == "E" and value.lstrip("-").isdigit() else 70)


def _init(inner: int, write_end: int) -> None:
    """pid 1 of the namespace: reap every child; when the worker ends, report how and end (taking all with it)."""
    _close_all_but(write_end)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(70)
        if pid == inner:
            how = f"S {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"E {os.WEXITSTATUS(status)}"
            os.write(write_end, how.encode("ascii"))
            os._exit(0)


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4]
            points.append(point.encode().decode("unicode_escape") if "\\" in point else point)
    return sorted(set(points), key=len)


def _mount(libc: ctypes.CDLL, readonly: bool) -> None:
    mount = libc.mount
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    _check(mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    if readonly:
        for point in _mount_points():
            if point.startswith(("/proc", "/dev")):
                continue  # a new /proc follows; devices stay usable (/dev/null)
            try:
                kept = _kept_flags(os.statvfs(point).f_flag)
            except OSError:
                continue
            mount(None, point.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None)
        if os.access("/", os.W_OK) and os.statvfs("/").f_flag & os.ST_RDONLY == 0:
            raise SandboxError(0, "没能把文件系统设为只读")
    _check(mount(b"tmpfs", PRIVATE_TMP.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=1777,size=256m"),
           f"mount tmpfs {PRIVATE_TMP}")
    _check(mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount proc")


def _kept_flags(flag: int) -> int:
    """The flags a bind remount must keep (the kernel refuses to drop locked ones)."""
    kept = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                   (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME)):
        if flag & st:
            kept |= ms
    return kept


def _selftest() -> None:
    """Enter the namespaces as a worker would and look around: prints "ok", or the reason it cannot.

    As a worker would: a fork of a non-dumpable process (the notebook's referee forks its workers), not this
    freshly started one, so a system where only the latter can enter them gets the fallback, not a worker
    that dies at every check."""
    harden()
    child = os.fork()
    if child:
        status = os.waitpid(child, 0)[1]
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)
    try:
        enter()
        assert len([p for p in os.listdir("/proc") if p.isdigit()]) <= 3, "看得到命名空间外的进程"
        try:
            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".sandbox-probe"), "w"):
                pass
            raise AssertionError("检查器的文件仍然可写")
        except OSError:
            pass
        with open(os.path.join(os.environ["TMPDIR"], "probe"), "w") as f:
            f.write("ok")
    except (OSError, AssertionError) as exc:
        print(f"{exc}", flush=True)
        os._exit(1)
    print("ok", flush=True)
    os._exit(0)


if __name__ == "__main__" and sys.argv[1:] == ["--selftest"]:
    _selftest()
