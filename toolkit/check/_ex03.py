"""Exercise 03: retry_with_deadline — only transient errors, Retry-After, a deadline, waits on the simulated clock."""
from __future__ import annotations

from ._ch03 import CHECKS
from ._core import Exercise
from ._tools import retry_run

EXERCISE = Exercise("03", "03_retry", "重试：只重试暂时性错误，遵守 Retry-After 和总时限", "retry_with_deadline", CHECKS,
                    probes=(retry_run,))
