"""What can go wrong in a check, told apart so the table blames the right thing (see _core.py): a leaf module,
so the referee's parts (_core, _bridge, _player) can raise and catch these without importing each other."""
from __future__ import annotations

__all__ = ["Fail", "CheckerError", "Raised", "Hang", "Crashed", "Tampered"]


class Fail(Exception):
    """Raised by a check: the student's code ran but did the wrong thing (message in Chinese)."""


class CheckerError(Exception):
    """The checker itself went wrong (a bug in a check or a probe, coverage not reached): not the student's fault."""


class Raised(Exception):
    """The student's code raised: the exception's class names (most derived first) and its message."""

    def __init__(self, names: list[str], message: str, printed: str = "") -> None:
        super().__init__(f"{names[0]}: {message}" if message else names[0])
        self.names, self.message, self.printed = names, message, printed

    def is_a(self, name: str) -> bool:
        """True when the student's exception is `name` or a subclass of it (by class name)."""
        return name in self.names


class Hang(BaseException):
    """No answer from the worker within the time limit (a BaseException: property tests must not shrink it)."""

    def __init__(self, limit: float) -> None:
        super().__init__(f"超过 {limit:g} 秒没有返回：是不是死循环？（或者在等永远不会来的东西，比如 input()）")


class Crashed(BaseException):
    """The worker process died while running the student's code."""

    def __init__(self, code: int | None) -> None:
        self.code = code
        ended = "崩溃了" if code is not None and code < 0 else "直接退出了"
        super().__init__(f"你的代码让检查进程{ended}（退出码 {code}）：{why_it_ended(code)}")


class Tampered(Crashed):
    """The worker sent what the referee's vocabulary does not have (_session.MESSAGES): it was ended."""

    def __init__(self, why: str) -> None:
        BaseException.__init__(self, f"检查进程发来了检查器不认的消息（{why}）：你的代码改动了它和检查器之间的通信？"
                                     "检查器已结束它，这一项不通过")
        self.code = None


SIGNALS = {  # how a process ended by a signal (exit code -N) most likely got there
    11: "SIGSEGV，段错误：进程读写了不该碰的内存，多半是 ctypes 这类直接操作内存的代码，或者递归太深",
    6: "SIGABRT：某个 C 扩展自己放弃了运行",
    9: "SIGKILL：被强行结束了，常见原因是内存用光了",
    15: "SIGTERM：被别的进程结束了",
    7: "SIGBUS：内存访问出错，多半是 ctypes 这类直接操作内存的代码",
    8: "SIGFPE：底层的算术错误（例如 C 扩展里除以 0）",
}


def why_it_ended(code: int | None) -> str:
    """A Chinese guess at why a process ended with this exit code: a signal (negative) is not an exit call."""
    if code is not None and code < 0:
        return f"它被信号 {-code} 结束了（{SIGNALS.get(-code, '不是正常退出')}）"
    return "是不是调用了 os._exit / sys.exit，或者把内存用光了？"
