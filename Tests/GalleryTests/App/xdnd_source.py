#!/usr/bin/env python3
"""An XDND drag source, as a file manager or a browser is: drags files or text onto an X window
through the XDND protocol (the target's version, at most 5), from a window of its own, and drops
them or leaves. Says on standard output what the target answered:

    status accept=1          after each position
    finished accepted=1      after a drop
    left                     after a leave

Usage: xdnd_source.py WINDOW X,Y [X,Y ...] (--uri FILE ... | --text TEXT) [--leave] [--wait]
X,Y are screen coordinates (root window). Exits 1 when the target does not answer in 10 s.
"""
import argparse
import select
import sys
import time
import urllib.parse

from Xlib import X, Xatom, display
from Xlib.protocol import event


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("window", type=lambda s: int(s, 0))
    parser.add_argument("positions", nargs="+")
    parser.add_argument("--uri", nargs="*", default=[])
    parser.add_argument("--text")
    parser.add_argument("--leave", action="store_true")
    parser.add_argument("--wait", action="store_true", help="read a line from standard input before the drop or the leave")
    args = parser.parse_args()

    d = display.Display()
    root = d.screen().root
    atom = lambda name: d.intern_atom(name)
    aware, enter, position, status = atom("XdndAware"), atom("XdndEnter"), atom("XdndPosition"), atom("XdndStatus")
    leave, drop, finished = atom("XdndLeave"), atom("XdndDrop"), atom("XdndFinished")
    selection, copy = atom("XdndSelection"), atom("XdndActionCopy")
    if args.text is not None:
        mime, payload = atom("text/plain"), args.text.encode()
    else:
        lines = ["file://" + urllib.parse.quote(path) for path in args.uri]
        mime, payload = atom("text/uri-list"), ("\r\n".join(lines) + "\r\n").encode()

    target = d.create_resource_object("window", args.window)
    prop = target.get_full_property(aware, Xatom.ATOM)
    if prop is None or len(prop.value) == 0:
        print("not aware", flush=True)
        return 1
    version = min(5, int(prop.value[0]))
    source = root.create_window(0, 0, 1, 1, 0, 0, X.InputOnly, X.CopyFromParent)
    source.set_selection_owner(selection, X.CurrentTime)
    d.flush()

    def send(kind, data):
        message = event.ClientMessage(window=target, client_type=kind, data=(32, data + [0] * (5 - len(data))))
        target.send_event(message, event_mask=0)
        d.flush()

    def next_event(deadline):
        while True:
            if d.pending_events():
                return d.next_event()
            remaining = deadline - time.time()
            if remaining <= 0:
                return None
            select.select([d], [], [], remaining)

    def wait_for(kind):
        deadline = time.time() + 10
        while True:
            e = next_event(deadline)
            if e is None:
                return None
            if e.type == X.ClientMessage and e.client_type == kind:
                return e
            if e.type == X.SelectionRequest:
                answer(e)

    def answer(request):
        requestor = request.requestor
        prop = request.property or request.target
        requestor.change_property(prop, request.target, 8, payload)
        notify = event.SelectionNotify(time=request.time, requestor=requestor, selection=request.selection,
                                       target=request.target, property=prop)
        requestor.send_event(notify, event_mask=0)
        d.flush()

    send(enter, [source.id, version << 24, mime])
    for place in args.positions:
        x, y = (int(v) for v in place.split(","))
        send(position, [source.id, 0, (x << 16) | y, X.CurrentTime, copy])
        reply = wait_for(status)
        if reply is None:
            print("no status", flush=True)
            return 1
        print("status accept=%d" % (reply.data[1][1] & 1), flush=True)
    if args.wait:
        sys.stdin.readline()
    if args.leave:
        send(leave, [source.id])
        print("left", flush=True)
        return 0
    send(drop, [source.id, 0, X.CurrentTime])
    reply = wait_for(finished)
    if reply is None:
        print("no finish", flush=True)
        return 1
    print("finished accepted=%d" % (reply.data[1][1] & 1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
