#!/usr/bin/python3
"""A scripted fcitx5 for window tests: the D-Bus service SDL 2's fcitx client talks to
(src/core/linux/SDL_fcitx.c), on the session bus given by DBUS_SESSION_BUS_ADDRESS.

It owns org.freedesktop.portal.Fcitx, answers CreateInputContext on
/org/freedesktop/portal/inputmethod (org.fcitx.Fcitx.InputMethod1) with one input context, and
prints one line per call the client makes of that context (org.fcitx.Fcitx.InputContext1):
"FocusIn", "FocusOut", "Reset", "SetCapability <caps>", "SetCursorRect <x> <y> <w> <h>" (screen
coordinates), "ProcessKeyEvent <keysym> <keycode> <state> <release>" (every key is left to the
application: the answer is false), "DestroyIC". "ready" comes once the name is owned.

Commands, one a line on standard input (text is UTF-8, the rest of the line):
  preedit <cursor byte> <text>     the composition, underlined, with the input method's caret
  select <start byte> <end byte> <text>
                                   the composition with the bytes start..<end highlighted (its
                                   selection: SDL passes the highlighted segment as the selection)
  commit <text>                    commits text and clears the composition, as fcitx5 does
  quit                             ends the service
Each command is answered "done <command>" once its signals are sent.
"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

SERVICE = "org.freedesktop.portal.Fcitx"
IM_PATH = "/org/freedesktop/portal/inputmethod"
IM_INTERFACE = "org.fcitx.Fcitx.InputMethod1"
IC_INTERFACE = "org.fcitx.Fcitx.InputContext1"
IC_PATH = "/org/freedesktop/portal/inputcontext/1"

# fcitx5's text format flags (SDL reads bit 4, HighLight, as the selection).
UNDERLINE = 1 << 3
HIGHLIGHT = 1 << 4


def say(line):
    print(line, flush=True)


class InputContext(dbus.service.Object):
    @dbus.service.method(IC_INTERFACE, in_signature="", out_signature="")
    def FocusIn(self):
        say("FocusIn")

    @dbus.service.method(IC_INTERFACE, in_signature="", out_signature="")
    def FocusOut(self):
        say("FocusOut")

    @dbus.service.method(IC_INTERFACE, in_signature="", out_signature="")
    def Reset(self):
        say("Reset")

    @dbus.service.method(IC_INTERFACE, in_signature="", out_signature="")
    def DestroyIC(self):
        say("DestroyIC")

    @dbus.service.method(IC_INTERFACE, in_signature="t", out_signature="")
    def SetCapability(self, caps):
        say("SetCapability %d" % caps)

    @dbus.service.method(IC_INTERFACE, in_signature="iiii", out_signature="")
    def SetCursorRect(self, x, y, w, h):
        say("SetCursorRect %d %d %d %d" % (x, y, w, h))

    @dbus.service.method(IC_INTERFACE, in_signature="uuubu", out_signature="b")
    def ProcessKeyEvent(self, keysym, keycode, state, release, time):
        say("ProcessKeyEvent %d %d %d %d" % (keysym, keycode, state, 1 if release else 0))
        return False

    @dbus.service.signal(IC_INTERFACE, signature="s")
    def CommitString(self, text):
        pass

    @dbus.service.signal(IC_INTERFACE, signature="a(si)i")
    def UpdateFormattedPreedit(self, segments, cursor):
        pass


class InputMethod(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, IM_PATH)
        self.context = None
        self.bus = bus

    @dbus.service.method(IM_INTERFACE, in_signature="a(ss)", out_signature="oay")
    def CreateInputContext(self, arguments):
        say("CreateInputContext " + " ".join("%s=%s" % (key, value) for key, value in arguments))
        if self.context is None:
            self.context = InputContext(self.bus, IC_PATH)
        return dbus.ObjectPath(IC_PATH), dbus.ByteArray(b"\x01" * 16)


def segments(parts):
    return dbus.Array([dbus.Struct((dbus.String(text), dbus.Int32(flags)), signature="si") for text, flags in parts if text],
                      signature="(si)")


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    method = InputMethod(bus)
    name = dbus.service.BusName(SERVICE, bus, do_not_queue=True)
    loop = GLib.MainLoop()

    def command(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        line = line.rstrip("\n")
        verb, _, rest = line.partition(" ")
        context = method.context
        if verb == "quit":
            loop.quit()
            return False
        if context is None:
            say("error no input context for " + verb)
            return True
        if verb == "preedit":
            cursor, _, text = rest.partition(" ")
            context.UpdateFormattedPreedit(segments([(text, UNDERLINE)]), dbus.Int32(int(cursor)))
        elif verb == "select":
            start, end, text = rest.split(" ", 2)
            raw = text.encode("utf-8")
            start, end = int(start), int(end)
            parts = [(raw[:start].decode("utf-8"), UNDERLINE), (raw[start:end].decode("utf-8"), UNDERLINE | HIGHLIGHT),
                     (raw[end:].decode("utf-8"), UNDERLINE)]
            context.UpdateFormattedPreedit(segments(parts), dbus.Int32(start))
        elif verb == "commit":
            context.CommitString(rest)
            context.UpdateFormattedPreedit(segments([]), dbus.Int32(0))
        else:
            say("error unknown command " + verb)
            return True
        bus.flush()
        say("done " + verb)
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, command)
    say("ready")
    loop.run()
    del name


if __name__ == "__main__":
    main()
