"""tools/relink.py: a link into the toolkit's source spans exactly what it names; an imprecise one is rewritten,
a precise one kept, a stated sub-range found by its fragments."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("relink", ROOT / "tools" / "relink.py")
relink = importlib.util.module_from_spec(spec)
spec.loader.exec_module(relink)

SOURCE = '''"""A module."""
LIMIT = 3
CODES = frozenset({
    "a",
    "b",
})
"""What CODES is for."""


def helper(x):
    LIMIT = x  # a local of the same name: not the definition
    return x


@dataclass(frozen=True)
class Policy:
    """A policy."""

    limit: int = LIMIT

    def run(self, n: int,
            m: int,
    ) -> int:
        budget = n - 40
        head = budget * 2 // 3
        tail = budget - head
        return head + tail

# --- next section ---
def after():
    pass
'''.splitlines()


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE, 1) if text in line)


def test_a_class_spans_from_its_decorator_to_its_last_line_without_trailing_blanks():
    assert relink.span(SOURCE, "Policy") == (_line("@dataclass"), _line("return head + tail"))


def test_an_assignment_spans_its_continuation_lines_and_a_module_level_one_wins_over_a_local():
    assert relink.span(SOURCE, "CODES") == (_line("CODES = "), _line("})"))
    assert relink.span(SOURCE, "LIMIT") == (2, 2)


def test_a_dotted_name_is_looked_up_inside_its_class_and_a_hanging_signature_belongs_to_the_def():
    assert relink.span(SOURCE, "Policy.run") == (_line("def run("), _line("return head + tail"))
    assert relink.span(SOURCE, "Policy.limit") == (_line("limit: int"),) * 2
    assert relink.span(SOURCE, "after") == (_line("def after"), len(SOURCE))
    assert relink.span(SOURCE, "Policy.nothing") is None


def test_a_sub_range_is_named_by_its_first_and_last_fragment_inside_the_definition():
    label = "`Policy.run` 里分预算的 `n - 40` 到 `tail = `"
    assert relink.expected_range(SOURCE, label) == ((_line("n - 40"), _line("tail = ")), "")
    assert relink.expected_range(SOURCE, "`helper` 的 `return x`") == ((_line("    return x"),) * 2, "")
    two = relink.expected_range(SOURCE, "`LIMIT` 和 `helper`")  # two names: from the first's start to the last's end
    assert two == ((2, _line("    return x")), "")
    want, why = relink.expected_range(SOURCE, "`helper` 里的 `n - 40`")  # only inside the named definition
    assert want is None and "not found in helper" in why


def test_a_label_naming_nothing_is_not_judged():
    assert relink.expected_range(SOURCE, "这个文件") == (None, "")
    assert relink.expected_range(SOURCE, "`ToolExecutor(parse=…)`") == (None, "")


def _exact(target: str, name: str) -> tuple[int, int]:
    return relink.span((ROOT / target).read_text(encoding="utf-8").splitlines(), name)


def test_an_imprecise_link_is_rewritten_to_the_exact_definition_and_a_precise_one_is_kept():
    first, last = _exact("toolkit/retry.py", "RetryPolicy")
    assert (ROOT / "toolkit/retry.py").read_text(encoding="utf-8").splitlines()[first - 1].startswith("@")
    # one line off at each end: the old rule (the def line inside the range) let this pass
    text = (f"看 [`RetryPolicy`](../toolkit/retry.py#L{first + 1}-L{last + 1}) 和 "
            "[`smart_truncate`](../toolkit/truncate.py) 和 [文件](../toolkit/executor.py)")
    stale: list[str] = []
    fixed = relink.relink(text, stale)
    got = re.findall(r"\]\(\.\./(toolkit/[^#)]+)#L(\d+)-L(\d+)\)", fixed)
    assert got == [("toolkit/retry.py", str(first), str(last)),
                   ("toolkit/truncate.py", *map(str, _exact("toolkit/truncate.py", "smart_truncate")))]
    assert "[文件](../toolkit/executor.py)" in fixed, "a link naming nothing is left alone"
    assert len(stale) == 2 and "RetryPolicy" in stale[0] and "no lines" in stale[1]
    again: list[str] = []
    assert relink.relink(fixed, again) == fixed and again == [], "a precise link is kept"


def test_a_name_it_cannot_find_is_reported_and_left_alone():
    stale: list[str] = []
    text = "[`no_such_function`](../toolkit/truncate.py#L1-L2)"
    assert relink.relink(text, stale) == text and "not found" in stale[0]
