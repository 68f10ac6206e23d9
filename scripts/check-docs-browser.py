#!/usr/bin/env python3
"""Opens the built documentation site (site/, scripts/build-docs.sh) in headless
Chromium (Debian's package) over the DevTools protocol, served from loopback:
the home page, a tutorial and a reference page must render their content
without a console error, an uncaught exception or a failed load, and the
site's search must find `ZeusMonitor`. A screenshot of each lands in
--screenshots (default build/docs-screenshots/) for a person to look at.

Usage: check-docs-browser.py [--site DIR] [--screenshots DIR] [--chromium PATH]"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import websocket  # websocket-client, pinned in scripts/setup-python.sh

ROOT = Path(__file__).resolve().parent.parent
# Page, and a text its article must contain once rendered.
PAGES = [
    ("index.html", "Where to start"),
    ("tutorials/pytorch-step.html", "Measure one step"),
    ("reference/python-api.html", "begin_window"),
]
SEARCH_TERM = "ZeusMonitor"
# Flags for a root user in a container without a GPU, a display or the internet.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,900", "--remote-debugging-port=0",
]


class DevTools:
    """One page target's DevTools connection: commands, and the events seen so far."""

    def __init__(self, ws_url: str) -> None:
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                message = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                break
            self.events.append(message)
            if message.get("method") == method:
                return message
        raise TimeoutError(f"no {method} within {timeout:.0f} s")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads seen so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append(f"uncaught exception: {details.get('exception', {}).get('description') or details.get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(f"log error: {params['entry']['text']} {params['entry'].get('url', '')}")
        return found


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        pass


def start_chromium(chromium: str, profile: Path) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    assert process.stderr is not None
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if line.startswith("DevTools listening on ws://"):
            port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep draining
            return process, port
    process.kill()
    raise SystemExit(f"check-docs-browser: {chromium} did not start its DevTools server (exit {process.poll()})")


def open_page(port: int) -> DevTools:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(request, timeout=10) as response:
        target = json.load(response)
    page = DevTools(target["webSocketDebuggerUrl"])
    for domain in ("Page", "Runtime", "Log"):
        page.call(f"{domain}.enable")
    return page


def visit(page: DevTools, url: str) -> None:
    page.events.clear()
    page.call("Page.navigate", url=url)
    page.wait_for("Page.loadEventFired", timeout=30)
    time.sleep(1.0)  # scripts that run after load (the theme's, the search worker)


def screenshot(page: DevTools, path: Path) -> None:
    path.write_bytes(base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"]))


def search(page: DevTools, term: str, timeout: float = 20) -> list[list[str]]:
    """Types `term` into the site's search box; returns each result's [title, text]."""
    # As a person does: click the search box, then type.
    box = page.evaluate("""(() => { const r = document.querySelector('input.md-search__input').getBoundingClientRect();
                        return [r.x + r.width / 2, r.y + r.height / 2]; })()""")
    for kind in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)
    time.sleep(0.5)
    focused = page.evaluate("document.activeElement && document.activeElement.classList.contains('md-search__input')")
    if not focused:
        raise RuntimeError("clicking the search box did not focus it")
    for char in term:  # key by key: the theme searches on key events
        page.call("Input.dispatchKeyEvent", type="keyDown", key=char, text=char)
        page.call("Input.dispatchKeyEvent", type="keyUp", key=char)
    deadline = time.monotonic() + timeout
    results: list[list[str]] = []
    while time.monotonic() < deadline and not results:
        time.sleep(0.5)
        results = page.evaluate("""Array.from(document.querySelectorAll('.md-search-result__item'))
            .map(e => [(e.querySelector('h1, h2') || e).innerText.trim(), e.innerText])""") or []
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site")
    parser.add_argument("--screenshots", type=Path, default=ROOT / "build" / "docs-screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    if not (args.site / "index.html").is_file():
        raise SystemExit(f"check-docs-browser: no {args.site}/index.html: run scripts/build-docs.sh first")
    if not Path(args.chromium).exists():
        raise SystemExit(f"check-docs-browser: no Chromium at {args.chromium} (scripts/setup.sh installs Debian's chromium)")
    args.screenshots.mkdir(parents=True, exist_ok=True)

    failures: list[str] = []
    server, base = serve(args.site)
    with tempfile.TemporaryDirectory(prefix="docs-chromium-") as profile:
        process, port = start_chromium(args.chromium, Path(profile))
        try:
            page = open_page(port)
            for path, expected in PAGES:
                visit(page, base + path)
                text = page.evaluate("document.querySelector('article') ? document.querySelector('article').innerText : ''")
                shot = args.screenshots / (path.replace("/", "_").replace(".html", ".png"))
                screenshot(page, shot)
                problems = page.problems()
                if expected not in (text or ""):
                    problems.append(f"its content does not show {expected!r}")
                status = "; ".join(problems) if problems else "ok"
                print(f"check-docs-browser: {path}: {status} ({shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot})")
                failures += [f"{path}: {p}" for p in problems]
            visit(page, base + "index.html")
            results = search(page, SEARCH_TERM)
            time.sleep(1.0)  # the result list is drawn after the results arrive
            screenshot(page, args.screenshots / "search.png")
            hits = [title for title, text in results if SEARCH_TERM in text]
            print(f"check-docs-browser: search {SEARCH_TERM!r}: {len(results)} results, {len(hits)} showing it"
                  + (f" (first: {hits[0]!r})" if hits else ""))
            if not hits:
                failures.append(f"the site's search found no result showing {SEARCH_TERM} "
                                f"(results: {[title for title, _ in results[:5]]})")
            failures += [f"search: {p}" for p in page.problems()]
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
            server.shutdown()
    for failure in failures:
        print(f"check-docs-browser: FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
