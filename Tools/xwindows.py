"""What the tools that drive a window from outside share (python3-xlib)."""

import re

from Xlib import X


def find_window(root, pattern):
    """The first viewable window under `root` whose name matches `pattern` (a regular expression, as
    `xdotool search --name`), or None."""
    expression = re.compile(pattern)
    stack = [root]
    while stack:
        window = stack.pop()
        try:
            name = window.get_wm_name()
            attributes = window.get_attributes()
        except Exception:
            continue
        if name and expression.search(name) and attributes.map_state == X.IsViewable:
            return window
        try:
            stack.extend(window.query_tree().children)
        except Exception:
            pass
    return None
