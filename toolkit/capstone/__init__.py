"""The capstone: the student's whole agent run beside the toolkit's, on the course's fault cases.

`toolkit.mine.load()` gives the pieces a student saved in chapters 01–07 and exercise 07; `compare(pieces)`
runs each case of `CASES` (a plain run, timeouts, a bad CSV row, a result over its budget, a model that
invents figures) three ways:
  - the toolkit's agent: run_agent over a ToolExecutor;
  - the student's whole agent: their loop (chapter 07) over their executor (chapter 06) built with their
    parse, truncate and retry, with their format_message and evaluate, judged by their check when they saved
    one (the toolkit's piece stands in for any slot not saved);
  - the toolkit's agent with one saved piece swapped in (a loop gets the toolkit's executor and pieces, an
    executor the toolkit's parse, truncate and retry), so a difference is put on the piece that made it.
What is compared is what the student can see: the results the executor handed on, the tool messages the
model read, the answer and the answer check's verdict. Each difference is one Chinese sentence about that
behaviour, and a sentence is written only where the two runs really differ: excerpts start where the texts
part, so the two never read the same. A piece that raises or exits is that piece's error, never a crash.

Every run uses the client from `toolkit.llm.make_client()` (offline unless .env names a model), except the
invented-figures case, which always uses the offline model's variant that invents them: a real model does
not misbehave on request.
"""
from .cases import CASES, REPORT, SALES_QUESTION, Case
from .outcome import Outcome
from .runs import Comparison, PieceExited, compare, run_case

__all__ = ["CASES", "REPORT", "SALES_QUESTION", "Case", "Comparison", "Outcome", "PieceExited", "compare", "run_case"]
