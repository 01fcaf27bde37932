"""Open a local page in real headless Chromium and report what it rendered, over the Chrome DevTools Protocol
(a websocket, driven with aiohttp, which the package already depends on): the value of a script run in the
page, a PNG screenshot, console errors and uncaught exceptions, and every request the page made.

Debian's ``chromium`` package is what CI installs (``.ci/run``); :func:`find_chromium` returns None where no
browser is installed, and the tests skip with a reason.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)
START_TIMEOUT = 60.0
CHROMIUM_MISSING = (
    "headless Chromium not found: install Debian's package (apt-get install chromium), as .ci/run does"
)


def find_chromium() -> str | None:
    """The first Chromium-family browser on PATH, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Rendered:
    """What the page did: the script's value, the screenshot, errors and requests."""

    value: Any
    screenshot: bytes
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


class _DevTools:
    """One websocket to the browser; commands carry ids, events are collected as they arrive."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.events: list[dict[str, Any]] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.socket:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events.append(data)

    async def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        number = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[number] = future
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self.socket.send_str(json.dumps(message))
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def wait_for(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events:
                if event["method"] == method:
                    return event
            await asyncio.sleep(0.05)
        raise TimeoutError(f"no {method} within {timeout} s")


async def _drive(port: str, path: str, page: Path | str, script: str, width: int, height: int) -> Rendered:
    import aiohttp

    async with (
        aiohttp.ClientSession() as client,
        client.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0) as socket,
    ):
        tools = _DevTools(socket)
        target = (await tools.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await tools.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page", "Network"):
            await tools.send(f"{domain}.enable", session=session)
        await tools.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        url = page if isinstance(page, str) else page.resolve().as_uri()
        await tools.send("Page.navigate", {"url": url}, session=session)
        await tools.wait_for("Page.loadEventFired")
        # awaitPromise: a script may be async (wait for the page to do something); a plain value is returned as is
        evaluated = await tools.send(
            "Runtime.evaluate",
            {"expression": script, "returnByValue": True, "awaitPromise": True},
            session=session,
        )
        shot = await tools.send("Page.captureScreenshot", {"format": "png"}, session=session)
        await tools.send("Target.closeTarget", {"targetId": target})
        tools.reader.cancel()
    errors = []
    for event in tools.events:
        params = event.get("params", {})
        if event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            errors.append(
                " ".join(str(arg.get("value", arg.get("description"))) for arg in params.get("args", []))
            )
        elif event["method"] == "Runtime.exceptionThrown":
            errors.append(params.get("exceptionDetails", {}).get("text", "exception"))
        elif event["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            errors.append(params["entry"].get("text", ""))
    requests = [
        event["params"]["request"]["url"]
        for event in tools.events
        if event["method"] == "Network.requestWillBeSent"
    ]
    if "exceptionDetails" in evaluated:
        errors.append(f"script: {evaluated['exceptionDetails'].get('text')}")
    return Rendered(
        value=evaluated.get("result", {}).get("value"),
        screenshot=base64.b64decode(shot["data"]),
        console_errors=errors,
        requests=requests,
    )


class Browser:
    """One headless Chromium, started once and shared (the suite's ``chromium_browser`` session fixture): each
    :meth:`render` opens a tab of its own, with its own viewport, and closes it, so pages do not see each other
    and the browser's start (a second or more) is paid once per session, not once per page."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self._profile = tempfile.TemporaryDirectory()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 -- open for the browser's life; close() closes it
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdout=self._log,
            stderr=self._log,
            start_new_session=True,  # its own process group: close() stops the helpers it forked too
        )
        try:
            port_file = Path(self._profile.name) / "DevToolsActivePort"
            deadline = time.monotonic() + START_TIMEOUT
            while not (port_file.is_file() and len(port_file.read_text().splitlines()) >= 2):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self._log.seek(0)
                    tail = self._log.read().decode(errors="replace")[-500:]
                    raise RuntimeError(f"{executable} did not start (exit {self.process.poll()}): {tail}")
                time.sleep(0.1)
            self.port, self.path = port_file.read_text().splitlines()[:2]
        except BaseException:
            self.close()
            raise

    def render(self, page: Path | str, script: str, *, width: int = 1400, height: int = 1000) -> Rendered:
        """Open ``page`` (a file, or a URL such as a local server's ``http://127.0.0.1:PORT/``) in a new tab,
        run ``script`` (an expression; a promise is awaited) once it has loaded, and return its value, a
        screenshot of the viewport, the console errors and the requests the page made."""
        return asyncio.run(_drive(self.port, self.path, page, script, width, height))

    def close(self) -> None:
        """Stop the browser and every helper process it started, then remove its profile.

        Chromium's helpers (zygote, crashpad, network service) can outlive the main process for a moment and
        still write into the profile, so that removing it once failed in CI with "Directory not empty:
        'Default'": the whole process group is stopped, and the removal is tried again for a few seconds."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)  # the helpers left in the browser's group
        self._log.close()
        for attempt in range(20):
            try:
                shutil.rmtree(self._profile.name)
                break
            except FileNotFoundError:
                break
            except OSError:
                if attempt == 19:
                    raise
                time.sleep(0.25)
        with contextlib.suppress(OSError):
            self._profile.cleanup()


def require_browser(browser: Browser | None) -> Browser:
    """``browser`` (the ``chromium_browser`` fixture's value), or a skip naming how to install one."""
    import pytest

    if browser is None:
        pytest.skip(CHROMIUM_MISSING)
    return browser
