/*
 * A scripted input method for Tessera's Wayland window tests: a client of the compositor (sway)
 * speaking input-method-unstable-v2 on its seat, driven by lines on standard input, saying what
 * it is told on standard output (one line each, flushed):
 *
 *   keyboard                   makes a virtual keyboard on the seat (the default XKB keymap), for
 *                              a seat with no keyboard of its own (headless sway)
 *   key CODE                   presses and releases the evdev key CODE on it (15: Tab)
 *   preedit BEGIN END TEXT     sets the composition TEXT, its cursor at bytes BEGIN..END, and commits
 *   commit TEXT                commits TEXT (the composition goes)
 *   compose TEXT PREEDIT       commits TEXT and sets the composition PREEDIT (its cursor at its end)
 *                              in one commit, as an input method does that commits a segment and
 *                              composes on
 *   quit                       ends
 *
 * Run as `wayland_ime keyboard-only` it is no input method, only the virtual keyboard (keys for a
 * real input method, which takes the seat's keyboard).
 *
 * It says "ready" once bound, "activate", "deactivate", "surrounding ..." and "content_type ..." as
 * the compositor relays them, "done N" after each done event (N: the serial it commits with),
 * "rectangle X Y W H" when its popup surface is given the text input's cursor rectangle, and
 * "unavailable" when another input method has the seat.
 *
 * Built at test time: wayland-scanner makes the protocols' code beside it, then
 *   cc wayland_ime.c input-method-unstable-v2-protocol.c virtual-keyboard-unstable-v1-protocol.c
 *      -lwayland-client -lxkbcommon
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

#include "input-method-unstable-v2-client-protocol.h"
#include "virtual-keyboard-unstable-v1-client-protocol.h"

static struct wl_seat *seat;
static struct wl_compositor *compositor;
static struct zwp_input_method_manager_v2 *im_manager;
static struct zwp_virtual_keyboard_manager_v1 *keyboard_manager;
static struct zwp_input_method_v2 *im;
static struct zwp_virtual_keyboard_v1 *keyboard;
static uint32_t done_count;
static uint32_t key_time = 1;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vprintf(format, arguments);
    va_end(arguments);
    putchar('\n');
    fflush(stdout);
}

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    (void)data; (void)version;
    if (strcmp(interface, wl_seat_interface.name) == 0 && !seat) {
        seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
    } else if (strcmp(interface, wl_compositor_interface.name) == 0) {
        compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 1);
    } else if (strcmp(interface, zwp_input_method_manager_v2_interface.name) == 0) {
        im_manager = wl_registry_bind(registry, name, &zwp_input_method_manager_v2_interface, 1);
    } else if (strcmp(interface, zwp_virtual_keyboard_manager_v1_interface.name) == 0) {
        keyboard_manager = wl_registry_bind(registry, name, &zwp_virtual_keyboard_manager_v1_interface, 1);
    }
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {
    (void)data; (void)registry; (void)name;
}

static const struct wl_registry_listener registry_listener = { global, global_remove };

static void activate(void *data, struct zwp_input_method_v2 *method) { (void)data; (void)method; say("activate"); }
static void deactivate(void *data, struct zwp_input_method_v2 *method) { (void)data; (void)method; say("deactivate"); }

static void surrounding_text(void *data, struct zwp_input_method_v2 *method, const char *text, uint32_t cursor, uint32_t anchor) {
    (void)data; (void)method;
    say("surrounding %u %u %s", cursor, anchor, text ? text : "");
}

static void text_change_cause(void *data, struct zwp_input_method_v2 *method, uint32_t cause) {
    (void)data; (void)method;
    say("change_cause %u", cause);
}

static void content_type(void *data, struct zwp_input_method_v2 *method, uint32_t hint, uint32_t purpose) {
    (void)data; (void)method;
    say("content_type %u %u", hint, purpose);
}

static void done(void *data, struct zwp_input_method_v2 *method) {
    (void)data; (void)method;
    done_count++;
    say("done %u", done_count);
}

static void unavailable(void *data, struct zwp_input_method_v2 *method) {
    (void)data; (void)method;
    say("unavailable");
}

static const struct zwp_input_method_v2_listener im_listener = {
    activate, deactivate, surrounding_text, text_change_cause, content_type, done, unavailable,
};

static void text_input_rectangle(void *data, struct zwp_input_popup_surface_v2 *popup,
                                 int32_t x, int32_t y, int32_t width, int32_t height) {
    (void)data; (void)popup;
    say("rectangle %d %d %d %d", x, y, width, height);
}

static const struct zwp_input_popup_surface_v2_listener popup_listener = { text_input_rectangle };

/* A virtual keyboard with the default XKB keymap (as a file the compositor maps). */
static int make_keyboard(void) {
    if (keyboard) return 0;
    if (!seat || !keyboard_manager) { say("error no virtual keyboard manager"); return -1; }
    struct xkb_context *context = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
    struct xkb_keymap *keymap = context ? xkb_keymap_new_from_names(context, NULL, XKB_KEYMAP_COMPILE_NO_FLAGS) : NULL;
    char *text = keymap ? xkb_keymap_get_as_string(keymap, XKB_KEYMAP_FORMAT_TEXT_V1) : NULL;
    if (!text) { say("error no keymap"); return -1; }
    size_t size = strlen(text) + 1;
    int fd = memfd_create("tessera-keymap", MFD_CLOEXEC);
    if (fd < 0 || write(fd, text, size) != (ssize_t)size) { say("error keymap file: %s", strerror(errno)); return -1; }
    keyboard = zwp_virtual_keyboard_manager_v1_create_virtual_keyboard(keyboard_manager, seat);
    zwp_virtual_keyboard_v1_keymap(keyboard, WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1, fd, (uint32_t)size);
    close(fd);
    free(text);
    xkb_keymap_unref(keymap);
    xkb_context_unref(context);
    return 0;
}

/* One line of standard input; returns 0 to go on, 1 to end. */
static int command(char *line) {
    size_t length = strlen(line);
    if (length && line[length - 1] == '\n') line[--length] = '\0';
    if (strcmp(line, "quit") == 0) return 1;
    if (strcmp(line, "keyboard") == 0) {
        if (make_keyboard() == 0) say("keyboard");
    } else if (strncmp(line, "key ", 4) == 0) {
        if (make_keyboard() != 0) return 0;
        uint32_t code = (uint32_t)strtoul(line + 4, NULL, 10);
        zwp_virtual_keyboard_v1_key(keyboard, key_time++, code, WL_KEYBOARD_KEY_STATE_PRESSED);
        zwp_virtual_keyboard_v1_key(keyboard, key_time++, code, WL_KEYBOARD_KEY_STATE_RELEASED);
        say("key %u", code);
    } else if (!im) {
        say("error no input method: %s", line);
    } else if (strncmp(line, "preedit ", 8) == 0) {
        char *end;
        long begin = strtol(line + 8, &end, 10);
        long stop = strtol(end, &end, 10);
        if (*end == ' ') end++;
        zwp_input_method_v2_set_preedit_string(im, end, (int32_t)begin, (int32_t)stop);
        zwp_input_method_v2_commit(im, done_count);
        say("preedit %zu bytes", strlen(end));
    } else if (strncmp(line, "compose ", 8) == 0) {
        char *preedit = strchr(line + 8, ' ');
        if (!preedit) { say("error compose needs TEXT PREEDIT"); return 0; }
        *preedit++ = '\0';
        zwp_input_method_v2_commit_string(im, line + 8);
        zwp_input_method_v2_set_preedit_string(im, preedit, (int32_t)strlen(preedit), (int32_t)strlen(preedit));
        zwp_input_method_v2_commit(im, done_count);
        say("compose %zu bytes and %zu bytes", strlen(line + 8), strlen(preedit));
    } else if (strncmp(line, "commit ", 7) == 0) {
        zwp_input_method_v2_commit_string(im, line + 7);
        zwp_input_method_v2_commit(im, done_count);
        say("commit %zu bytes", strlen(line + 7));
    } else {
        say("error unknown command: %s", line);
    }
    return 0;
}

/* Answers the compositor and standard input's commands until "quit", the end of standard input or
 * of the connection; the exit status. */
static int run(struct wl_display *display) {
    /* Unbuffered: each poll of standard input reads one line, the rest left to the next poll. */
    setvbuf(stdin, NULL, _IONBF, 0);
    char line[4096];
    struct pollfd fds[2] = { { wl_display_get_fd(display), POLLIN, 0 }, { STDIN_FILENO, POLLIN, 0 } };
    for (;;) {
        while (wl_display_prepare_read(display) != 0) wl_display_dispatch_pending(display);
        if (wl_display_flush(display) < 0 && errno != EAGAIN) { wl_display_cancel_read(display); break; }
        if (poll(fds, 2, -1) < 0) {
            wl_display_cancel_read(display);
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents & POLLIN) {
            if (wl_display_read_events(display) < 0) break;
        } else {
            wl_display_cancel_read(display);
        }
        if (fds[0].revents & (POLLERR | POLLHUP)) break;
        wl_display_dispatch_pending(display);
        if (fds[1].revents & (POLLIN | POLLHUP)) {
            if (!fgets(line, sizeof line, stdin) || command(line)) break;
        }
    }
    int error = wl_display_get_error(display);
    if (error) say("error the connection ended: %s", strerror(error));
    wl_display_disconnect(display);
    return error ? 1 : 0;
}

int main(int argc, char **argv) {
    int keyboard_only = argc > 1 && strcmp(argv[1], "keyboard-only") == 0;
    struct wl_display *display = wl_display_connect(NULL);
    if (!display) { say("error no Wayland display"); return 1; }
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (keyboard_only) {
        if (make_keyboard() != 0) return 1;
        wl_display_roundtrip(display);
        say("ready");
        return run(display);
    }
    if (!seat || !compositor || !im_manager) {
        say("error the compositor lacks %s", !seat ? "a seat" : !compositor ? "wl_compositor" : "zwp_input_method_manager_v2");
        return 1;
    }
    im = zwp_input_method_manager_v2_get_input_method(im_manager, seat);
    zwp_input_method_v2_add_listener(im, &im_listener, NULL);
    /* A candidate window: the compositor tells it where the text input's cursor is. */
    struct wl_surface *surface = wl_compositor_create_surface(compositor);
    struct zwp_input_popup_surface_v2 *popup = zwp_input_method_v2_get_input_popup_surface(im, surface);
    zwp_input_popup_surface_v2_add_listener(popup, &popup_listener, NULL);
    wl_display_roundtrip(display);
    say("ready%s", keyboard_manager ? "" : " (no virtual keyboard manager)");
    return run(display);
}
