"""The checker's namespaces as an ordinary user, not only as root (the suite itself runs as root in CI).

A notebook's referee makes itself non-dumpable and forks its workers, which inherit that; the /proc/self
files of a non-dumpable process belong to global root, so after unshare(CLONE_NEWUSER) an ordinary user's
worker could not write its own uid_map (root can: nothing noticed). Every check(fn) of every chapter then
died with "退出码 1". Here a user is created for the test, and `_sandbox.py` (standard library only) is run
by Debian's python3 as that user, as the referee runs it: non-dumpable, then a fork enters the namespaces.
`.ci/run` runs the checker's own tests (check(fn), the shell checker, the class report) as such a user too.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"  # an interpreter every user can run (root's own may live in /root)
RUNUSER = shutil.which("runuser")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("useradd") or not RUNUSER
    or not os.access(SYSTEM_PYTHON, os.X_OK), reason="creates a user: Linux, root, useradd, runuser, /usr/bin/python3")

AS_THE_REFEREE = r'''
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _sandbox

assert _sandbox.harden()  # as the notebook's referee does first
worker = os.fork()
if worker == 0:
    try:
        _sandbox.enter()
    except OSError as exc:
        print("COULD NOT ENTER:", exc, flush=True)
        os._exit(1)
    import ctypes
    print("ENTERED pid", os.getpid(), "dumpable", ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), flush=True)
    os._exit(0)
print("worker ended", os.waitpid(worker, 0)[1], flush=True)
'''


@pytest.fixture(scope="module")
def user() -> Iterator[str]:
    name = f"trl-{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True, capture_output=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


def as_user(user: str, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": f"/home/{user}", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run([RUNUSER, "-u", user, "--", *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def sandbox_copy() -> Iterator[Path]:
    """toolkit/check/_sandbox.py in a folder every user can read (the checkout may be in root's home)."""
    folder = Path(tempfile.mkdtemp(prefix="trl-sandbox-"))
    try:
        os.chmod(folder, 0o755)
        shutil.copy(ROOT / "toolkit" / "check" / "_sandbox.py", folder / "_sandbox.py")
        (folder / "as_the_referee.py").write_text(AS_THE_REFEREE, encoding="utf-8")
        for file in folder.iterdir():
            os.chmod(file, 0o644)
        yield folder
    finally:
        shutil.rmtree(folder)


def test_a_worker_forked_from_the_non_dumpable_referee_enters_its_namespaces_as_an_ordinary_user(
        user: str, sandbox_copy: Path) -> None:
    if as_user(user, "unshare", "--user", "--map-root-user", "true").returncode != 0:
        pytest.skip("this system gives an ordinary user no user namespaces: the checker takes its fallback")
    done = as_user(user, SYSTEM_PYTHON, "-I", "-S", str(sandbox_copy / "as_the_referee.py"))
    assert "ENTERED pid 2 dumpable 0" in done.stdout, done.stdout + done.stderr  # isolated, and closed again
    assert "worker ended 0" in done.stdout, done.stdout + done.stderr


def test_the_run_time_check_enters_as_a_forked_worker_would(user: str, sandbox_copy: Path) -> None:
    """The check that decides between the namespaces and the fallback takes the workers' own path."""
    if as_user(user, "unshare", "--user", "--map-root-user", "true").returncode != 0:
        pytest.skip("this system gives an ordinary user no user namespaces: the checker takes its fallback")
    done = as_user(user, SYSTEM_PYTHON, "-I", "-S", str(sandbox_copy / "_sandbox.py"), "--selftest")
    assert done.stdout.strip() == "ok" and done.returncode == 0, done.stdout + done.stderr
