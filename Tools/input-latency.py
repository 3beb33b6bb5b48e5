#!/usr/bin/python3
"""Input latency as a user feels it, measured from outside the app, on an X server.

Input goes in through XTest (the X server's own event injection, as a real mouse and keyboard
arrive) and the answer is read as X DAMAGE events (the server saying that the window's pixels
changed): the time from sending a wheel notch or a keystroke to the first damage of the window is what
the app's user waits for. Any X client can be measured this way, so the same script compares Tessera
with GTK and Qt twins of an app.

  /usr/bin/python3 Tools/input-latency.py --name '^Tessera gallery$' --kind wheel --count 200 --json out.json

The window is found by its name (a regular expression, as `xdotool search --name`). For `wheel`, the
pointer is moved to the window's centre (or --at X,Y inside it) and notches go down and up in turn; for
`typing`, the letters a–z go to the focused window in turn (focus a field first: --click X,Y clicks
there once before measuring). Each input waits for the window to be still for --rest seconds (no
damage) and a random phase of a 60 Hz frame, then is sent; an input answered by no damage within
--timeout seconds counts as missed. Needs python3-xlib (Debian's package), Xvfb or any X server with
XTEST and DAMAGE.
"""

import argparse
import json
import random
import select
import statistics
import sys
import time

from Xlib import X, display as xdisplay
from Xlib.ext import damage, xtest

from xwindows import find_window


def percentile(values, fraction):
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="the window's name, a regular expression")
    parser.add_argument("--kind", choices=["wheel", "typing"], default="wheel")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--rest", type=float, default=0.15, help="seconds without damage before each input")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--at", help="X,Y in the window for the wheel (default: its centre)")
    parser.add_argument("--click", help="X,Y in the window to click once before measuring (focus a field)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", help="write the figures to this file")
    options = parser.parse_args()

    seed = options.seed if options.seed is not None else random.randrange(1 << 32)
    generator = random.Random(seed)
    connection = xdisplay.Display()
    if not connection.has_extension("DAMAGE") or not connection.has_extension("XTEST"):
        sys.exit("input-latency: the X server lacks DAMAGE or XTEST")
    connection.damage_query_version()
    root = connection.screen().root
    deadline = time.monotonic() + 20
    window = None
    while window is None and time.monotonic() < deadline:
        window = find_window(root, options.name)
        if window is None:
            time.sleep(0.1)
    if window is None:
        sys.exit("input-latency: no viewable window named like %r" % options.name)
    geometry = window.get_geometry()
    origin = window.translate_coords(root, 0, 0)
    left, top = -origin.x, -origin.y

    def move_to(x, y):
        xtest.fake_input(connection, X.MotionNotify, x=left + x, y=top + y)
        connection.sync()

    if options.click:
        x, y = (int(value) for value in options.click.split(","))
        move_to(x, y)
        xtest.fake_input(connection, X.ButtonPress, 1)
        xtest.fake_input(connection, X.ButtonRelease, 1)
        connection.sync()
        time.sleep(0.3)
    if options.kind == "wheel":
        x, y = (int(value) for value in options.at.split(",")) if options.at else (geometry.width // 2, geometry.height // 2)
        move_to(x, y)

    watched = window.damage_create(damage.DamageReportNonEmpty)
    descriptor = connection.fileno()

    def drain():
        """Takes every pending event; returns the time of the last damage seen, or None."""
        seen = None
        while connection.pending_events():
            event = connection.next_event()
            if event.type == connection.extension_event.DamageNotify:
                seen = time.monotonic()
                connection.damage_subtract(watched)
        return seen

    def wait_for_damage(until):
        while True:
            seen = drain()
            if seen is not None:
                return seen
            left_time = until - time.monotonic()
            if left_time <= 0:
                return None
            select.select([descriptor], [], [], left_time)

    def wait_still(seconds):
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < seconds:
            if wait_for_damage(quiet_since + seconds) is not None:
                quiet_since = time.monotonic()

    letters = "abcdefghijklmnopqrstuvwxyz"
    keycodes = [connection.keysym_to_keycode(ord(letter)) for letter in letters]
    results, missed = [], 0
    for index in range(options.count):
        wait_still(options.rest)
        time.sleep(generator.uniform(0, 1 / 60))
        drain()
        if options.kind == "wheel":
            button = 5 if index % 2 == 0 else 4
            sent = time.monotonic()
            xtest.fake_input(connection, X.ButtonPress, button)
            xtest.fake_input(connection, X.ButtonRelease, button)
        else:
            keycode = keycodes[index % len(keycodes)]
            sent = time.monotonic()
            xtest.fake_input(connection, X.KeyPress, keycode)
            xtest.fake_input(connection, X.KeyRelease, keycode)
        connection.flush()
        shown = wait_for_damage(sent + options.timeout)
        if shown is None:
            missed += 1
        else:
            results.append((shown - sent) * 1000)

    report = {
        "kind": options.kind,
        "seed": seed,
        "count": len(results),
        "missed": missed,
        "p50Ms": percentile(results, 0.5),
        "p99Ms": percentile(results, 0.99),
        "maxMs": max(results) if results else 0.0,
        "meanMs": statistics.fmean(results) if results else 0.0,
    }
    print("input-latency (XTest in, X DAMAGE out): %s, %d inputs, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d missed, seed %d"
          % (options.kind, len(results), report["p50Ms"], report["p99Ms"], report["maxMs"], missed, seed))
    if options.json:
        with open(options.json, "w") as file:
            json.dump(report, file, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
