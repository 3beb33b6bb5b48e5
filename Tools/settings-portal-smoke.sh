#!/bin/bash
# Tessera against Debian's real settings portal: a private session bus (dbus-run-session), Xvfb (the
# GTK backend opens a display), xdg-desktop-portal with xdg-desktop-portal-gtk, and dconf behind
# gsettings. Runs SettingsPortalDesktopTests (reading at start, then following gsettings changes), and
# with IDLE=1 the gallery's idle benchmark in a window following the portal.
# Needs: apt-get install xdg-desktop-portal xdg-desktop-portal-gtk dconf-service dconf-cli
#        gsettings-desktop-schemas libglib2.0-bin xvfb dbus-bin dbus-daemon; a `swift build --build-tests`.
set -eu
if [ -z "${TESSERA_PORTAL_SESSION:-}" ]; then
    exec env TESSERA_PORTAL_SESSION=1 timeout 600 dbus-run-session -- "$0" "$@"
fi
cd "$(dirname "$0")/.."
export XDG_CURRENT_DESKTOP=GNOME
export XDG_RUNTIME_DIR=$(mktemp -d)
export HOME=$(mktemp -d)   # dconf's database: the person's settings are left alone
display=":$((300 + RANDOM % 100))"
Xvfb "$display" -screen 0 1280x1024x24 >/dev/null 2>&1 &
xvfb=$!
export DISPLAY=$display
timeout 10 bash -c "until [ -e /tmp/.X11-unix/X${display#:} ]; do sleep 0.1; done"
dbus-update-activation-environment DISPLAY XDG_CURRENT_DESKTOP XDG_RUNTIME_DIR HOME
/usr/libexec/xdg-desktop-portal >"$XDG_RUNTIME_DIR/portal.log" 2>&1 &
portal=$!
trap 'kill $portal $xvfb 2>/dev/null || true' EXIT
gdbus wait --session --timeout 10 org.freedesktop.portal.Desktop
echo "portal smoke: xdg-desktop-portal $(dpkg-query -W -f '${Version}' xdg-desktop-portal) is on the bus"
TESSERA_PORTAL_SMOKE=1 SDL_VIDEODRIVER=dummy swift test --skip-build --filter SettingsPortalDesktopTests 2>&1 \
    | grep -E "portal smoke|error|passed|failed|skipped"
if [ "${IDLE:-0}" = "1" ]; then
    gsettings set org.gnome.desktop.interface color-scheme prefer-dark
    SDL_VIDEODRIVER=x11 .build/debug/gallery --bench idle --seconds "${IDLE_SECONDS:-5}" 2>&1 | grep -vi "warning"
fi
