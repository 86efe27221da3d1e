"""The course in real JupyterLab, in headless Chromium.

* notebooks/09: the panels render, a slider and Run redraw both charts within a second of the click.
* notebooks/09 on a projector, at 1280×800 with the file browser open and at 1920×1080: before Run All each
  panel's output is a picture; a scene button sets every control and runs ("第 N 次运行" counts); a typed "30%"
  is 30 %; no readout is covered or cut; chart text is at least 16 px on the page (presentation mode); the
  agent panel's table has no one-character column; answers stay hidden until asked; no emoji status mark.
  Screenshots: /tmp/panels-1280x800.png and /tmp/panels-1920x1080.png (and in the test's tmp folder).
* A fresh Linux without any CJK font (Chromium limited to DejaVu by a fontconfig file): JupyterLab opens in
  Chinese with no news pop-up, and its menus, file browser, Markdown, outputs and widget labels are drawn with
  the course font the page is served (jupyterlab-setup/), the status marks ✔ ✘ ○ ⚠ with DejaVu Sans.
* A machine with a system CJK font keeps it: the course font is never downloaded.

Starts `jupyter lab` on 127.0.0.1 with a random token over tmp copies of the notebooks
(so JupyterLab's autosave never touches the committed files), configured as a student's is: the
course's jupyterlab-setup from the environment, user settings empty. Drives it with Playwright
for Python through Debian's chromium and saves screenshots in the tests' tmp folders. Skips, saying
why, where Playwright or Chromium is missing.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "09_instructor_demo.ipynb"
CHROMIUM = os.environ.get("TOOLKIT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run"]

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                                     "(pip install playwright); the browser test needs it")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium); Playwright cannot download one here",
                allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A fresh Linux's fonts: only DejaVu (fonts-dejavu-core), with the system's usual aliases (sans-serif → DejaVu Sans).
FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>{fonts}</dir><cachedir>{cache}</cachedir>
<include ignore_missing="yes">/etc/fonts/conf.d</include></fontconfig>
"""
DEJAVU = Path(os.environ.get("TOOLKIT_DEJAVU_DIR", "/usr/share/fonts/truetype/dejavu"))
COURSE_FONT = "TRL Sans CJK SC"
MARKS = "✔✘○⚠"


@contextlib.contextmanager
def running_lab(tmp_path: Path, files: dict[str, Path | str]):
    """`jupyter lab` over a tmp project holding `files` ({relative path: source file or text}), configured as
    a student's is (the course's jupyterlab-setup from the environment; user config, settings and workspaces
    fresh and empty); yields (base_url, token) and stops the server after."""
    root = tmp_path / "project"
    for name, source in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(source, Path):
            shutil.copy(source, root / name)
        else:
            (root / name).write_text(source, encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "TOOLKIT_DOTENV": "none"}
    log_path = tmp_path / "jupyter-lab.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--ip=127.0.0.1", f"--port={port}",
             f"--IdentityProvider.token={token}", "--allow-root", "--no-browser", f"--ServerApp.root_dir={root}",
             "--LabApp.expose_app_in_browser=True"],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("jupyter lab did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(0.5)
            yield base, token
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(5)


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server over a tmp copy of notebooks/09; yields (base_url, token); stopped after."""
    with running_lab(tmp_path, {f"notebooks/{NOTEBOOK}": ROOT / "notebooks" / NOTEBOOK}) as server:
        yield server


KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""
CELL_OUTPUT_TYPES = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model;
  const types = [];
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i).toJSON();
    for (const out of (cell.outputs || [])) types.push(out.output_type + (out.name ? ':' + out.name : ''));
  }
  return types;
}"""
IMAGE_BYTES = """async (img) => {
  const buffer = await (await fetch(img.src)).arrayBuffer();
  return Array.from(new Uint8Array(buffer));
}"""


def test_instructor_demo_runs_in_jupyterlab_and_redraws_after_slider_and_run(lab, tmp_path):
    base, token = lab
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/notebooks/{NOTEBOOK}?reset&token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=90_000)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_selector(".widget-slider", timeout=90_000)
            page.wait_for_function(KERNEL_IDLE, timeout=120_000)  # every cell has run
            image = page.locator("img.widget-image").first
            image.wait_for(timeout=30_000)
            page.wait_for_function("(img) => img.src && img.naturalWidth > 0", arg=image.element_handle(),
                                   timeout=30_000)
            image.scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / "01_after_run_all.png"), full_page=False)

            # controls rendered: the failure panel's sliders, checkboxes, Run buttons, the agent's table
            assert page.locator(".widget-slider").count() >= 10
            assert page.locator("button.widget-button", has_text="运行").count() >= 2
            assert page.locator(".widget-checkbox").count() >= 2
            assert page.locator("text=故障注入面板").count() >= 1 
            assert page.locator("th", has_text="内容摘录").count() == 1  # the agent panel's transcript table
            summary_before = page.locator(".widget-html", has_text="次调用，成功率").first.inner_text()

            bytes_before = image.evaluate(IMAGE_BYTES)
            slider = page.locator(".widget-slider").first  # the timeout rate
            stats = page.locator("img.widget-image").nth(1)
            readout_before = slider.locator(".widget-readout").inner_text()

            def move_slider_and_run(steps: int) -> float:
                """Move the timeout-rate slider `steps` to the right, press 运行; seconds until both charts changed."""
                readout = slider.locator(".widget-readout").inner_text()
                slider.locator(".noUi-handle").first.focus()
                for _ in range(steps):
                    page.keyboard.press("ArrowRight")
                page.wait_for_function("([el, old]) => el.innerText !== old",
                                       arg=[slider.locator(".widget-readout").element_handle(), readout],
                                       timeout=10_000)
                old_timeline, old_stats = image.get_attribute("src"), stats.get_attribute("src")
                clicked = time.perf_counter()
                page.locator("button.widget-button", has_text="运行").first.click()
                page.wait_for_function("([a, oldA, b, oldB]) => a.src !== oldA && b.src !== oldB",
                                       arg=[image.element_handle(), old_timeline, stats.element_handle(), old_stats],
                                       timeout=30_000, polling=10)
                seconds = time.perf_counter() - clicked  # click → both new images in the page
                page.wait_for_function(KERNEL_IDLE, timeout=30_000)
                return seconds

            # two presses, as an instructor tries a second rate: the faster one must be within a second (a
            # one-off stall of a shared CI machine is not the panel; a panel slow every time still fails)
            waits = [move_slider_and_run(25), move_slider_and_run(5)]
            readout_after = slider.locator(".widget-readout").inner_text()
            (tmp_path / "redraw_seconds.txt").write_text(" ".join(f"{w:.3f}" for w in waits) + "\n")
            print("Run clicked → timeline and statistics redrawn in the browser: "
                  + ", ".join(f"{w * 1000:.0f} ms" for w in waits))
            page.wait_for_function(KERNEL_IDLE, timeout=30_000)
            bytes_after = image.evaluate(IMAGE_BYTES)
            image.scroll_into_view_if_needed()
            summary_after = page.locator(".widget-html", has_text="次调用，成功率").first.inner_text()
            page.screenshot(path=str(tmp_path / "02_after_slider_and_run.png"), full_page=False)
            page.locator("img.widget-image").nth(1).scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / "03_stats_chart.png"), full_page=False)

            assert readout_after != readout_before
            assert min(waits) < 1.0, f"the instructor waited {waits} s for the redraw (a second at most)"
            # a new picture: SVG in presentation mode (09 turns it on), PNG otherwise
            assert bytes_after[:5] in ([0x3C, 0x3F, 0x78, 0x6D, 0x6C], [0x89, 0x50, 0x4E, 0x47, 0x0D])
            assert bytes_after != bytes_before
            assert summary_after != summary_before and "运行出错" not in summary_after
            outputs = page.evaluate(CELL_OUTPUT_TYPES)
            assert outputs and "error" not in outputs and "stream:stderr" not in outputs, outputs
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        finally:
            browser.close()


# --- 09 on a projector -----------------------------------------------------------------------------------

SCROLL_TO_CELL = """async (text) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  for (let i = 0; i < nb.model.cells.length; i++) {
    if (nb.model.cells.get(i).sharedModel.getSource().includes(text)) {
      await nb.scrollToItem(i, 'start');
      await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      return i;
    }
  }
  return -1;
}"""
OUTPUT_MIME = """(i) => {
  const out = window.jupyterapp.shell.currentWidget.content.widgets[i].node.querySelector('.jp-OutputArea-output');
  return out ? out.getAttribute('data-mime-type') : null;
}"""
# every readout of the panel: its text, whether it is the element drawn at its centre (not covered by another
# column), whether its text fits (not cut), whether it lies within the panel
READOUTS = """(panel) => {
  const box = panel.getBoundingClientRect();
  return [...panel.querySelectorAll('.widget-readout')].map((r) => {
    r.scrollIntoView({block: 'center'});
    const b = r.getBoundingClientRect();
    const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
    return {text: r.innerText, covered: !(hit && (hit === r || r.contains(hit))),
            cut: r.scrollWidth > r.clientWidth + 1, outside: b.right > box.right + 1 || b.left < box.left - 1,
            width: Math.round(b.width)};
  });
}"""
# the agent table's columns: the narrowest one, in characters of the table's font, and whether a header wraps
TABLE_COLUMNS = """(table) => {
  const size = parseFloat(getComputedStyle(table).fontSize);
  const heads = [...table.querySelectorAll('th')];
  return {size, columns: heads.map((th) => ({text: th.innerText, chars: th.getBoundingClientRect().width / size,
                                             lines: Math.round(th.getBoundingClientRect().height / (size * 1.2))}))};
}"""
KERNEL_PRINT = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, silent: false, store_history: false});
  let out = '';
  future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
  await future.done;
  return out;
}"""
CHART_SIZES = ("import json\nfrom toolkit.viz.style import smallest_text_pt\n"
               "print(json.dumps({n: [smallest_text_pt(f), float(f.get_size_inches()[0])] "
               "for n, f in failure.figures.items()}))")
EMOJI_MARKS = "[\u2705\u274c\u274e\u2b1c\u2b1b\u2b55\U0001f300-\U0001faff]"
SCENE = "场景二 权限与 500"


def _check_projector_page(page, size: str, tmp_path: Path) -> dict:
    """The checks at one window size; returns what was measured."""
    panel = page.locator(".trl-panel").first
    page.evaluate(SCROLL_TO_CELL, "SCENES = {")
    readouts = panel.evaluate(READOUTS)
    assert len(readouts) >= 10, readouts
    bad = [r for r in readouts if r["covered"] or r["cut"] or r["outside"]]
    assert not bad, f"{size}: readouts covered, cut or outside the panel: {bad}"

    # chart text on the page: the smallest text of each figure (points, in a figure so many inches wide), at the
    # width its picture is shown
    sizes = json.loads(page.evaluate(KERNEL_PRINT, CHART_SIZES))
    images = page.locator(".trl-panel img.widget-image")
    chart_px = {}
    for i, name in enumerate(("timeline", "stats")):
        shown = images.nth(i).evaluate("(img) => img.getBoundingClientRect().width")
        points, inches = sizes[name]
        chart_px[name] = points / 72 * shown / inches
        assert chart_px[name] >= 16, f"{size}: {name} chart text {chart_px[name]:.1f} px on the page"
    label_px = float(panel.locator(".widget-label").first.evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)"))
    assert label_px >= 18, f"{size}: panel text {label_px} px"

    columns = {}
    for source, heading in (("agent = AgentPanel(", "内容摘录"), ("picker = DecisionPicker(", "字段")):
        page.evaluate(SCROLL_TO_CELL, source)
        table = page.locator(".trl-panel table", has=page.locator("th", has_text=heading))
        columns[heading] = table.evaluate(TABLE_COLUMNS)
        narrow = [c for c in columns[heading]["columns"] if c["lines"] > 1 or c["chars"] < len(c["text"])]
        assert not narrow, f"{size}: table columns wrapped or narrower than their heading: {columns[heading]}"
    panels_text = " ".join(page.locator(".trl-panel").all_inner_texts())
    assert not re.search(EMOJI_MARKS, panels_text), f"{size}: an emoji status mark in {panels_text[:300]}"
    assert MARKS[0] in panels_text  # the agent's verdict, in a mark DejaVu Sans draws
    return {"readouts": len(readouts), "chart_px": chart_px, "label_px": label_px, "table": columns}


def test_instructor_demo_on_a_projector_at_laptop_and_full_hd_sizes(lab, tmp_path):
    base, token = lab
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{base}/lab/tree/notebooks/{NOTEBOOK}?reset&token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=90_000)
            assert page.locator(".jp-FileBrowser").first.evaluate("(e) => e.offsetWidth") > 150  # sidebar open

            # before Run All: each panel's stored output is a picture, not one line of text
            for source in ("failure = FailurePanel(", "agent = AgentPanel(", "budget = BudgetPlayground(",
                           "picker = DecisionPicker("):
                index = page.evaluate(SCROLL_TO_CELL, source)
                assert page.evaluate(OUTPUT_MIME, index) in ("image/png", "text/html"), source

            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_selector(".trl-panel .widget-slider", timeout=90_000)
            page.wait_for_function(KERNEL_IDLE, timeout=120_000)

            # answers: hidden while the question is asked, there once asked
            page.evaluate(SCROLL_TO_CELL, "<summary>场景二的答案")
            answer = page.locator("details", has_text="场景二的答案").locator("p", has_text="不可重试")
            assert answer.count() == 1 and not answer.is_visible()
            page.evaluate(SCROLL_TO_CELL, "显示备查：场景二")
            reveal = page.locator("button.widget-button", has_text="显示备查：场景二")
            reveal.wait_for(timeout=30_000)
            assert "权限不足：出现 36 次" not in page.locator("body").inner_text()  # the 备查 line, not its code
            page.locator("details summary", has_text="场景二的答案").click()
            assert answer.is_visible()
            reveal.click()
            page.get_by_text("权限不足：出现 36 次，之后又重试了 0 次").first.wait_for(timeout=10_000)

            # a scene, pressed twice: every control set, and the second press shows that it ran
            page.evaluate(SCROLL_TO_CELL, "SCENES = {")
            summary = page.locator(".trl-panel .widget-html", has_text="次运行").first
            scene = page.locator("button.widget-button", has_text=SCENE)
            for run in (2, 3):
                scene.click()
                page.wait_for_function("([el, text]) => el.innerText.includes(text)",
                                       arg=[summary.element_handle(), f"第 {run} 次运行（{SCENE}）"], timeout=30_000)
                page.wait_for_function(KERNEL_IDLE, timeout=30_000)
            rates = page.locator(".trl-panel .widget-slider").all()[:6]
            readouts = [r.locator(".widget-readout").inner_text() for r in rates]
            assert readouts == ["0", "0", "30", "30", "0", "0"], readouts

            # a typed percentage: "30%" in the timeout readout is 30 %, and the readout keeps its width
            timeout_readout = rates[0].locator(".widget-readout")
            width = timeout_readout.evaluate("(e) => e.getBoundingClientRect().width")
            timeout_readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("30%")
            page.keyboard.press("Enter")
            page.wait_for_function("(el) => el.innerText === '30'", arg=timeout_readout.element_handle(),
                                   timeout=10_000)
            assert timeout_readout.evaluate("(e) => e.getBoundingClientRect().width") == width
            assert "0.3" in page.evaluate(KERNEL_PRINT, "print(failure.settings()['rates']['timeout'])")

            measured = {}
            for width, height in ((1280, 800), (1920, 1080)):
                size = f"{width}x{height}"
                page.set_viewport_size({"width": width, "height": height})
                page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
                measured[size] = _check_projector_page(page, size, tmp_path)
                page.evaluate(SCROLL_TO_CELL, "SCENES = {")
                page.locator(".trl-panel").first.evaluate("(e) => e.scrollIntoView()")
                page.evaluate("() => document.fonts.ready")
                for path in (tmp_path / f"panels-{size}.png", Path(f"/tmp/panels-{size}.png")):
                    page.screenshot(path=str(path))
                page.locator(".trl-panel img.widget-image").first.evaluate("(e) => e.scrollIntoView()")
                page.screenshot(path=str(tmp_path / f"panels-{size}-timeline.png"))
                page.screenshot(path=f"/tmp/panels-{size}-timeline.png")
            (tmp_path / "projector.json").write_text(json.dumps(measured, ensure_ascii=False, indent=1))
            print(json.dumps({k: {"chart_px": v["chart_px"], "label_px": v["label_px"]} for k, v in measured.items()}))
            outputs = page.evaluate(CELL_OUTPUT_TYPES)
            assert "error" not in outputs and "stream:stderr" not in outputs, outputs
        finally:
            browser.close()


# --- Chinese on any machine ------------------------------------------------------------------------------

PROBE = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
    "cells": [
        {"cell_type": "markdown", "id": "md", "metadata": {},
         "source": "# 字体检查\n\n✔ 通过 ✘ 未通过 ○ 未运行 ⚠ 警告"},
        {"cell_type": "code", "id": "out", "metadata": {}, "execution_count": None, "outputs": [],
         "source": 'print("重试三次后成功：✔ 通过")'},
        {"cell_type": "code", "id": "widgets", "metadata": {}, "execution_count": None, "outputs": [],
         "source": 'import ipywidgets as w\nw.VBox([w.IntSlider(description="故障率"), w.HTML("<b>检查结果</b> 第三项未通过")])'},
    ],
}
# (what, selector): one element of each kind of text a student reads
CHINESE_TEXT = [("menu bar", ".lm-MenuBar-itemLabel"), ("file browser", ".jp-DirListing-headerItemText"),
                ("Markdown", ".jp-RenderedMarkdown h1"), ("stream output", ".jp-RenderedText pre"),
                ("widget label", ".widget-label"), ("widget HTML", ".widget-html-content")]
# Readable, measured: draw each distinct CJK character of the element in the element's own font on a canvas.
# Drawn with a font that has them, different characters give different pictures; without one, every
# character is the same box. The same characters in DejaVu Sans alone show what boxes give (the control).
GLYPH_PICTURES = """async (el) => {
  const family = getComputedStyle(el).fontFamily;
  const chars = [...new Set([...el.textContent].filter((c) => /[\\u3400-\\u9fff]/.test(c)))].slice(0, 8);
  await document.fonts.load(`40px ${family}`, chars.join(''));
  const picture = (c, f) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 48;
    const g = canvas.getContext('2d');
    g.font = `40px ${f}`;
    g.fillText(c, 2, 40);
    return canvas.toDataURL();
  };
  return {chars: chars.join(''), distinct: new Set(chars.map((c) => picture(c, family))).size,
          boxes: new Set(chars.map((c) => picture(c, '"DejaVu Sans"'))).size};
}"""
MARK_PICTURES = """(el, marks) => {
  const family = getComputedStyle(el).fontFamily;
  const picture = (c) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 48;
    const g = canvas.getContext('2d');
    g.font = `40px ${family}`;
    g.fillText(c, 2, 40);
    return canvas.toDataURL();
  };
  const box = picture('\\ue000');  // a private-use character no font draws
  return [...marks].map((c) => picture(c) !== box).concat([new Set([...marks].map(picture)).size]);
}"""
TOASTS = "() => document.querySelectorAll('.Toastify__toast, .jp-Notification-Toast').length"


def _course_files() -> dict[str, Path | str]:
    return {"notebooks/probe.ipynb": json.dumps(PROBE, ensure_ascii=False),
            "notebooks/00_overview.ipynb": ROOT / "notebooks" / "00_overview.ipynb"}


@pytest.fixture(scope="module")
def course_lab(tmp_path_factory):
    """One JupyterLab over chapter 00 and a probe notebook for the font tests; yields (base_url, token, tmp)."""
    tmp = tmp_path_factory.mktemp("course-lab")
    with running_lab(tmp, _course_files()) as (base, token):
        yield base, token, tmp


def _platform_fonts(page, selector: str) -> dict[str, int]:
    """{font family: glyphs it drew} for the first element matching `selector`, as Chromium reports it."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    cdp.detach()
    return {f["familyName"]: f["glyphCount"] for f in fonts}


def _open_and_run_probe(page, base: str, token: str) -> None:
    page.goto(f"{base}/lab/tree/notebooks/probe.ipynb?reset&token={token}")
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(".widget-label", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)
    page.evaluate("() => document.fonts.ready")


def test_a_fresh_linux_without_cjk_fonts_reads_chinese_in_a_chinese_jupyterlab(course_lab):
    base, token, tmp = course_lab
    if not (DEJAVU / "DejaVuSans.ttf").exists():
        pytest.skip(f"no DejaVu fonts in {DEJAVU} (apt-get install fonts-dejavu-core)")
    (tmp / "fc-cache").mkdir(exist_ok=True)
    fontconfig = tmp / "dejavu-only.conf"
    fontconfig.write_text(FONTCONFIG.format(fonts=DEJAVU, cache=tmp / "fc-cache"))
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                                    env={**os.environ, "FONTCONFIG_FILE": str(fontconfig)})
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            _open_and_run_probe(page, base, token)
            page.screenshot(path=str(tmp / "fresh-linux-probe-1280.png"))

            # JupyterLab's own menus in Chinese, by default (no setting was touched)
            menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
            assert {"文件", "编辑", "运行", "内核", "设置", "帮助"} <= set(menus), menus

            # the control: this browser has no CJK font, so Chinese in DejaVu Sans alone is all boxes
            control = page.locator(".jp-RenderedMarkdown h1").first.evaluate(GLYPH_PICTURES)
            assert control["boxes"] == 1 and len(control["chars"]) >= 3, control
            for what, selector in CHINESE_TEXT:
                element = page.locator(selector).first
                pictures = element.evaluate(GLYPH_PICTURES)
                assert len(pictures["chars"]) >= 2, (what, pictures)
                assert pictures["distinct"] == len(pictures["chars"]), f"{what}: Chinese drawn as boxes {pictures}"
                fonts = _platform_fonts(page, selector)
                assert fonts.get(COURSE_FONT, 0) >= len(pictures["chars"]), f"{what}: drawn with {fonts}"

            # the status marks, among Chinese text: each drawn (not a box), all four different, by DejaVu Sans
            *drawn, distinct = page.locator(".jp-RenderedMarkdown p").first.evaluate(MARK_PICTURES, MARKS)
            assert all(drawn) and distinct == len(MARKS), dict(zip(MARKS, drawn))
            assert "DejaVu Sans" in _platform_fonts(page, ".jp-RenderedMarkdown p")

            # chapter 00 as the quick start opens it, at a laptop's and a projector's size
            page.goto(f"{base}/lab/tree/notebooks/00_overview.ipynb?reset&token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=90_000)
            page.locator(".jp-RenderedMarkdown h1").first.wait_for()
            page.evaluate("() => document.fonts.ready")
            page.screenshot(path=str(tmp / "fresh-linux-00-1280x800.png"))
            page.set_viewport_size({"width": 1920, "height": 1080})
            page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
            page.screenshot(path=str(tmp / "fresh-linux-00-1920x1080.png"))
            heading = page.locator(".jp-RenderedMarkdown h1").first.evaluate(GLYPH_PICTURES)
            assert heading["distinct"] == len(heading["chars"]) >= 3, heading

            # no news question or other pop-up on first start, and the quiet start is the setting's default
            assert page.evaluate(TOASTS) == 0
            with urllib.request.urlopen(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification"
                                        f"?token={token}", timeout=10) as reply:
                defaults = json.load(reply)["schema"]["properties"]
            assert defaults["fetchNews"]["default"] == "false" and defaults["checkForUpdates"]["default"] is False
        finally:
            browser.close()


def test_a_machine_with_a_system_cjk_font_keeps_it_and_never_downloads_the_course_font(course_lab):
    base, token, tmp = course_lab
    listed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True)
    if listed.returncode != 0 or not listed.stdout.strip():
        pytest.skip("no system CJK font here (apt-get install fonts-wqy-microhei)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            fetched = []
            page.on("request", lambda request: fetched.append(request.url))
            _open_and_run_probe(page, base, token)
            page.screenshot(path=str(tmp / "system-font-probe-1280.png"))
            assert any(url.endswith("/custom/custom.css") for url in fetched)  # the stylesheet is there
            assert not [url for url in fetched if url.endswith(".woff2") and "TRLSansCJKsc" in url]
            for what, selector in CHINESE_TEXT:
                fonts = _platform_fonts(page, selector)
                assert COURSE_FONT not in fonts and fonts, f"{what}: drawn with {fonts}"

            # the README's one line back to English (last: it changes this server's user settings)
            page.locator(".lm-MenuBar-itemLabel", has_text="设置").click()
            page.locator(".lm-Menu-itemLabel", has_text="语言").hover()
            page.locator(".lm-Menu-itemLabel", has_text="English - English").click()
            page.locator(".jp-Dialog button", has_text="更改并重新加载").click()
            page.wait_for_function("() => [...document.querySelectorAll('.lm-MenuBar-itemLabel')]"
                                   ".some((e) => e.textContent === 'File')", timeout=90_000)
            assert "文件" not in page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
        finally:
            browser.close()


# --- chapter 04's pictures ---------------------------------------------------------------------------------

CHAPTER_04 = "04_tool_messages.ipynb"
SHOW_DIAGRAMS = """async () => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  for (let i = 0; i < notebook.model.cells.length; i++) {
    const cell = notebook.model.cells.get(i);
    if (cell.type === 'markdown' && cell.sharedModel.getSource().includes('```mermaid')) {
      await notebook.scrollToItem(i, 'start');
    }
  }
}"""
MERMAID_FIGURES = """() => [...document.querySelectorAll('.jp-RenderedMermaid')].map((el) => {
  const img = el.querySelector('figure img');
  const src = img ? img.getAttribute('src') || '' : '';
  return {warning: el.classList.contains('jp-mod-warning'), error: el.innerText.slice(0, 300),
          svg: decodeURIComponent(src.replace(/^data:image\\/svg\\+xml,/, '')),
          width: img ? img.naturalWidth : 0};
})"""


def test_chapter_04_draws_the_message_sequence_in_the_three_wire_formats_as_svg(tmp_path):
    """The ```mermaid blocks of chapter 04 render in JupyterLab as SVG pictures, not as code or a syntax error."""
    source = (ROOT / "notebooks" / CHAPTER_04).read_text(encoding="utf-8")
    blocks = sum("".join(c["source"]).count("```mermaid") for c in json.loads(source)["cells"]
                 if c["cell_type"] == "markdown")
    assert blocks >= 2
    with running_lab(tmp_path, {f"notebooks/{CHAPTER_04}": ROOT / "notebooks" / CHAPTER_04}) as (base, token):
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{base}/lab/tree/notebooks/{CHAPTER_04}?reset&token={token}")
                page.locator(".jp-RenderedMarkdown h1").first.wait_for(timeout=90_000)
                page.evaluate(SHOW_DIAGRAMS)
                page.wait_for_function("(n) => document.querySelectorAll('.jp-RenderedMermaid figure img, "
                                       ".jp-RenderedMermaid.jp-mod-warning').length >= n", arg=blocks, timeout=60_000)
                page.wait_for_function("() => [...document.querySelectorAll('.jp-RenderedMermaid figure img')]"
                                       ".every((img) => img.complete && img.naturalWidth > 0)", timeout=30_000)
                page.locator(".jp-RenderedMermaid").last.scroll_into_view_if_needed()
                page.screenshot(path=str(tmp_path / "04_wire_formats.png"), full_page=False)
                figures = page.evaluate(MERMAID_FIGURES)
            finally:
                browser.close()
    assert len(figures) == blocks, figures
    for figure in figures:
        assert not figure["warning"], f"a mermaid block did not parse: {figure['error']}"
        assert figure["svg"].lstrip().startswith("<?xml") or "<svg" in figure["svg"][:400], figure["svg"][:200]
        assert figure["width"] > 0 and "call_1" in figure["svg"]
    sequence, formats = figures[0]["svg"], figures[-1]["svg"]
    assert "call_2" in sequence
    assert all(name in formats for name in ("Chat Completions", "Responses", "Anthropic", "fc_1", "toolu_1"))
