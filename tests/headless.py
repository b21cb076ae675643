"""A headless Chromium for tests, driven over the DevTools protocol through a pipe (no extra packages).

``find_or_install_chromium()`` returns a Chromium binary, installing Debian's ``chromium`` with
apt-get when it is missing and we are root; ``Browser`` starts it with ``--remote-debugging-pipe``
(commands on fd 3, replies on fd 4, NUL-separated JSON) and records every console message,
exception and network request of the pages it opens.
"""
from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def find_or_install_chromium() -> tuple[str | None, str]:
    """(binary or None, why not) — installs Debian's chromium with apt-get when missing and root."""
    found = find_chromium()
    if found:
        return found, ""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "Chromium is not installed and apt-get cannot be run (not root or no apt-get)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    for cmd in (install, ["apt-get", "update"], install):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode == 0 and cmd is install and find_chromium():
            return find_chromium(), ""
    return None, f"apt-get install chromium failed: {done.stderr.strip().splitlines()[-1:]}"


class Browser:
    """One headless Chromium; ``open(url)`` gives a page session. Use as a context manager."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 900):
        self.width, self.height = width, height
        self.profile = tempfile.TemporaryDirectory(prefix="pmask-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # move the child's ends above 9 so dup2 onto 3/4 cannot clobber one another
        hi_r, hi_w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def wire() -> None:
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--hide-scrollbars", "--font-render-hinting=none", f"--user-data-dir={self.profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4))
        os.close(hi_r)
        os.close(hi_w)
        self._next = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cv:
                    self._cv.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cv:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cv.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._next not in self._replies:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise TimeoutError(f"no reply to {method}")
                self._cv.wait(0.5)
            reply = self._replies.pop(self._next)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def open(self, url: str, *, ready: str = "document.documentElement.dataset.ready === '1'",
             timeout: float = 60) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                         "deviceScaleFactor": 1, "mobile": False}, session)
        t0 = time.monotonic()
        self.send("Page.navigate", {"url": url}, session)
        while True:
            try:   # the old document's context may vanish mid-navigation: ask again
                if page.eval(f"!!({ready}) || !!document.documentElement.dataset.jsError"):
                    break
            except RuntimeError:
                pass
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"{url}: page not ready after {timeout} s")
            time.sleep(0.05)
        page.wall_seconds = time.monotonic() - t0
        return page

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Page:
    """One attached tab: evaluate JavaScript, press keys, take screenshots, read its log."""

    def __init__(self, browser: Browser, session: str):
        self.browser, self.session = browser, session
        self.wall_seconds = 0.0

    def eval(self, expression: str) -> Any:
        res = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def key(self, key: str, code: int) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.browser.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                                         "windowsVirtualKeyCode": code}, self.session)

    def screenshot(self, path: Path, *, clip: dict[str, float] | None = None) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}   # document coordinates
            params["captureBeyondViewport"] = True
        data = self.browser.send("Page.captureScreenshot", params, self.session)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def _mine(self) -> list[dict[str, Any]]:
        with self.browser._cv:
            return [e for e in self.browser.events if e.get("sessionId") == self.session]

    def problems(self) -> list[str]:
        """Console errors/warnings, uncaught exceptions and log errors (CSP violations among them)."""
        out = []
        for e in self._mine():
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:300])
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(f"console.{p['type']}: " + json.dumps(p.get("args"))[:300])
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append("log: " + p["entry"].get("text", "")[:300])
        return out

    def requests(self) -> list[str]:
        """URLs of every request the page made (the page itself included)."""
        return [e["params"]["request"]["url"] for e in self._mine() if e["method"] == "Network.requestWillBeSent"]
