"""Cases the exercises show and check: real tool results, made the same way every time."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..results import ToolResult
from ._core import simulate

__all__ = ["sales_results"]

_CACHE: dict[str, ToolResult] = {}


def sales_results() -> dict[str, ToolResult]:
    """analyze_sales_csv run through a ToolExecutor, three ways (made once, then cached).

    "ok": sales.csv (显示器 4495, total 9692); "missing": FILE_NOT_FOUND;
    "invalid": INVALID_SALES_CSV (line 4 has quantity "abc"), from a copy of the data folder whose
    sales.csv is the fault case: the registry reads that folder, the environment is left alone.
    """
    if _CACHE:
        return dict(_CACHE)
    from ..executor import ToolExecutor
    from ..tools import course_dir, default_registry

    def call(path: str, call_id: str, data_dir: Path | None = None) -> ToolResult:
        executor = ToolExecutor(registry=default_registry(data_dir=data_dir))
        call = {"id": call_id, "type": "function",
                "function": {"name": "analyze_sales_csv", "arguments": f'{{"path": "{path}"}}'}}

        async def go(clock: Any) -> ToolResult:
            return await executor.run_tool_call(call)
        return simulate(go)[0]

    _CACHE["ok"] = call("sales.csv", "call_ok")
    _CACHE["missing"] = call("sales_2023.csv", "call_missing")
    faults = course_dir() / "data" / "faults" / "sales" / "quantity_abc.csv"
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(faults, Path(tmp) / "sales.csv")
        _CACHE["invalid"] = call("sales.csv", "call_invalid", Path(tmp))
    return dict(_CACHE)
