"""notebooks/09 in real JupyterLab, in headless Chromium: the panels render, a slider and Run redraw both charts
within a second of the click.

Starts `jupyter lab` on 127.0.0.1 with a random token over a copy of the
notebook (so JupyterLab's autosave never touches the committed file), drives it
with Playwright for Python through Debian's chromium, and saves screenshots in
the test's tmp folder. Skips, saying why, where Playwright or Chromium is missing.
"""
from __future__ import annotations

import json
import os
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


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server over a tmp copy of notebooks/09; yields (base_url, token); stopped after."""
    root, config = tmp_path / "project", tmp_path / "jupyter-config"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, root / "notebooks" / NOTEBOOK)
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    (config / "jupyter_server_config.py").write_text(
        "c.LabApp.news_url = None\nc.LabApp.expose_app_in_browser = True\nc.LabApp.check_for_updates_class = "
        "'jupyterlab.NeverCheckForUpdate'\n")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "TOOLKIT_DOTENV": "none"}
    log = open(tmp_path / "jupyter-lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={token}",
         "--allow-root", "--no-browser", f"--ServerApp.root_dir={root}"],
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
                pytest.fail("jupyter lab did not start:\n" + (tmp_path / "jupyter-lab.log").read_text()[-3000:])
            time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
        log.close()


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
            assert bytes_after[:4] == [0x89, 0x50, 0x4E, 0x47] and bytes_after != bytes_before  # a new PNG
            assert summary_after != summary_before and "运行出错" not in summary_after
            outputs = page.evaluate(CELL_OUTPUT_TYPES)
            assert outputs and "error" not in outputs and "stream:stderr" not in outputs, outputs
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        finally:
            browser.close()
