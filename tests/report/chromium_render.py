#!/usr/bin/python3
"""chromium_render.py HTML OUTDIR: headless Chromium loads the report page
and saves a screenshot, driven step by step over the DevTools protocol
(--remote-debugging-pipe: JSON messages on fds 3 and 4, no port, no
network).

Why not `chromium --headless --screenshot`: that flag waits inside
Chromium with no deadline and says nothing about what it waits for; a CI
run waited out its 120 s once in ~240 renders. Here every step has its own
deadline (STEP_S) and a failure names the step and what Chromium said
last: start-up, the page's load event, the screenshot, the exit. The
screenshot is taken once the load event has fired and two animation
frames have been produced (requestAnimationFrame), so a frame exists to
capture; the page is static (no scripts, no external references), so what
is captured does not depend on when.

TAP (tests/report/taplib.py):
  1 the page loads (load event) from file:// and a PNG screenshot is saved
  2 the screenshot shows the page: thousands of dark pixels (text, plots)
  3 the page is what the report says: N SVG plots parsed, title set
  4 only the page itself was requested (no external fetch), none failed
  5 no console message, exception or log entry while loading -- after a
    positive control in the same browser: a console.error() the test
    issues itself is seen, so the listener was live.
  6 every table fits the page: none is wider than its box (no horizontal
    scroll bar) and the page is no wider than the window -- after a
    positive control: a too-wide table the test adds to the page is
    found, then removed.
Chromium's own stderr goes to OUTDIR/chromium.log; the protocol exchange
to OUTDIR/cdp.log.
"""
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Fail, run, want  # noqa: E402

CHROMIUM = os.environ.get("MMLOCK_CHROMIUM", "/usr/lib/chromium/chromium")
STEP_S = float(os.environ.get("MMLOCK_CHROMIUM_STEP_S", "60"))
CONTROL = "mmlockscope-console-control"


class Browser:
    def __init__(self, outdir):
        self.log = open(os.path.join(outdir, "cdp.log"), "w")
        self.err = open(os.path.join(outdir, "chromium.log"), "w")
        self.prof = tempfile.mkdtemp(prefix="mmlock-chromium-")
        self.events = []
        self.buf = b""
        self.seq = 0
        to_r, self.to_w = os.pipe()     # we write, Chromium reads fd 3
        self.from_r, from_w = os.pipe()  # Chromium writes fd 4, we read

        def fds():
            # move above 4 first so that dup2 never clobbers the other end
            a, b = os.dup(to_r), os.dup(from_w)
            a, b = os.dup2(a, 10), os.dup2(b, 11)
            os.dup2(10, 3)
            os.dup2(11, 4)

        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--remote-debugging-pipe",
             "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--no-first-run",
             "--no-default-browser-check", "--user-data-dir=" + self.prof,
             "--host-resolver-rules=MAP * ~NOTFOUND",
             "--enable-logging=stderr", "--v=0", "--window-size=1280,4000",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
            preexec_fn=fds, pass_fds=(3, 4), start_new_session=True)
        os.close(to_r)
        os.close(from_w)

    def note(self, s):
        self.log.write("%8.3f %s\n" % (time.monotonic() - self.t0, s[:2000]))
        self.log.flush()

    def _read(self, until):
        """One message, or None at the deadline UNTIL (monotonic)."""
        while b"\0" not in self.buf:
            left = until - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.from_r], [], [], left)
            if not r:
                return None
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise Fail("Chromium closed the pipe (exit %s; see chromium.log)"
                           % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        m = json.loads(msg)
        self.note("<- " + msg.decode(errors="replace"))
        return m

    def send(self, method, params=None, session=None, step=None):
        """Send a command and return its result within STEP_S."""
        self.seq += 1
        m = {"id": self.seq, "method": method, "params": params or {}}
        if session:
            m["sessionId"] = session
        data = json.dumps(m)
        self.note("-> " + data)
        os.write(self.to_w, data.encode() + b"\0")
        until = time.monotonic() + STEP_S
        while True:
            r = self._read(until)
            if r is None:
                raise Fail("step '%s': no answer to %s within %g s"
                           % (step or method, method, STEP_S))
            if r.get("id") == self.seq:
                if "error" in r:
                    raise Fail("%s failed: %s" % (method, r["error"]))
                return r.get("result", {})
            self.events.append(r)

    def wait_event(self, pred, step, since=0):
        """The first event from self.events[since:] on that PRED accepts;
        returns its index."""
        until = time.monotonic() + STEP_S
        for i in range(since, len(self.events)):
            if pred(self.events[i]):
                return i
        while True:
            r = self._read(until)
            if r is None:
                raise Fail("step '%s': not within %g s" % (step, STEP_S))
            self.events.append(r)
            if pred(r):
                return len(self.events) - 1

    def close(self):
        """Browser.close, then the exit within STEP_S (killed after)."""
        how = "exited"
        try:
            self.send("Browser.close", step="close")
        except Fail as e:
            how = "no answer to Browser.close (%s)" % e
        try:
            self.proc.wait(STEP_S)
        except subprocess.TimeoutExpired:
            how = "did not exit within %g s of Browser.close: killed" % STEP_S
        # its helpers too (zygote, renderers): they are its session
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        shutil.rmtree(self.prof, ignore_errors=True)
        return how


def dark_pixels(png):
    from PIL import Image
    im = Image.open(png).convert("L")
    return im.size, sum(im.histogram()[:128])


def main(argv):
    html, outdir = os.path.abspath(argv[0]), argv[1]
    url = "file://" + html
    shot = os.path.join(outdir, "screenshot.png")
    if os.path.exists(shot):
        os.unlink(shot)
    st = {}

    def load():
        want(os.access(CHROMIUM, os.X_OK), "Chromium", CHROMIUM + " missing",
             "installed (make deps)")
        b = st["b"] = Browser(outdir)
        # start-up: the browser answers on the pipe
        v = b.send("Browser.getVersion", step="start-up")
        t = b.send("Target.createTarget", {"url": "about:blank"})
        s = b.send("Target.attachToTarget",
                   {"targetId": t["targetId"], "flatten": True})["sessionId"]
        st["s"] = s
        for d in ("Page", "Runtime", "Log", "Network"):
            b.send(d + ".enable", session=s)
        since = len(b.events)
        b.send("Page.navigate", {"url": url}, session=s, step="navigate")
        # the load event of this page, not of the about:blank before it
        i = b.wait_event(lambda e: e.get("method") == "Page.frameNavigated"
                         and e["params"]["frame"].get("url") == url,
                         "navigated to " + url, since)
        b.wait_event(lambda e: e.get("method") == "Page.loadEventFired"
                     and e.get("sessionId") == s, "load event of " + url, i)
        # two animation frames: a frame has been produced since the load
        b.send("Runtime.evaluate", {"expression": "new Promise(r => "
               "requestAnimationFrame(() => requestAnimationFrame(r)))",
               "awaitPromise": True}, session=s, step="first frames")
        img = b.send("Page.captureScreenshot", {"format": "png"}, session=s,
                     step="screenshot")["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(img))
        st["loaded"] = True
        return "%s, %.1f s, %s" % (v.get("product"),
                                   time.monotonic() - b.t0, shot)

    def need_load():
        if not st.get("loaded"):
            raise Fail("the page did not load (check 1)")
        return st["b"], st["s"]

    def blank():
        need_load()
        size, dark = dark_pixels(shot)
        want(dark > 5000, "dark pixels in %dx%d" % size, dark, "> 5000")
        return "%dx%d, %d dark pixels" % (size[0], size[1], dark)

    def content():
        b, s = need_load()
        r = b.send("Runtime.evaluate", {"expression": "JSON.stringify("
                   "[document.title, document.querySelectorAll('svg').length,"
                   " document.querySelectorAll('table').length])",
                   "returnByValue": True}, session=s)
        title, svgs, tables = json.loads(r["result"]["value"])
        want(title.startswith("mmlockscope"), "document.title", repr(title),
             "'mmlockscope...'")
        want(svgs >= 1 and tables >= 1, "SVG plots, tables", (svgs, tables),
             ">= 1 each")
        return "%d SVG, %d tables" % (svgs, tables)

    def requests():
        b, s = need_load()
        req = [e["params"]["request"]["url"] for e in b.events
               if e.get("method") == "Network.requestWillBeSent"]
        failed = [e["params"] for e in b.events
                  if e.get("method") == "Network.loadingFailed"]
        # positive control: the page's own request was seen
        want(url in req, "requests seen", req[:3], "the page's own " + url)
        other = [u for u in req if u != url and not u.startswith("data:")]
        want(not other, "requests other than the page", other[:3], "none")
        want(not failed, "failed loads", failed[:2], "none")
        return "1 request: the page"

    def console():
        b, s = need_load()
        kinds = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown",
                 "Log.entryAdded")
        seen = [e for e in b.events if e.get("method") in kinds]
        # positive control: a message the test makes itself is seen
        b.send("Runtime.evaluate", {"expression": "console.error('%s')"
                                    % CONTROL}, session=s)
        b.wait_event(lambda e: e.get("method") == "Runtime.consoleAPICalled"
                     and CONTROL in json.dumps(e["params"].get("args")),
                     "the control console.error() seen")
        want(not seen, "console messages while loading",
             json.dumps(seen[0]["params"])[:200] if seen else "", "none")
        return "the control console.error() was seen"

    def fit():
        b, s = need_load()
        # the tables wider than their box, and the page's overflow
        measure = ("JSON.stringify([Array.from(document.querySelectorAll("
                   "'table')).filter(t => t.scrollWidth > t.clientWidth + 1)"
                   ".map(t => [t.rows[0].textContent.trim().slice(0, 60), "
                   "t.scrollWidth, t.clientWidth]), document.documentElement"
                   ".scrollWidth - window.innerWidth, document.querySelectorAll("
                   "'table').length])")

        def ev(expr):
            r = b.send("Runtime.evaluate", {"expression": expr,
                                            "returnByValue": True},
                       session=s)
            return r["result"].get("value")
        ev("(() => { const t = document.createElement('table');"
           " t.id = 'mmlock-control'; t.insertRow().insertCell().textContent"
           " = 'x '.repeat(2000); document.body.appendChild(t); })()")
        ctl = json.loads(ev(measure))[0]
        ev("document.getElementById('mmlock-control').remove()")
        want(ctl, "the control too-wide table", "not found", "found")
        wide, over, n = json.loads(ev(measure))
        want(not wide, "tables wider than their box [heading, scroll, box]",
             wide[:3], "none")
        want(over <= 0, "page width beyond the window", "%d px" % over,
             "<= 0")
        return "%d tables fit; the control table was found" % n

    try:
        run([("chromium loads the page and saves a screenshot", load),
             ("the screenshot shows the page (not blank)", blank),
             ("the page holds the report's plots and tables", content),
             ("only the page itself was requested, nothing failed", requests),
             ("no console message, exception or log entry while loading",
              console),
             ("every table fits the page width", fit)])
    finally:
        if "b" in st:
            print("# chromium: %s" % st["b"].close())


if __name__ == "__main__":
    main(sys.argv[1:])
