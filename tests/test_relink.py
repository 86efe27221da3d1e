"""tools/relink.py: a stale link into the toolkit's source is pointed at what it names again; a good one is kept."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("relink", ROOT / "tools" / "relink.py")
relink = importlib.util.module_from_spec(spec)
spec.loader.exec_module(relink)


def _lines(target: str, first: int, last: int) -> str:
    return "\n".join((ROOT / target).read_text(encoding="utf-8").splitlines()[first - 1:last])


def test_a_stale_link_is_pointed_at_the_definition_and_a_good_one_is_kept():
    stale: list[str] = []
    text = "看 [`smart_truncate`](../toolkit/truncate.py#L1-L2) 和 [`ToolExecutor`](../toolkit/executor.py#L1-L3)"
    fixed = relink.relink(text, stale)
    spans = re.findall(r"\((\.\./toolkit/[^#]+)#L(\d+)-L(\d+)\)", fixed)
    assert len(spans) == 2 and len(stale) == 2
    for (target, first, last), name in zip(spans, ("smart_truncate", "ToolExecutor")):
        shown = _lines(target[3:], int(first), int(last))
        assert re.search(rf"^(def|class) {name}\b", shown, re.M)
    assert relink.relink(fixed, stale) == fixed and len(stale) == 2, "a link that shows its name is left alone"


def test_a_name_it_cannot_find_is_reported_and_left_alone():
    stale: list[str] = []
    text = "[`no_such_function`](../toolkit/truncate.py#L1-L2)"
    assert relink.relink(text, stale) == text and "not found" in stale[0]
