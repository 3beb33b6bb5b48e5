#!/usr/bin/python3
"""A screen reader's checks of a Tessera app, over AT-SPI, from outside the app.

Run inside a private session bus (dbus-run-session) with DISPLAY set to an X server:

    atspi_client.py --title TITLE -- APP ARGUMENTS...

It starts the accessibility bus (at-spi-bus-launcher) and the registry (at-spi2-registryd), then
the app, and uses pyatspi as Orca does: it finds the app by name in the desktop, walks its tree,
reads and drives its button, switch, text field and list, compares extents with the window's place
as the X server reports it, and follows the focus as Tab moves it. Every wait polls with a deadline.
Prints "ok <check>: ..." per check and "all checks passed" at the end; exits 1 on the first failure.

With --windows, the app shows two windows (the second titled --second-title, with a count, a "Press"
button and a "Close" button) and the checks are of the windows: two frames under the application,
each with its title and its own elements; "Press" pressed through its action counts in the second
window and renames it; "Close" closes it, and one frame is left.

With --controls, the app shows a check box, two radio groups (one of them linked segments), a
slider, a progress bar, a spin button and a search field, and the checks read their roles, states
and values (the Value interface's range and increment) and drive them by their actions.
"""

import argparse
import os
import subprocess
import sys
import time
import traceback

BUS_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
REGISTRY = "/usr/libexec/at-spi2-registryd"
POLL = 0.02  # seconds between two looks at something awaited


class CheckFailed(Exception):
    pass


def say(text):
    print(text, flush=True)


def wait_until(what, predicate, timeout=15.0, pump=None):
    """Polls `predicate` (pumping events between looks) until it gives a true value; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        if pump:
            pump()
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:  # an object not there yet, a call refused while starting
            last_error = error
        if time.monotonic() > deadline:
            raise CheckFailed("timed out after %.0f s waiting for %s%s" % (
                timeout, what, "" if last_error is None else " (last error: %r)" % (last_error,)))
        time.sleep(POLL)


def start_buses(processes):
    """The accessibility bus and its registry, each awaited on the bus."""
    from gi.repository import Gio, GLib

    session = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    processes.append(subprocess.Popen([BUS_LAUNCHER, "--launch-immediately"]))

    def address():
        reply = session.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                                  GLib.VariantType.new("(s)"), Gio.DBusCallFlags.NO_AUTO_START, 1000, None)
        return reply.unpack()[0]

    a11y_address = wait_until("the accessibility bus (org.a11y.Bus)", address)
    processes.append(subprocess.Popen([REGISTRY]))
    a11y = Gio.DBusConnection.new_for_address_sync(
        a11y_address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)

    def registry_running():
        reply = a11y.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                               GLib.Variant("(s)", ("org.a11y.atspi.Registry",)), GLib.VariantType.new("(b)"),
                               Gio.DBusCallFlags.NONE, 1000, None)
        return reply.unpack()[0]

    wait_until("the AT-SPI registry", registry_running)
    say("ok buses: accessibility bus at %s, registry running" % a11y_address)


def descendants(accessible, depth=0, limit=8):
    """Every element under `accessible`, depth first (a list's rows: only those with a node, read by index below)."""
    result = []
    if depth > limit:
        return result
    count = accessible.childCount
    for index in range(min(count, 64)):
        child = accessible.getChildAtIndex(index)
        if child is None:
            continue
        result.append(child)
        if child.getRole() != pyatspi.ROLE_LIST:
            result.extend(descendants(child, depth + 1, limit))
    return result


def find(elements, role, name=None, name_prefix=None):
    for element in elements:
        if element.getRole() != role:
            continue
        if name is not None and element.name != name:
            continue
        if name_prefix is not None and not element.name.startswith(name_prefix):
            continue
        return element
    raise CheckFailed("no %r%s in the tree: %s" % (
        role, " named %r" % (name or name_prefix) if (name or name_prefix) else "",
        [(e.getRoleName(), e.name) for e in elements]))


def states(accessible):
    return accessible.getState()


class Session:
    """The buses, pyatspi's main loop and the app under check, found in the desktop by name."""

    def __init__(self, title, app_command, listen=()):
        self.title = title
        self.app_command = app_command
        self.listen = listen
        self.processes = []
        self.app = None
        self.events = []
        self.context = None

    def pump(self):
        while self.context is not None and self.context.iteration(False):
            pass

    def start(self):
        """Starts the buses, listens for `listen`'s event kinds (into `events`: type, source, detail1,
        detail2, any_data), starts the app and returns its application object."""
        start_buses(self.processes)
        global pyatspi
        import pyatspi
        from gi.repository import GLib

        self.context = GLib.MainContext.default()

        def heard(event):
            self.events.append((event.type, event.source, event.detail1, event.detail2, event.any_data))

        for kind in self.listen:
            pyatspi.Registry.registerEventListener(heard, kind)
        self.app = subprocess.Popen(self.app_command)
        desktop = pyatspi.Registry.getDesktop(0)

        def the_app():
            if self.app.poll() is not None:
                raise CheckFailed("the app exited with status %d" % self.app.returncode)
            for index in range(desktop.childCount):
                candidate = desktop.getChildAtIndex(index)
                if candidate is not None and candidate.name == self.title:
                    return candidate
            return None

        return wait_until("the app named %r in the desktop" % self.title, the_app, timeout=60, pump=self.pump)

    def stop(self):
        for process in ([self.app] if self.app else []) + list(reversed(self.processes)):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()


def run_checks(session, checks):
    """Runs `checks(application)` in `session`; says the verdict and returns the exit status."""
    try:
        application = session.start()
        checks(application)
        say("all checks passed")
        return 0
    except CheckFailed as failure:
        say("FAILED: %s" % failure)
        return 1
    except Exception:
        say("FAILED with an error:\n" + traceback.format_exc())
        return 1
    finally:
        session.stop()


def check(title, app_command):
    session = Session(title, app_command, listen=(
        "object:state-changed:focused", "object:state-changed:checked", "focus:", "object:property-change:accessible-name",
        "object:text-changed:insert", "object:text-changed:delete", "object:children-changed:add", "object:text-caret-moved"))
    pump = session.pump

    def checks(application):
        say("ok found the app: %r, toolkit %s %s, %d child" % (
            application.name, application.get_toolkit_name(), application.get_toolkit_version(), application.childCount))
        if application.get_toolkit_name() != "Tessera" or application.getRole() != pyatspi.ROLE_APPLICATION:
            raise CheckFailed("the app is a %s of toolkit %r" % (application.getRoleName(), application.get_toolkit_name()))

        # The tree: the window, and in it the screen's elements with their roles and names.
        frame = wait_until("the window element", lambda: application.getChildAtIndex(0), pump=pump)
        if frame.getRole() != pyatspi.ROLE_FRAME or frame.name != title:
            raise CheckFailed("the app's child is %s %r, not the frame %r" % (frame.getRoleName(), frame.name, title))
        if frame.parent is None or frame.parent.getRole() != pyatspi.ROLE_APPLICATION:
            raise CheckFailed("the frame's parent is not the application")
        elements = wait_until("the screen's elements", lambda: [e for e in descendants(frame)
                                                                if e.getRole() == pyatspi.ROLE_LIST] and descendants(frame),
                              pump=pump)
        heading = find(elements, pyatspi.ROLE_HEADING, "Accessibility check")
        count = find(elements, pyatspi.ROLE_LABEL, "Pressed 0 times")
        button = find(elements, pyatspi.ROLE_PUSH_BUTTON, "Count")
        switch = find(elements, pyatspi.ROLE_TOGGLE_BUTTON, "Wi-Fi")
        entry = find(elements, pyatspi.ROLE_ENTRY, "Message")
        listing = find(elements, pyatspi.ROLE_LIST)
        roles = [(e.getRoleName(), e.name) for e in elements]
        order = [roles.index((x.getRoleName(), x.name)) for x in (heading, count, button, switch, entry, listing)]
        if order != sorted(order):
            raise CheckFailed("the elements are not in reading order: %s" % roles)
        for element in (button, switch, entry):
            state = states(element)
            for needed in (pyatspi.STATE_ENABLED, pyatspi.STATE_SENSITIVE, pyatspi.STATE_FOCUSABLE, pyatspi.STATE_SHOWING,
                           pyatspi.STATE_VISIBLE):
                if not state.contains(needed):
                    raise CheckFailed("%r lacks %s" % (element.name, pyatspi.stateToString(needed)))
        if heading.getIndexInParent() < 0 or heading.parent is None:
            raise CheckFailed("the heading has no place in its parent")
        say("ok tree: %s" % ", ".join("%s %r" % r for r in roles[:8]))

        # The button: its action, the count's new name, and a row added to the list.
        action = button.queryAction()
        names = [action.getName(i) for i in range(action.nActions)]
        if names != ["click"]:
            raise CheckFailed("the button's actions are %s" % names)
        rows_before = listing.childCount
        if not action.doAction(0):
            raise CheckFailed("DoAction(click) on the button answered false")
        wait_until("the count to read 'Pressed 1 time'", lambda: count.name == "Pressed 1 time", pump=pump)
        wait_until("a row added to the list", lambda: listing.childCount == rows_before + 1, pump=pump)
        say("ok button: click pressed it; the count reads %r; the list has %d rows" % (count.name, listing.childCount))

        # The switch: off, then on through its action.
        if states(switch).contains(pyatspi.STATE_CHECKED) or not states(switch).contains(pyatspi.STATE_CHECKABLE):
            raise CheckFailed("the switch should start checkable and off")
        if not switch.queryAction().doAction(0):
            raise CheckFailed("DoAction(click) on the switch answered false")
        wait_until("the switch to be checked", lambda: states(switch).contains(pyatspi.STATE_CHECKED), pump=pump)
        say("ok switch: 'Wi-Fi' was off; click turned it on (checked)")

        # The text field: read, set, insert, delete, words.
        text = entry.queryText()
        if text.getText(0, -1) != "hello" or text.characterCount != 5:
            raise CheckFailed("the field reads %r (%d characters)" % (text.getText(0, -1), text.characterCount))
        editable = entry.queryEditableText()
        if not editable.setTextContents("changed text"):
            raise CheckFailed("SetTextContents answered false")
        wait_until("the field to read 'changed text'", lambda: entry.queryText().getText(0, -1) == "changed text", pump=pump)
        if not editable.insertText(0, "new ", 4):
            raise CheckFailed("InsertText answered false")
        wait_until("the field to read 'new changed text'", lambda: entry.queryText().getText(0, -1) == "new changed text",
                   pump=pump)
        if not editable.deleteText(12, 16):
            raise CheckFailed("DeleteText answered false")
        wait_until("the field to read 'new changed '", lambda: entry.queryText().getText(0, -1) == "new changed ", pump=pump)
        word = entry.queryText().getTextAtOffset(5, pyatspi.TEXT_BOUNDARY_WORD_START)
        if (word[0], word[1], word[2]) != ("changed ", 4, 12):
            raise CheckFailed("the word at 5 is %r" % (word,))
        if entry.queryText().caretOffset != 12:
            raise CheckFailed("the caret is at %d, not where the text was deleted (12)" % entry.queryText().caretOffset)
        say("ok text: read 'hello', set, inserted and deleted to %r; the word at 5 is %r" % (
            entry.queryText().getText(0, -1), word[0]))

        # The list: rows read by index, with a node or not.
        first = listing.getChildAtIndex(0)
        if first.getRole() != pyatspi.ROLE_LIST_ITEM or first.name != "Row 0" or first.getIndexInParent() != 0:
            raise CheckFailed("row 0 is %s %r at %d" % (first.getRoleName(), first.name, first.getIndexInParent()))
        far = listing.getChildAtIndex(150)
        if far is None or far.getRole() != pyatspi.ROLE_LIST_ITEM or far.getIndexInParent() != 150:
            raise CheckFailed("row 150 (no node) did not read as a list item at 150")
        if states(far).contains(pyatspi.STATE_SHOWING):
            raise CheckFailed("row 150 says it is showing")
        say("ok list: %d rows; row 0 %r; row 150 a placeholder item at index %d" % (
            listing.childCount, first.name, far.getIndexInParent()))

        # Extents: the frame where the X server has the window; the button inside it, found at its centre.
        window = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^%s$" % title],
                                capture_output=True, text=True, timeout=20).stdout.split()[0]
        geometry = dict(line.split("=") for line in subprocess.run(
            ["xdotool", "getwindowgeometry", "--shell", window], capture_output=True, text=True,
            timeout=20).stdout.split())
        x, y, width, height = (int(geometry[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))

        def frame_extents_match():
            box = frame.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            return (abs(box.x - x) <= 1 and abs(box.y - y) <= 1 and box.width == width and box.height == height) and box

        box = wait_until("the frame's screen extents to be the window's (%d,%d %dx%d)" % (x, y, width, height),
                         frame_extents_match, pump=pump)
        button_box = button.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        inside = (button_box.width > 0 and button_box.height > 0 and button_box.x >= box.x and button_box.y >= box.y
                  and button_box.x + button_box.width <= box.x + box.width
                  and button_box.y + button_box.height <= box.y + box.height)
        if not inside:
            raise CheckFailed("the button's extents %s are not inside the window's %s" % (button_box, box))
        window_box = button.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        if (window_box.x + box.x, window_box.y + box.y) != (button_box.x, button_box.y):
            raise CheckFailed("window and screen extents disagree: %s + %s vs %s" % (window_box, box, button_box))
        centre = (button_box.x + button_box.width // 2, button_box.y + button_box.height // 2)
        hit = frame.queryComponent().getAccessibleAtPoint(centre[0], centre[1], pyatspi.DESKTOP_COORDS)
        if hit is None or hit.name != "Count":
            raise CheckFailed("at the button's centre %s is %r" % (centre, hit and hit.name))
        say("ok extents: window at (%d,%d) %dx%d as X has it; button at (%d,%d) %dx%d, found at its centre" % (
            box.x, box.y, box.width, box.height, button_box.x, button_box.y, button_box.width, button_box.height))

        # Focus: Tab from the keyboard moves it, and the screen reader hears where.
        del session.events[:]
        subprocess.run(["xdotool", "windowfocus", "--sync", window, "key", "--window", window, "Tab"], check=True, timeout=20)

        def focused_event():
            for kind, source, detail1, _, _ in session.events:
                if kind == "object:state-changed:focused" and detail1 == 1:
                    return source
            return None

        source = wait_until("a focus event after Tab", focused_event, pump=pump)
        if not states(source).contains(pyatspi.STATE_FOCUSED):
            raise CheckFailed("%r got a focus event but does not say it is focused" % source.name)
        first_focus = source.name
        if not any(kind == "focus:" for kind, _, _, _, _ in session.events):
            wait_until("the focus: event", lambda: any(kind == "focus:" for kind, _, _, _, _ in session.events), pump=pump)
        del session.events[:]
        subprocess.run(["xdotool", "key", "--window", window, "Tab"], check=True, timeout=20)
        second = wait_until("a second focus event after Tab", focused_event, pump=pump)
        say("ok focus: Tab focused %s %r, then %s %r" % (
            source.getRoleName(), first_focus, second.getRoleName(), second.name))

        # Events heard for what changed: the switch checked, the count renamed, text inserted, a row added.
        del session.events[:]
        switch.queryAction().doAction(0)
        wait_until("state-changed:checked after the switch's click",
                   lambda: any(k == "object:state-changed:checked" and d == 0 for k, _, d, _, _ in session.events), pump=pump)
        action.doAction(0)
        wait_until("property-change:accessible-name for the count",
                   lambda: any(k == "object:property-change:accessible-name" and a == "Pressed 2 times"
                               for k, _, _, _, a in session.events), pump=pump)
        wait_until("children-changed:add on the list",
                   lambda: any(k == "object:children-changed:add" for k, _, _, _, _ in session.events), pump=pump)
        editable.insertText(0, "A", 1)
        wait_until("text-changed:insert of 'A' at 0",
                   lambda: any(k == "object:text-changed:insert" and d1 == 0 and d2 == 1 and a == "A"
                               for k, _, d1, d2, a in session.events), pump=pump)
        say("ok events: %s" % sorted(set(k for k, _, _, _, _ in session.events)))

        # Menus and dialogs: the window's menu bar, a menu opened by its title's action, an item of it
        # activated, and the alert that item shows (modal), answered through its button.
        def find_now(role, name=None):
            try:
                return find(descendants(frame), role, name)
            except CheckFailed:
                return None

        bar = wait_until("the menu bar", lambda: find_now(pyatspi.ROLE_MENU_BAR), pump=pump)
        titles = [bar.getChildAtIndex(i) for i in range(bar.childCount)]
        if [t.name for t in titles] != ["File", "Help"]:
            raise CheckFailed("the menu bar holds %s" % [(t.getRoleName(), t.name) for t in titles])
        if not titles[0].queryAction().doAction(0):
            raise CheckFailed("DoAction on the File title answered false")
        menu = wait_until("the File menu", lambda: find_now(pyatspi.ROLE_MENU, "File"), pump=pump)
        items = [menu.getChildAtIndex(i) for i in range(menu.childCount)]
        item = find(items, pyatspi.ROLE_MENU_ITEM, "Reset Count…")
        if find(items, pyatspi.ROLE_CHECK_MENU_ITEM, "Show Row Numbers") is None:
            raise CheckFailed("no check menu item")
        item_name = item.name
        if not item.queryAction().doAction(0):
            raise CheckFailed("DoAction on the menu item answered false")
        alert = wait_until("the alert the item shows", lambda: find_now(pyatspi.ROLE_ALERT, "Reset the count?"), pump=pump)
        if not states(alert).contains(pyatspi.STATE_MODAL):
            raise CheckFailed("the alert is not modal")
        wait_until("the menu to close", lambda: find_now(pyatspi.ROLE_MENU, "File") is None, pump=pump)
        alert_name = alert.name
        reset = find(descendants(alert), pyatspi.ROLE_PUSH_BUTTON, "Reset")
        reset.queryAction().doAction(0)
        wait_until("the alert to close", lambda: find_now(pyatspi.ROLE_ALERT) is None, pump=pump)
        wait_until("the count to read 'Pressed 0 times' again", lambda: count.name == "Pressed 0 times", pump=pump)
        say("ok menus: the bar holds %s; File opened, %r activated, the alert %r answered" % (
            [t.name for t in titles], item_name, alert_name))

    return run_checks(session, checks)


def check_windows(title, second_title, app_command):
    session = Session(title, app_command, listen=("object:children-changed:add", "object:children-changed:remove",
                                                   "window:activate"))
    pump = session.pump

    def checks(application):
        def frames():
            return [application.getChildAtIndex(i) for i in range(application.childCount)]

        wait_until("two frames under the application", lambda: len(frames()) == 2 and all(frames()), pump=pump)
        first, second = frames()
        for frame, name in ((first, title), (second, second_title)):
            if frame.getRole() != pyatspi.ROLE_FRAME or frame.name != name:
                raise CheckFailed("a child of the app is %s %r, not the frame %r" % (frame.getRoleName(), frame.name, name))
            if frame.parent is None or frame.parent.getRole() != pyatspi.ROLE_APPLICATION:
                raise CheckFailed("the frame %r's parent is not the application" % name)
        if second.getIndexInParent() != 1:
            raise CheckFailed("the second frame's index in the application is %d" % second.getIndexInParent())
        say("ok windows: the application holds %s" % [(f.getRoleName(), f.name) for f in frames()])

        first_elements = wait_until("the main window's elements", lambda: descendants(first), pump=pump)
        second_elements = wait_until("the second window's elements",
                                     lambda: [e for e in descendants(second) if e.getRole() == pyatspi.ROLE_PUSH_BUTTON]
                                     and descendants(second), pump=pump)
        find(first_elements, pyatspi.ROLE_LABEL, "Main screen")
        press = find(second_elements, pyatspi.ROLE_PUSH_BUTTON, "Press")
        close = find(second_elements, pyatspi.ROLE_PUSH_BUTTON, "Close")
        count = find(second_elements, pyatspi.ROLE_LABEL, "Second pressed 0 times")
        if [e for e in first_elements if e.name in ("Press", "Close")]:
            raise CheckFailed("the main frame holds the second window's buttons: %s" % [(e.getRoleName(), e.name) for e in first_elements])
        if press.parent is None or press.parent.name != second_title:
            raise CheckFailed("the Press button's parent is %r" % (press.parent.name if press.parent else None))
        say("ok window trees: the main frame holds %s; the second %s" % (
            [(e.getRoleName(), e.name) for e in first_elements], [(e.getRoleName(), e.name) for e in second_elements]))

        if not press.queryAction().doAction(0):
            raise CheckFailed("DoAction on the second window's Press answered false")
        wait_until("the second window's count to read 'Second pressed 1 time'", lambda: count.name == "Second pressed 1 time",
                   pump=pump)
        renamed = second_title + " (1)"
        wait_until("the second frame to be renamed %r" % renamed, lambda: second.name == renamed, pump=pump)
        if first.name != title:
            raise CheckFailed("the main frame was renamed %r" % first.name)
        say("ok window action: Press counted in the second window (%r) and renamed it %r" % (count.name, second.name))

        if not close.queryAction().doAction(0):
            raise CheckFailed("DoAction on the second window's Close answered false")
        wait_until("one frame left", lambda: application.childCount == 1, pump=pump)
        left = application.getChildAtIndex(0)
        if left is None or left.name != title:
            raise CheckFailed("the frame left is %r" % (left.name if left else None))
        wait_until("the children-changed:remove on the application",
                   lambda: [e for e in session.events if e[0] == "object:children-changed:remove"
                           and e[1] is not None and e[1].getRole() == pyatspi.ROLE_APPLICATION],
                   pump=pump)
        say("ok window closed: one frame left, %r; the application said the second went" % left.name)

    return run_checks(session, checks)


def check_controls(title, app_command):
    """The everyday controls as a screen reader meets them: roles, names, states and values, and
    their actions."""
    session = Session(title, app_command)
    pump = session.pump

    def checks(application):
        frame = wait_until("the app's frame", lambda: application.getChildAtIndex(0), pump=pump)
        elements = wait_until("the controls", lambda: [e for e in descendants(frame) if e.getRole() == pyatspi.ROLE_SPIN_BUTTON]
                              and descendants(frame), pump=pump)

        def value(accessible):
            v = accessible.queryValue()
            return (v.minimumValue, v.maximumValue, v.currentValue, v.minimumIncrement)

        box = find(elements, pyatspi.ROLE_CHECK_BOX, "Remember me")
        if states(box).contains(pyatspi.STATE_CHECKED):
            raise CheckFailed("the check box starts checked")
        if not box.queryAction().doAction(0):
            raise CheckFailed("DoAction on the check box answered false")
        wait_until("the check box to be checked", lambda: states(box).contains(pyatspi.STATE_CHECKED), pump=pump)
        say("ok check box: %r is a check box, checked by its action" % box.name)

        radios = [e for e in elements if e.getRole() == pyatspi.ROLE_RADIO_BUTTON]
        checked = [r.name for r in radios if states(r).contains(pyatspi.STATE_CHECKED)]
        names = [r.name for r in radios]
        for expected in ("Small", "Medium", "Large", "Day", "Week", "Month"):
            if expected not in names:
                raise CheckFailed("no radio button %r among %s" % (expected, names))
        if checked != ["Medium", "Week"]:
            raise CheckFailed("the checked radio buttons are %s" % checked)
        large = [r for r in radios if r.name == "Large"][0]
        if not large.queryAction().doAction(0):
            raise CheckFailed("DoAction on Large answered false")
        wait_until("Large to be checked and Medium not",
                   lambda: states(large).contains(pyatspi.STATE_CHECKED)
                   and not states([r for r in radios if r.name == "Medium"][0]).contains(pyatspi.STATE_CHECKED), pump=pump)
        say("ok radio buttons: %s, one checked per group; Large chosen by its action" % names)

        slider = find(elements, pyatspi.ROLE_SLIDER, "Volume")
        if value(slider) != (0.0, 100.0, 40.0, 5.0):
            raise CheckFailed("the slider's value range is %s" % (value(slider),))
        action = slider.queryAction()
        increments = [i for i in range(action.nActions) if action.getName(i) == "increment"]
        if not increments or not action.doAction(increments[0]):
            raise CheckFailed("the slider has no increment action that answers")
        wait_until("the slider at 45", lambda: value(slider)[2] == 45.0, pump=pump)
        say("ok slider: %r from 0 to 100 by 5, at 40, incremented to %s" % (slider.name, value(slider)[2]))

        progress = find(elements, pyatspi.ROLE_PROGRESS_BAR)
        low, high, current, _ = value(progress)
        if not (low == 0.0 and high == 1.0 and abs(current - 0.3) < 1e-9):
            raise CheckFailed("the progress bar's value is %s" % (value(progress),))
        say("ok progress bar: %s of %s to %s" % (current, low, high))

        spin = find(elements, pyatspi.ROLE_SPIN_BUTTON, "Copies")
        if value(spin) != (1.0, 10.0, 2.0, 1.0):
            raise CheckFailed("the spin button's value range is %s" % (value(spin),))
        say("ok spin button: %r from 1 to 10, at 2" % spin.name)

        entry = [e for e in elements if e.getRole() == pyatspi.ROLE_ENTRY]
        if not entry:
            raise CheckFailed("no entry (the search field) among %s" % [(e.getRoleName(), e.name) for e in elements])
        say("ok search field: an entry named %r" % entry[0].name)

    return run_checks(session, checks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--title", required=True, help="the app's name in the desktop (its window's title)")
    parser.add_argument("--windows", action="store_true", help="check an app of two windows instead")
    parser.add_argument("--second-title", default="", help="with --windows: the second window's title")
    parser.add_argument("--controls", action="store_true", help="check an app of everyday controls instead")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the app and its arguments")
    arguments = parser.parse_args()
    command = arguments.command[1:] if arguments.command[:1] == ["--"] else arguments.command
    if not command:
        parser.error("no app to start")
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        parser.error("no session bus: run inside dbus-run-session")
    if arguments.controls:
        sys.exit(check_controls(arguments.title, command))
    if arguments.windows:
        sys.exit(check_windows(arguments.title, arguments.second_title, command))
    sys.exit(check(arguments.title, command))


if __name__ == "__main__":
    main()
