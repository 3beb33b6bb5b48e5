#!/bin/sh
# Runs RealPortalSmokeTests against Debian's real xdg-desktop-portal (and its GTK backend): a session
# bus of its own (dbus-run-session), an Xvfb for the backend's dialogs, the bus's activation
# environment given DISPLAY (without it the GTK backend cannot start, and the portal exports no
# OpenURI, FileChooser or Notification), then the portal, then the test.
#
#   swift build --build-tests && Tools/portal-smoke.sh
#
# Needs xdg-desktop-portal, xdg-desktop-portal-gtk, xvfb, dbus-bin (apt). Every wait is bounded.
set -eu
if [ -z "${TESSERA_SMOKE_INSIDE:-}" ]; then
    export TESSERA_SMOKE_INSIDE=1
    exec timeout 300 dbus-run-session -- "$0" "$@"
fi
number=${SMOKE_DISPLAY:-87}
Xvfb ":$number" -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
portal=""
trap 'kill $xvfb ${portal:+$portal} 2>/dev/null || true' EXIT
export DISPLAY=":$number"
tries=0
while [ ! -e "/tmp/.X11-unix/X$number" ] && [ $tries -lt 100 ]; do tries=$((tries + 1)); sleep 0.1; done
gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
    -m org.freedesktop.DBus.UpdateActivationEnvironment "{'DISPLAY': ':$number'}" >/dev/null
/usr/libexec/xdg-desktop-portal >"${SMOKE_LOG:-/tmp/tessera-portal-smoke.log}" 2>&1 &
portal=$!
tries=0
until gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner \
        org.freedesktop.portal.Desktop 2>/dev/null | grep -q true; do
    tries=$((tries + 1))
    [ $tries -lt 100 ] || { echo "xdg-desktop-portal did not take its name" >&2; exit 1; }
    sleep 0.1
done
status=0
TESSERA_REAL_PORTAL=1 SDL_VIDEODRIVER=dummy swift test --skip-build --filter RealPortalSmokeTests >/tmp/tessera-portal-smoke-test.log 2>&1 \
    || status=$?
grep -E "real portal:|error|Executed" /tmp/tessera-portal-smoke-test.log || true
exit $status
