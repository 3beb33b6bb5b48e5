#!/usr/bin/python3
"""A soak of the gallery in a real window: seeded random input from outside for a while, then the
memory it holds, what it logged, and what it costs at rest afterwards.

  /usr/bin/python3 Tools/soak.py --gallery .build/release/gallery --minutes 30 --seed 7 --json soak.json

It starts its own Xvfb (or uses $DISPLAY with --display-given), runs the gallery there with the
software renderer, and drives it as a user would, through XTest (the X server's own injection):
wheel notches, drags, clicks, keys (arrows, pages, Tab, Escape, Home/End, the screen keys 1-5),
typing, and now and then a resize of the window (xdotool). The input is random from --seed, so a run
replays. It reads the gallery's resident memory (VmRSS in /proc/PID/status) once the first screen is
up, after a warm-up of the same input (--warmup-minutes, 3: the caches fill to their budgets), after
the soak proper's first minute, at its middle and at its end, each time with the gallery's own split by owner (its
`--memory-log`, written when it receives SIGUSR1: images, bitmaps, textures, caches, the allocator's
free space, libraries), counts the frames the window showed (X DAMAGE events), the lines
the gallery logged at error level or worse, and, once the input has stopped and the screen settled,
the CPU it uses and the frames it shows over --rest-seconds at rest.

The run passes when the gallery is still running, RSS at the end is within --rss-growth (10%) of the
middle, nothing was logged at error level, and nothing was presented at rest. Needs python3-xlib,
xdotool and Xvfb (Debian's packages; `make test` installs them).
"""

import argparse
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from Xlib import X, XK, display as xdisplay
from Xlib.ext import damage, xtest

from xwindows import find_window


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def free_display():
    for number in range(120, 400):
        if not os.path.exists(f"/tmp/.X11-unix/X{number}") and not os.path.exists(f"/tmp/.X{number}-lock"):
            return f":{number}"
    raise SystemExit("soak: no free X display number")


class Output(threading.Thread):
    """Reads the gallery's output, keeping the lines logged at error level or worse."""

    LEVEL = re.compile(r"^\S+ (error|critical) |Fatal error|Program crashed|Segmentation fault")

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.errors = []
        self.lines = 0

    def run(self):
        for raw in iter(self.stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines += 1
            if self.LEVEL.search(line):
                self.errors.append(line)


class Soak:
    def __init__(self, arguments):
        self.arguments = arguments
        self.random = random.Random(arguments.seed)
        self.display = xdisplay.Display(arguments.display)
        self.root = self.display.screen().root
        self.window = None
        self.damage = None
        self.frames = 0
        self.actions = {}

    def find(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.window = find_window(self.root, self.arguments.name)
            if self.window is not None:
                break
            time.sleep(0.1)
        if self.window is None:
            raise SystemExit(f"soak: no window named {self.arguments.name!r} within {timeout} s")
        if not self.display.has_extension("DAMAGE"):
            raise SystemExit("soak: the X server has no DAMAGE extension")
        damage.query_version(self.display)
        self.damage = self.window.damage_create(damage.DamageReportNonEmpty)
        self.display.sync()

    def count_damage(self, seconds):
        """Counts the window's damage events for `seconds` (each one a frame shown)."""
        end = time.monotonic() + seconds
        count = 0
        while True:
            remaining = end - time.monotonic()
            while self.display.pending_events():
                event = self.display.next_event()
                if event.type == self.display.extension_event.DamageNotify:
                    count += 1
                    self.display.damage_subtract(self.damage)
            if remaining <= 0:
                return count
            select.select([self.display], [], [], remaining)

    def drain(self):
        self.frames += self.count_damage(0)

    def geometry(self):
        g = self.window.get_geometry()
        origin = self.window.translate_coords(self.root, 0, 0)
        return -origin.x, -origin.y, g.width, g.height

    def point(self):
        x, y, width, height = self.geometry()
        return x + self.random.randrange(8, max(9, width - 8)), y + self.random.randrange(8, max(9, height - 8))

    def move(self, x, y):
        xtest.fake_input(self.display, X.MotionNotify, x=x, y=y)

    def button(self, number, down):
        xtest.fake_input(self.display, X.ButtonPress if down else X.ButtonRelease, number)

    def key(self, name, shift=False):
        keysym = XK.string_to_keysym(name)
        code = self.display.keysym_to_keycode(keysym)
        if code == 0:
            return
        shift_code = self.display.keysym_to_keycode(XK.string_to_keysym("Shift_L"))
        if shift:
            xtest.fake_input(self.display, X.KeyPress, shift_code)
        xtest.fake_input(self.display, X.KeyPress, code)
        xtest.fake_input(self.display, X.KeyRelease, code)
        if shift:
            xtest.fake_input(self.display, X.KeyRelease, shift_code)

    def act(self):
        kind = self.random.choices(
            ["wheel", "drag", "click", "key", "typing", "screen", "resize"],
            weights=[30, 12, 14, 20, 12, 8, 1])[0]
        self.actions[kind] = self.actions.get(kind, 0) + 1
        if kind == "wheel":
            self.move(*self.point())
            button = self.random.choice([4, 5])
            for _ in range(self.random.randrange(1, 6)):
                self.button(button, True)
                self.button(button, False)
        elif kind == "drag":
            x, y = self.point()
            self.move(x, y)
            self.button(1, True)
            dy = self.random.randrange(-300, 300)
            for step in range(1, 9):
                self.move(x, y + dy * step // 8)
                self.display.sync()
                time.sleep(0.008)
            self.button(1, False)
        elif kind == "click":
            self.move(*self.point())
            self.button(1, True)
            self.button(1, False)
        elif kind == "key":
            self.key(self.random.choice(["Down", "Up", "Next", "Prior", "Tab", "Home", "End", "Escape", "Left", "Right"]))
        elif kind == "typing":
            for _ in range(self.random.randrange(1, 12)):
                self.key(self.random.choice(list("abcdefghijklmnopqrstuvwxyz") + ["space"]))
        elif kind == "screen":
            self.key("Escape")
            self.key(self.random.choice("12345"))
        elif kind == "resize":
            width, height = self.random.randrange(640, 1200), self.random.randrange(480, 900)
            subprocess.run(["xdotool", "windowsize", str(self.window.id), str(width), str(height)],
                           env=dict(os.environ, DISPLAY=self.arguments.display), check=False)
        self.display.sync()


class MemoryLog:
    """The gallery's `--memory-log FILE`: a line of JSON (the memory report by owner) each SIGUSR1."""

    def __init__(self):
        handle, self.path = tempfile.mkstemp(prefix="soak-memory-", suffix=".jsonl")
        os.close(handle)

    def lines(self):
        try:
            with open(self.path) as file:
                return [line for line in file.read().split("\n") if line.strip()]
        except OSError:
            return []

    def snapshot(self, pid, timeout=10):
        """Asks the gallery for a report and waits for its line; None when none came."""
        count = len(self.lines())
        os.kill(pid, signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.lines()
            if len(lines) > count:
                try:
                    return json.loads(lines[-1])
                except ValueError:
                    pass
            time.sleep(0.05)
        return None

    def remove(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gallery", default=".build/release/gallery")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--name", default="^Tessera gallery$")
    parser.add_argument("--renderer", default="software")
    parser.add_argument("--rate", type=float, default=10, help="input actions a second")
    parser.add_argument("--warmup-minutes", type=float, default=3,
                        help="input before the soak proper, while caches fill (not judged)")
    parser.add_argument("--rest-seconds", type=float, default=5)
    parser.add_argument("--rss-growth", type=float, default=0.10)
    parser.add_argument("--display-given", action="store_true", help="use $DISPLAY instead of starting Xvfb")
    parser.add_argument("--json")
    arguments = parser.parse_args()
    if arguments.seed is None:
        arguments.seed = random.randrange(1 << 32)
    print(f"soak: {arguments.warmup_minutes:g} minutes' warm-up, then {arguments.minutes:g} minutes, seed {arguments.seed} "
          "(--seed replays it)", flush=True)

    server = None
    if arguments.display_given:
        arguments.display = os.environ.get("DISPLAY") or sys.exit("soak: --display-given without $DISPLAY")
    else:
        if shutil.which("Xvfb") is None:
            sys.exit("soak: Xvfb is not installed")
        arguments.display = free_display()
        server = subprocess.Popen(["Xvfb", arguments.display, "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(f"/tmp/.X11-unix/X{arguments.display[1:]}"):
                break
            time.sleep(0.05)
    environment = dict(os.environ, DISPLAY=arguments.display, SDL_VIDEODRIVER="x11", TESSERA_NO_ACCESSIBILITY="1")
    memory_log = MemoryLog()
    gallery = subprocess.Popen([arguments.gallery, "--renderer", arguments.renderer, "--memory-log", memory_log.path],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment)
    output = Output(gallery.stdout)
    output.start()
    report = {"seed": arguments.seed, "minutes": arguments.minutes, "warmupMinutes": arguments.warmup_minutes,
              "renderer": arguments.renderer, "owners": {}}

    def measure(moment):
        report[f"rss{moment}Bytes"] = rss_bytes(gallery.pid)
        entry = memory_log.snapshot(gallery.pid)
        if entry is not None:
            report["owners"][moment] = entry["owners"]

    try:
        soak = Soak(arguments)
        soak.find()
        soak.count_damage(5)  # the first screen, settled
        measure("FirstScreen")
        # The warm-up: the same input, until the caches have filled to their budgets (the gallery's
        # grow for its first two minutes or so); growth is judged from here.
        warmup_end = time.monotonic() + arguments.warmup_minutes * 60
        while time.monotonic() < warmup_end and gallery.poll() is None:
            soak.act()
            soak.frames += soak.count_damage(1 / arguments.rate)
        measure("Start")
        duration = arguments.minutes * 60
        start = time.monotonic()
        middle_taken = False
        first_minute_taken = False
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= duration or gallery.poll() is not None:
                break
            if not first_minute_taken and elapsed >= min(60, duration / 2):
                measure("FirstMinute")
                first_minute_taken = True
            if not middle_taken and elapsed >= duration / 2:
                measure("Middle")
                middle_taken = True
            soak.act()
            soak.frames += soak.count_damage(1 / arguments.rate)
        report["running"] = gallery.poll() is None
        if report["running"]:
            if not first_minute_taken:
                measure("FirstMinute")
            if not middle_taken:
                measure("Middle")
            # At rest: menus and dialogs closed (Escape), the chat list (or, where a field has the
            # focus, a "1" typed into it), animations over, and a focused field's caret done
            # blinking (EditableTextNode.caretBlinkTimeout, 10 s after the last key).
            for name in ["Escape", "Escape", "Escape", "1"]:
                soak.key(name)
            soak.display.sync()
            soak.frames += soak.count_damage(11)
            measure("End")
            cpu_before = cpu_seconds(gallery.pid)
            report["framesAtRest"] = soak.count_damage(arguments.rest_seconds)
            report["cpuAtRestPercent"] = 100 * (cpu_seconds(gallery.pid) - cpu_before) / arguments.rest_seconds
        report["frames"] = soak.frames
        report["actions"] = soak.actions
    finally:
        if gallery.poll() is None:
            gallery.send_signal(signal.SIGTERM)
            try:
                gallery.wait(10)
            except subprocess.TimeoutExpired:
                gallery.kill()
        output.join(5)
        memory_log.remove()
        if server is not None:
            server.terminate()
            server.wait(10)
    report["errors"] = output.errors[:20]
    report["errorCount"] = len(output.errors)

    failures = []
    if not report.get("running"):
        failures.append(f"the gallery stopped (exit status {gallery.returncode})")
    else:
        middle, end = report["rssMiddleBytes"], report["rssEndBytes"]
        report["rssGrowthAfterMiddle"] = (end - middle) / middle if middle else 0
        first = report["rssFirstMinuteBytes"]
        report["rssGrowthAfterFirstMinute"] = (end - first) / first if first else 0
        if report["rssGrowthAfterMiddle"] > arguments.rss_growth:
            failures.append(f"RSS grew {report['rssGrowthAfterMiddle'] * 100:.1f}% after the middle")
        if report["framesAtRest"] > 0:
            failures.append(f"{report['framesAtRest']} frames shown at rest")
    if report["errorCount"]:
        failures.append(f"{report['errorCount']} lines logged at error level")
    report["passed"] = not failures
    report["failures"] = failures

    mb = 1024 * 1024
    print(f"soak: seed {arguments.seed}, {sum(report.get('actions', {}).values())} actions "
          f"({', '.join(f'{k} {v}' for k, v in sorted(report.get('actions', {}).items()))})")
    if report.get("running"):
        print(f"  RSS  first screen {report['rssFirstScreenBytes'] / mb:.1f} MB; after the warm-up "
              f"{report['rssStartBytes'] / mb:.1f} MB  middle {report['rssMiddleBytes'] / mb:.1f} MB  "
              f"end {report['rssEndBytes'] / mb:.1f} MB ({report['rssGrowthAfterMiddle'] * 100:+.1f}% after the middle, "
              f"{report['rssGrowthAfterFirstMinute'] * 100:+.1f}% after the soak's first minute "
              f"({report['rssFirstMinuteBytes'] / mb:.1f} MB))")
        moments = [m for m in ["FirstScreen", "Start", "FirstMinute", "Middle", "End"] if m in report["owners"]]
        if moments:
            keys = sorted({k for m in moments for k in report["owners"][m]},
                          key=lambda k: -max(report["owners"][m].get(k, 0) for m in moments))
            print("  by owner (MB): " + "  ".join(f"{m:>11}" for m in moments))
            for key in keys:
                values = [report["owners"][m].get(key, 0) / mb for m in moments]
                if max(values) >= 0.5:
                    print(f"    {key:<20}" + "".join(f"{v:13.1f}" for v in values))
        print(f"  frames shown {report['frames']}; at rest afterwards: {report['framesAtRest']} frames in "
              f"{arguments.rest_seconds:g} s, CPU {report['cpuAtRestPercent']:.2f}%")
    print(f"  lines logged at error level: {report['errorCount']}")
    for line in report["errors"][:5]:
        print(f"    {line}")
    print("soak: passed" if report["passed"] else "soak: FAILED: " + "; ".join(failures))
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump(report, file, indent=2)
    sys.exit(0 if report["passed"] else 1)


if __name__ == "__main__":
    main()
