"""What an answer claims, read clause by clause: a total, the top (or bottom) item, one item against another.

A tool's answer rules (toolkit/tools/) check these claims against the tool's
data; reading them is general, so no rule lists the sentences it expects:

* numbers as written (`written_numbers`): "9,692", full-width digits, "0.97 万"
  (a multiplier), "46.4%" (a percentage), "5 行" / "第 4 行" (a count or an
  ordinal: how many, not how much), and, where a claim is read, Chinese
  numerals with a unit (四千四百九十五, 九千六百九十二). A space inside a number
  ("4 495") is not a thousands separator: it reads as two numbers.
* a total (`total_claims`): a clause with a total word (总销售额, 总销售, 合计,
  共计, 一共, 加起来, 加在一起, 之和, 累计 …) and the first amount after it (or
  the amount just before it: "9692 是总销售额"); a denied total may be answered
  by the next clause ("总销售额不是 4495，而是 2985": = 2985). Names right
  before the total word make it their sum ("显示器、键盘合计 …", "显示器的总销售额 …"); a name between the
  word and the number makes the number that name's, not a total. A count or a
  percentage is not an amount ("合计 5 行数据", "占总销售额的 46.4%"). The
  relation is read from the words between: 不是 / 并非 (≠), 超过 / 多于 (>),
  不到 / 少于 / 不超过 (<), 约 / 将近 / 左右 (≈, within 5 %), and a range
  "9000 到 10000".
* the top or bottom item (`rank_claims`): a clause with 最高 / 最多 / 第一 /
  居首 … (or 最低 / 最少 / 垫底 …) and the item names in it; a name negated by
  不是 / 而非 / 并非 ("最高的是键盘而非显示器", "键盘并不是最高") or put at
  another place ("显示器排第二", "其次是键盘") is not claimed. A clause that
  only denies is answered by the next one: "排名第一的不是显示器，而是键盘",
  "显示器并不是最高的，键盘才是" claim 键盘. Several names claim the first (or
  last) places together.
* one item against another (`comparison_claims`): "键盘比显示器高",
  "键盘的销售额高于显示器", "键盘卖得比显示器好", "键盘的销量领先显示器",
  "键盘较显示器低", "鼠标不如键盘", "键盘没有显示器多", "显示器 4495 > 键盘 2985",
  and a name with 更 / 较 against the names before it ("…，其中键盘销售额更高").

Clauses end at 。；！？，, and newlines (a comma inside "9,692" does not end one).
Paraphrase beyond these words is not read: a claim that is not read is not
checked (it is neither passed nor failed by these rules). Linear in the text.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable

from .numbers import ascii_digits, chinese_value

__all__ = ["Written", "written_numbers", "answer_clauses", "TotalClaim", "total_claims", "RankClaim", "rank_claims",
           "ComparisonClaim", "comparison_claims", "holds"]

_CLAUSE_END = re.compile(r"[。；;！!？?\n，]|(?<![0-9]),|,(?![0-9]{3}(?![0-9]))")
_NUMBER = re.compile(r"(?<![0-9.])(百分之\s*)?(-?)((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?)(?![0-9])"
                     r"[ \t]*(%|％|万|千|亿)?")
_CHINESE_NUMBER = re.compile(r"(百分之)?([零〇一二两三四五六七八九十百千万亿]{2,})")
_COUNT_AFTER = re.compile(r"[ \t]*(?:行|条|个|类|种|项|笔|次|件|位|名|家|天|日|月|年|人|款|样|组|份|张|台|单|批|小时|分钟|秒)")
_MULTIPLIER = {"万": Decimal(10**4), "千": Decimal(1000), "亿": Decimal(10**8)}


@dataclass(frozen=True)
class Written:
    """One number as the answer writes it: its value and precision (step), where it stands, what it counts."""

    value: Decimal
    step: Decimal       # 1 for "4495", 0.1 for "46.4", 100 for "0.97 万": how precisely it is written
    start: int
    end: int
    text: str
    percent: bool = False
    count: bool = False  # followed by a counting word (5 行) or an ordinal (第 4 行): how many, not how much
    chinese: bool = False

    @property
    def amount(self) -> bool:
        return not (self.percent or self.count)


def written_numbers(text: str, *, chinese: bool = False) -> list[Written]:
    """Every number in `text` in order (full-width digits read as ASCII); with chinese=True also Chinese numerals."""
    text = ascii_digits(text)
    found: list[Written] = []
    for match in _NUMBER.finditer(text):
        prefix, sign, digits, suffix = match.groups()
        value = Decimal(sign + digits.replace(",", ""))
        step = Decimal(1).scaleb(value.as_tuple().exponent) if "." in digits else Decimal(1)
        if suffix in _MULTIPLIER:
            value, step = value * _MULTIPLIER[suffix], step * _MULTIPLIER[suffix]
        percent = bool(prefix) or suffix in ("%", "％")
        count = not percent and (_COUNT_AFTER.match(text, match.end()) is not None
                                 or text[max(match.start() - 2, 0): match.start()].rstrip().endswith("第"))
        found.append(Written(value, step, match.start(), match.end(), match.group().rstrip(" \t"), percent, count))
    if chinese:
        for match in _CHINESE_NUMBER.finditer(text):
            value = chinese_value(match.group(2))
            if value is not None:
                found.append(Written(value, Decimal(1), match.start(), match.end(), match.group(),
                                     bool(match.group(1)), _COUNT_AFTER.match(text, match.end()) is not None
                                     or text[max(match.start() - 1, 0): match.start()] == "第", True))
        found.sort(key=lambda w: w.start)
    return found


def answer_clauses(answer: str) -> list[str]:
    """The answer cut at 。；！？，, and newlines; a comma between digits ("9,692") stays inside its number."""
    return [clause for clause in _CLAUSE_END.split(ascii_digits(answer)) if clause.strip()]


def _names_in(clause: str, names: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each name in the clause, longest name first where two overlap, in order."""
    spans: list[tuple[int, int, str]] = []
    taken = bytearray(len(clause))
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        start = clause.find(name)
        while start != -1:
            end = start + len(name)
            if taken.find(1, start, end) == -1:
                spans.append((start, end, name))
                taken[start:end] = b"\x01" * len(name)
            start = clause.find(name, end)
    return sorted(spans)


# --- totals ----------------------------------------------------------------------------------------------

_TOTAL_WORD = re.compile(r"总销售额|销售总额|总销售|总销量|总金额|总收入|总营业额|营业总额|总额|总计|总和|之和|总共|合计|共计|"
                         r"一共|累计|加起来|加在一起|加到一起|合起来|加总|汇总|(?<!公)共(?![同享识性])")
# words between a total word and its number, longest first: what relation the sentence states
_RELATION = re.compile(r"(不超过|不高于|至多)|(不到|少于|低于|小于|不足|未满)|(不少于|不低于|至少)|(超过|多于|大于|高于|逾)|"
                       r"(大约|大概|约|将近|接近|近|差不多)|(并不是|不是|并非|而非|不等于|不为|没有)")
_RELATION_AFTER = re.compile(r"[ \t]*+(?:元|块)?[ \t]*+(?:(以下|以内)|(以上)|(左右|上下))")
_RANGE = re.compile(r"[ \t]*+(?:元|块)?[ \t]*+(?:到|至|~|～|-|—|–)[ \t]*")
_COPULA = re.compile(r"[ \t]*+(?:元|块)?[ \t]*+(?:就是|即为|即|是|为)[ \t]*")
_CONNECTOR = ("、", "和", "与", "及", "以及", "加上", "跟", " ", "\t")
_FILLER = ("的", "类别", "品类", "类", "销售额", "销售", "金额", "收入", "营业额", " ", "\t", "个", "所有", "全部", "各",
           "三", "两", "二", "四", "五", "六", "七", "八", "九", "十")
# a clause that says what is the case instead of what the clause before denied ("不是显示器，而是键盘",
# "总销售额不是 4495，而是 9692"), at its start
_INSTEAD = re.compile(r"[ \t]*+(?:而|但|却|反而|其实|实际上)?[ \t]*+(?:才是|应该是|应是|是)[ \t]*+")
_NEAR = 12  # characters a total word may stand from its number
_SUBJECT_REACH = 40  # characters before a total word where the names it totals may stand


@dataclass(frozen=True)
class TotalClaim:
    """A clause claims that the total (of `names`, or of everything when empty) stands in `relation` to `value`.

    relation: "=", "!=", ">", ">=", "<", "<=", "~" (within 5 %), "range" (value ≤ total ≤ upper).
    """

    names: tuple[str, ...]
    relation: str
    value: Written
    upper: Written | None
    clause: str


def _subject(before: str, names: list[str]) -> tuple[str, ...]:
    """The names that stand right before a total word ("显示器、键盘三个类别合计"): whose total it is."""
    text, found = before, []
    ordered = sorted(names, key=len, reverse=True)
    while text:
        name = next((n for n in ordered if text.endswith(n)), None)
        if name is not None:
            found.append(name)
            text = text[: -len(name)]
            continue
        word = next((w for w in (_CONNECTOR if found else ()) + _FILLER if text.endswith(w)), None)
        if word is None:
            break
        text = text[: -len(word)]
    return tuple(reversed(found))


def _relation(gap: str, clause: str, after: int) -> str:
    """The relation the words around a number state: from the gap before it and the words right after it."""
    kinds = [m.lastindex for m in _RELATION.finditer(gap)]
    tail = _RELATION_AFTER.match(clause, after)
    if tail:
        kinds.append({1: 1, 2: 3, 3: 5}[tail.lastindex])
    stated = [k for k in kinds if k != 6]
    relation = {1: "<=", 2: "<", 3: ">=", 4: ">", 5: "~"}[stated[0]] if stated else "="
    if 6 in kinds:  # 不是 / 并非 …: the opposite
        relation = {"=": "!=", "<": ">=", "<=": ">", ">": "<=", ">=": "<", "~": "!="}[relation]
    return relation


def _claim_after(clause: str, word: re.Match, numbers: list[Written], starts: list[int],
                 names: list[str]) -> TotalClaim | None:
    i = bisect.bisect_left(starts, word.end())
    if i == len(numbers) or numbers[i].start - word.end() > _NEAR:
        return None
    first, gap = numbers[i], clause[word.end(): numbers[i].start]
    if not first.amount or _names_in(gap, names) or _TOTAL_WORD.search(gap):
        return None  # "合计 5 行"; in "总计：显示器 4495" the number is the display's, not the total
    upper = None
    if i + 1 < len(numbers) and numbers[i + 1].amount:
        joint = _RANGE.match(clause, first.end)
        if joint and joint.end() == numbers[i + 1].start:
            upper = numbers[i + 1]
    relation = "range" if upper else _relation(gap, clause, first.end)
    subject = _subject(clause[max(word.start() - _SUBJECT_REACH, 0): word.start()], names)
    return TotalClaim(subject, relation, first, upper, clause)


def _claim_before(clause: str, word: re.Match, numbers: list[Written], starts: list[int]) -> TotalClaim | None:
    i = bisect.bisect_left(starts, word.start()) - 1
    while i >= 0 and numbers[i].end > word.start():
        i -= 1
    if i < 0 or not numbers[i].amount or word.start() - numbers[i].end > _NEAR:
        return None
    if not _COPULA.fullmatch(clause, numbers[i].end, word.start()):
        return None  # only "9692 是总销售额", "9692 即为总额"
    return TotalClaim((), "=", numbers[i], None, clause)


def _instead_total(clause: str, denied: TotalClaim) -> TotalClaim | None:
    """The clause after a denied total ("总销售额不是 4495，而是 2985"): the amount it says instead, as a claim."""
    start = _INSTEAD.match(clause)
    if start is None:
        return None
    numbers = written_numbers(clause, chinese=True)
    first = next((w for w in numbers if w.start >= start.end()), None)
    if first is None or not first.amount or clause[start.end(): first.start].strip(" \t"):
        return None
    return TotalClaim(denied.names, "=", first, None, clause)


def total_claims(answer: str, names: Iterable[str] = ()) -> list[TotalClaim]:
    """Every total the answer claims (see the module doc); `names` are the items a total may be of."""
    names = [n for n in names if isinstance(n, str) and n]
    claims: list[TotalClaim] = []
    denied: TotalClaim | None = None  # the last clause's total said with 不是: the next may say what it is
    for clause in answer_clauses(answer):
        numbers = written_numbers(clause, chinese=True)
        starts = [w.start for w in numbers]
        used: set[int] = set()
        found: list[TotalClaim] = []
        for word in _TOTAL_WORD.finditer(clause):
            claim = (_claim_after(clause, word, numbers, starts, names)
                     or _claim_before(clause, word, numbers, starts))
            if claim is not None and claim.value.start not in used:
                used.add(claim.value.start)
                found.append(claim)
        if not found and denied is not None:
            instead = _instead_total(clause, denied)
            found = [instead] if instead is not None else []
        claims += found
        denied = next((c for c in reversed(found) if c.relation == "!="), None)
    return claims


def holds(relation: str, actual: Decimal, value: Written, upper: Written | None = None) -> bool:
    """Whether `actual` stands in `relation` to the written value (a written value matches what rounds to it)."""
    near = abs(actual - value.value) * 2 <= value.step
    return {"=": near, "!=": not near, ">": actual > value.value, ">=": actual >= value.value or near,
            "<": actual < value.value, "<=": actual <= value.value or near,
            "~": abs(actual - value.value) <= abs(actual) * Decimal("0.05") or near,
            "range": upper is not None and value.value <= actual <= upper.value}[relation]


# --- the top or bottom item ---------------------------------------------------------------------------------

_RANK_WORD = re.compile(r"(最高|最多|最大|最好|最畅销|卖得最好|排名第一|第一(?![季次天周月年步个条行])|居首|之首|榜首|冠军|首位)|"
                        r"(最低|最少|最小|最差|垫底|末位|倒数第一|最后一名)")
_NEGATORS = ("并不是", "而不是", "不是", "并非", "而非", "绝非", "不算", "算不上", "并没有", "没有")
_NEGATION = re.compile("|".join(_NEGATORS))
_LINK = re.compile(r"(?:的|类别|品类|销售额|销售|是|为|当属|要数|属于|[ \t:：])*+")
_LINK_REACH = 12  # characters between a rank word and the name it introduces ("最高的类别是显示器")
# a name ranked elsewhere: "显示器排第二", "键盘次之" (after it), "其次是键盘", "第二名是鼠标" (before it)
_LATER_AFTER = re.compile(r"[ \t]*+(?:的销售额|销售额|的)?[ \t]*+(?:排名|排在|排|位居|居|列|是)?[ \t]*+"
                          r"(?:第[二三四五六七八九十2-9]|次之|其次|居次|靠后|垫后)")
_LATER_BEFORE = re.compile(r"(?:第[二三四五六七八九十2-9](?:名|位)?|其次|次之)(?:的)?(?:是|为)?[ \t]*+$")
_RATHER = "才是"  # "键盘才是": the name before it is what the clause before should have said


@dataclass(frozen=True)
class RankClaim:
    """A clause claims that `names` hold the first places (top=True) or the last ones."""

    names: tuple[str, ...]
    top: bool
    clause: str


def _negated(clause: str, span: tuple[int, int, str], next_name: int, cue: re.Match) -> bool:
    """A name is negated by 不是/而非/… right before it, or between it and its rank word (键盘并不是最高)."""
    start, end, _ = span
    before = clause[max(start - 6, 0): start].rstrip(" \t")
    if before.endswith(_NEGATORS) or before.removesuffix("是").removesuffix("为").rstrip(" \t").endswith(_NEGATORS):
        return True  # "而非键盘", "不是键盘", "并非是键盘"
    return end <= cue.start() and _NEGATION.search(clause, end, min(next_name, cue.start())) is not None


def _cue_for(clause: str, span: tuple[int, int, str], cues: list[re.Match], cue_ends: list[int]) -> int:
    """Which rank word a name belongs to: the one right before it when only 的/是/类别… stand between, else the
    nearer of the two around it."""
    start, end, _ = span
    i = bisect.bisect_right(cue_ends, start) - 1  # the last rank word that ends before the name
    if i >= 0 and start - cues[i].end() <= _LINK_REACH and _LINK.fullmatch(clause, cues[i].end(), start):
        return i
    after = i + 1 if i + 1 < len(cues) and cues[i + 1].start() >= end else None
    if i < 0:
        return after if after is not None else 0
    if after is None:
        return i
    return after if cues[after].start() - end < start - cues[i].end() else i


def _ranked_later(clause: str, span: tuple[int, int, str]) -> bool:
    """Whether the clause puts this name at another place ("显示器排第二", "其次是键盘"): not a first place."""
    start, end, _ = span
    return (_LATER_AFTER.match(clause, end) is not None
            or _LATER_BEFORE.search(clause, max(start - 8, 0), start) is not None)


def _joined(clause: str, spans: list[tuple[int, int, str]], first: int, step: int) -> list[str]:
    """The name at spans[first] and those joined to it by 、/和/与 … going forward (step 1) or back (-1)."""
    found, k = [spans[first][2]], first
    while 0 <= k + step < len(spans):
        a, b = (spans[k], spans[k + step]) if step > 0 else (spans[k + step], spans[k])
        if clause[a[1]: b[0]].strip(" \t") not in ("", *_CONNECTOR):
            break
        k += step
        found.append(spans[k][2])
    return found


def _instead_names(clause: str, spans: list[tuple[int, int, str]]) -> list[str]:
    """The names a clause gives instead of a denied rank claim: "而是键盘", "键盘（和鼠标）才是"; [] when none."""
    if not spans:
        return []
    start = _INSTEAD.match(clause)
    if start is not None and not clause[start.end(): spans[0][0]].strip(" \t"):
        return _joined(clause, spans, 0, 1)
    for k, (_, end, _) in enumerate(spans):
        if clause[end:].lstrip(" \t").startswith(_RATHER):
            return _joined(clause, spans, k, -1)
    return []


def rank_claims(answer: str, names: Iterable[str]) -> list[RankClaim]:
    """Every claim that some items come first (最高 …) or last (最低 …), read clause by clause; a clause that
    only denies ("排名第一的不是显示器") may be answered by the next one ("而是键盘", "键盘才是")."""
    names = [n for n in names if isinstance(n, str) and n]
    claims: list[RankClaim] = []
    denied: bool | None = None  # the clause before denied a first (True) or last (False) place and claimed none
    for clause in answer_clauses(answer):
        cues = list(_RANK_WORD.finditer(clause))
        spans = _names_in(clause, names) if cues or denied is not None else []
        if not cues:
            instead = _instead_names(clause, spans) if denied is not None else []
            if instead:
                claims.append(RankClaim(tuple(dict.fromkeys(instead)), denied, clause))
            denied = None
            continue
        cue_ends = [c.end() for c in cues]
        claimed: dict[int, list[str]] = {}
        negated: dict[int, bool] = {}
        for k, span in enumerate(spans):
            i = _cue_for(clause, span, cues, cue_ends)
            next_name = spans[k + 1][0] if k + 1 < len(spans) else len(clause)
            if _negated(clause, span, next_name, cues[i]):
                negated[i] = True
            elif not _ranked_later(clause, span):
                claimed.setdefault(i, []).append(span[2])
        claims += [RankClaim(tuple(dict.fromkeys(found)), cues[i].group(1) is not None, clause)
                   for i, found in sorted(claimed.items())]
        denied = next((cues[i].group(1) is not None for i in negated if i not in claimed), None)
    return claims


# --- one item against another --------------------------------------------------------------------------------

_MORE = "高|多|大|好|强|贵|领先"
_LESS = "低|少|小|差|弱|便宜|落后"
# what is compared, between a name and the comparison: 的销售额, 销量, 卖得 ("键盘卖得比显示器好")
_MEASURE = r"(?:的)?(?:销售额|销售量|销量|营业额|收入|业绩|销售)?(?:的)?(?:卖得|卖的|销得)?"
_DEGREE = r"(?:还|更|要|稍|略|明显|远)?"
# ([ \t]*+ is possessive: a run of spaces is taken once, never re-split between the optional words around it)
_THAN = re.compile(rf"[ \t]*+{_MEASURE}[ \t]*+{_DEGREE}[ \t]*+(不比|比|较|没有)[ \t]*")
_AFTER_THAN = re.compile(rf"[ \t]*+{_MEASURE}[ \t]*+{_DEGREE}[ \t]*+(?:卖得|卖的)?[ \t]*+(?:(高出|多出|{_MORE})|({_LESS}))")
_VERB = re.compile(rf"[ \t]*+{_MEASURE}[ \t]*+{_DEGREE}[ \t]*+(?:(高于|多于|超过|大于|领先于|领先|胜过|好于|强于|赢过|压过)|"
                   r"(低于|少于|小于|不如|不及|落后于|落后|差于|弱于|输给))了?[ \t]*")
# a name compared with the names before it in the sentence: "显示器 4495、键盘 2985，其中键盘销售额更高"
_COMPARATIVE = re.compile(rf"[ \t]*+{_MEASURE}[ \t]*+{_DEGREE}[ \t]*+(?:更|较|比较)[ \t]*+(?:卖得|卖的)?[ \t]*+"
                          rf"(?:({_MORE})|({_LESS}))")
# an ordering written with symbols: "显示器 4495 > 键盘 2985" (the gap between two names, a number in it)
_SYMBOL = re.compile(r"[ \t]*+(?:[0-9][0-9,.]*+)?[ \t]*+(?:(>|＞|≥)|(<|＜|≤))[ \t]*+")
_SENTENCE_END = re.compile(r"[。！!？?\n]")


@dataclass(frozen=True)
class ComparisonClaim:
    """A clause claims `first` relation `second`: relation ">", ">=", "<" or "<="."""

    first: str
    relation: str
    second: str
    clause: str


def _comparison(clause: str, a: tuple[int, int, str], b: tuple[int, int, str]) -> str | None:
    gap = clause[a[1]: b[0]]
    if len(gap) > 12:
        return None
    verb = _VERB.fullmatch(gap) or _SYMBOL.fullmatch(gap)
    if verb:
        return ">" if verb.group(1) else "<"
    than = _THAN.fullmatch(gap)
    after = _AFTER_THAN.match(clause, b[1]) if than else None
    if after is None:
        return None
    more = after.group(1) is not None
    if than.group(1) in ("比", "较"):  # 较 is the written 比: "键盘较显示器低"
        return ">" if more else "<"
    return ("<=" if more else ">=") if than.group(1) == "不比" else ("<" if more else ">")  # 没有 B 高: below B


def comparison_claims(answer: str, names: Iterable[str]) -> list[ComparisonClaim]:
    """Claims that one named item is above or below another: from adjacent names in a clause ("键盘比显示器高",
    "键盘的销量领先显示器"), and from a name with 更 / 较 against the names before it in the sentence
    ("显示器 4495、键盘 2985，其中键盘销售额更高": 键盘 above 显示器; names joined by 和 / 、 compare together;
    with no name before it in its sentence, the names of the sentences before count)."""
    names = [n for n in names if isinstance(n, str) and n]
    claims: list[ComparisonClaim] = []
    earlier_sentences: list[str] = []  # the names of the answer's sentences before this one
    for sentence in _SENTENCE_END.split(ascii_digits(answer)):
        before: list[str] = []  # the names of the sentence so far
        for clause in answer_clauses(sentence):
            spans = _names_in(clause, names)
            compared = set()
            for a, b in zip(spans, spans[1:]):
                relation = _comparison(clause, a, b)
                if relation is not None and a[2] != b[2]:
                    claims.append(ComparisonClaim(a[2], relation, b[2], clause))
                    compared.add(a[0])
            for k, (start, end, _name) in enumerate(spans):
                degree = _COMPARATIVE.match(clause, end) if start not in compared else None
                if degree is None:
                    continue
                group = _joined(clause, spans, k, -1)
                earlier = before + [n for _, _, n in spans[: k - len(group) + 1]] or earlier_sentences
                relation = ">" if degree.group(1) is not None else "<"
                claims += [ComparisonClaim(first, relation, other, clause) for first in dict.fromkeys(group)
                           for other in dict.fromkeys(earlier) if other not in group]
            before += [n for _, _, n in spans]
        earlier_sentences += before
    return claims
