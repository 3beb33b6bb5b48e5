#ifndef TESSERA_CSDL_SHIM_H
#define TESSERA_CSDL_SHIM_H

// The three SDL libraries Tessera builds on, from the default include path: SDL's headers
// include one another with quotes, so no -I/usr/include/SDL2 is needed (see Package.swift).
#include <SDL2/SDL.h>
#include <SDL2/SDL_ttf.h>
#include <SDL2/SDL_image.h>
#include <dlfcn.h>

// The X11 id of an SDL window (0 when it is not an X11 window), what the desktop portals name a
// parent window by ("x11:<hex>"). SDL_syswm.h is not included: it brings in Xlib, whose names
// (`Cursor`, `Window`, `Display`) would collide with Swift's. Its `SDL_SysWMinfo` is restated with
// the fields read here: the version, the subsystem (SDL_SYSWM_X11 is 2) and the X11 member of the
// 64-byte union, whose layout SDL keeps for ABI stability.
struct tessera_sdl_wm_info {
    SDL_version version;
    int subsystem;
    union {
        struct { void *display; unsigned long window; } x11;
        Uint8 dummy[64];
    } info;
};
extern SDL_bool SDLCALL SDL_GetWindowWMInfo(SDL_Window *window, struct tessera_sdl_wm_info *info);
static inline unsigned long tessera_sdl_x11_window_id(SDL_Window *window) {
    struct tessera_sdl_wm_info info;
    SDL_memset(&info, 0, sizeof(info));
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != 2) return 0;
    return info.info.x11.window;
}

// The libX11 SDL itself loaded (a handle to dlclose), with `window`'s X11 display and window in
// `info`; NULL when the window is not on X11 or no libX11 is in the process (none is loaded here).
static inline void *tessera_sdl_x11_library(SDL_Window *window, struct tessera_sdl_wm_info *info) {
    SDL_memset(info, 0, sizeof(*info));
    SDL_VERSION(&info->version);
    if (!SDL_GetWindowWMInfo(window, info) || info->subsystem != 2 || !info->info.x11.display) return NULL;
    return dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD);
}

// Adds _NET_WM_STATE_MODAL to an X11 window's _NET_WM_STATE before it is mapped (SDL 2.26's
// SDL_SetWindowModalFor sets only WM_TRANSIENT_FOR): the window manager then treats it as a modal
// dialog of the window it is transient for. Called on the thread that owns the window, through
// the libX11 SDL itself loaded (looked up, never loaded here: no X11 in the process, nothing done).
// Returns 1 when the property was set.
static inline int tessera_sdl_x11_mark_modal(SDL_Window *window) {
    struct tessera_sdl_wm_info info;
    void *x11 = tessera_sdl_x11_library(window, &info);
    if (!x11) return 0;
    typedef unsigned long (*intern_atom)(void *, const char *, int);
    typedef int (*change_property)(void *, unsigned long, unsigned long, unsigned long, int, int,
                                   const unsigned char *, int);
    typedef int (*flush)(void *);
    intern_atom intern = (intern_atom)dlsym(x11, "XInternAtom");
    change_property change = (change_property)dlsym(x11, "XChangeProperty");
    flush flush_display = (flush)dlsym(x11, "XFlush");
    int done = 0;
    if (intern && change && flush_display) {
        unsigned long state = intern(info.info.x11.display, "_NET_WM_STATE", 0);
        unsigned long modal = intern(info.info.x11.display, "_NET_WM_STATE_MODAL", 0);
        // XA_ATOM is 4; format 32 data is an array of longs; PropModeAppend is 2.
        if (state && modal) {
            change(info.info.x11.display, info.info.x11.window, state, 4, 32, 2, (const unsigned char *)&modal, 1);
            flush_display(info.info.x11.display);
            done = 1;
        }
    }
    dlclose(x11);
    return done;
}

// A drag from another X client over a window (XDND), which SDL 2 answers but does not report
// until the drop: its client messages, seen through SDL's window-system events. The layouts restate
// SDL_SysWMmsg's X11 member (an XEvent) as far as an XClientMessageEvent goes, for the reason given
// above (Xlib's names).
struct tessera_x11_client_message {
    int type;
    unsigned long serial;
    int send_event;
    void *display;
    unsigned long window;
    unsigned long message_type;
    int format;
    long data[5];
};
struct tessera_sdl_syswm_msg {
    SDL_version version;
    int subsystem;
    union {
        struct tessera_x11_client_message client;
        long pad[24];
    } msg;
};
// The four XDND message types on `window`'s X display (XdndEnter, XdndPosition, XdndLeave,
// XdndDrop), looked up once where a window is made, so that reading a message asks nothing of Xlib
// (no lock, no round trip, no library lookup inside SDL's event dispatch). Made when missing: SDL
// makes no XdndLeave, which exists only once a drag source has asked for it. Returns 0 when the
// window is not on X11.
static inline int tessera_sdl_xdnd_atoms(SDL_Window *window, unsigned long out[4]) {
    struct tessera_sdl_wm_info info;
    void *x11 = tessera_sdl_x11_library(window, &info);
    if (!x11) return 0;
    typedef unsigned long (*intern_atom)(void *, const char *, int);
    intern_atom intern = (intern_atom)dlsym(x11, "XInternAtom");
    int done = 0;
    if (intern) {
        const char *names[4] = { "XdndEnter", "XdndPosition", "XdndLeave", "XdndDrop" };
        for (int i = 0; i < 4; i++) out[i] = intern(info.info.x11.display, names[i], 0);
        done = 1;
    }
    dlclose(x11);
    return done;
}

// What an XDND message says: `kind` 1 a drag came in (XdndEnter), 2 it is at (root_x, root_y) on the
// screen (XdndPosition), 3 it left (XdndLeave), 4 it was dropped (XdndDrop); `window` is the X window
// it is for. `atoms` are the four message types (tessera_sdl_xdnd_atoms). Returns 0 for any other
// event. Reads the event alone: safe inside SDL's event filter.
struct tessera_xdnd_message {
    int kind;
    unsigned long window;
    int root_x;
    int root_y;
};
static inline int tessera_sdl_xdnd_message(const SDL_Event *event, const unsigned long atoms[4],
                                           struct tessera_xdnd_message *out) {
    if (event->type != SDL_SYSWMEVENT || !event->syswm.msg) return 0;
    const struct tessera_sdl_syswm_msg *msg = (const struct tessera_sdl_syswm_msg *)event->syswm.msg;
    // SDL_SYSWM_X11 is 2; ClientMessage is 33.
    if (msg->subsystem != 2 || msg->msg.client.type != 33 || msg->msg.client.format != 32) return 0;
    unsigned long type = msg->msg.client.message_type;
    int kind = 0;
    for (int i = 0; i < 4 && kind == 0; i++) {
        if (atoms[i] != 0 && type == atoms[i]) kind = i + 1;
    }
    out->kind = kind;
    out->window = msg->msg.client.window;
    long position = msg->msg.client.data[2];
    out->root_x = (int)((position >> 16) & 0xFFFF);
    out->root_y = (int)(position & 0xFFFF);
    return kind != 0;
}

// The X server's resource database as `xrdb` loaded it (the root window's RESOURCE_MANAGER
// property, where a desktop puts `Xft.dpi`), copied with SDL_strdup (the caller SDL_frees it), or
// NULL when there is none or no X11 in the process. Read through the libX11 SDL itself loaded (never
// loaded here) over a connection of its own, opened and closed for the read.
static inline char *tessera_x11_resource_database(void) {
    void *x11 = dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!x11) return NULL;
    typedef void *(*open_display)(const char *);
    typedef char *(*resource_manager_string)(void *);
    typedef int (*close_display)(void *);
    open_display open = (open_display)dlsym(x11, "XOpenDisplay");
    resource_manager_string resources = (resource_manager_string)dlsym(x11, "XResourceManagerString");
    close_display close = (close_display)dlsym(x11, "XCloseDisplay");
    char *copy = NULL;
    if (open && resources && close) {
        void *display = open(NULL);
        if (display) {
            const char *database = resources(display);
            if (database) copy = SDL_strdup(database);
            close(display);
        }
    }
    dlclose(x11);
    return copy;
}

// How many wl_seat globals the Wayland compositor at `display_name` (NULL: $WAYLAND_DISPLAY)
// advertises: -2 when libwayland-client cannot be loaded, -1 when no compositor answers, else the
// count; `capabilities` (when not NULL) gets the union of the seats' capabilities (1: a pointer,
// 2: a keyboard, 4: touch). SDL 2.26's Wayland driver dereferences the seat's input state while it
// starts, so on a compositor with no seat (weston's headless backend) it crashes in SDL_VideoInit:
// the window asks here first. libwayland-client is loaded the way SDL loads it (dlopen), so a build
// without Wayland headers still runs; two round trips read the registry and the seats' capabilities.
struct tessera_wl_listener { void (*calls[2])(void); };
struct tessera_wl_probe { int seats; uint32_t capabilities; void *bound[8]; int bound_count; void *registry;
                          void *(*bind)(void *, uint32_t, const void *, uint32_t, ...); const void *seat_interface;
                          int (*add_listener)(void *, void (**)(void), void *); };
static inline void tessera_wl_seat_capabilities(void *data, void *seat, uint32_t capabilities) {
    (void)seat;
    ((struct tessera_wl_probe *)data)->capabilities |= capabilities;
}
static inline void tessera_wl_seat_name(void *data, void *seat, const char *name) {
    (void)data; (void)seat; (void)name;
}
static inline void tessera_wl_registry_global(void *data, void *registry, uint32_t name,
                                              const char *interface, uint32_t version) {
    (void)registry; (void)version;
    struct tessera_wl_probe *probe = (struct tessera_wl_probe *)data;
    if (!interface || SDL_strcmp(interface, "wl_seat") != 0) return;
    probe->seats += 1;
    if (probe->bound_count >= 8) return;
    // wl_registry_bind (request 0) of wl_seat at version 1: its capabilities event is all that is read.
    void *seat = probe->bind(probe->registry, 0, probe->seat_interface, 1, name, "wl_seat", 1u, NULL);
    if (!seat) return;
    static const struct tessera_wl_listener seat_listener = {
        { (void (*)(void))tessera_wl_seat_capabilities, (void (*)(void))tessera_wl_seat_name }
    };
    probe->add_listener(seat, (void (**)(void))&seat_listener, probe);
    probe->bound[probe->bound_count++] = seat;
}
static inline void tessera_wl_registry_global_remove(void *data, void *registry, uint32_t name) {
    (void)data; (void)registry; (void)name;
}
static inline int tessera_wayland_seats(const char *display_name, uint32_t *capabilities) {
    if (capabilities) *capabilities = 0;
    void *wayland = dlopen("libwayland-client.so.0", RTLD_LAZY | RTLD_LOCAL);
    if (!wayland) return -2;
    typedef void *(*connect_fn)(const char *);
    typedef void (*disconnect_fn)(void *);
    typedef int (*roundtrip_fn)(void *);
    typedef void *(*marshal_constructor_fn)(void *, uint32_t, const void *, ...);
    typedef void *(*marshal_versioned_fn)(void *, uint32_t, const void *, uint32_t, ...);
    typedef int (*add_listener_fn)(void *, void (**)(void), void *);
    typedef void (*destroy_fn)(void *);
    connect_fn connect_display = (connect_fn)dlsym(wayland, "wl_display_connect");
    disconnect_fn disconnect_display = (disconnect_fn)dlsym(wayland, "wl_display_disconnect");
    roundtrip_fn roundtrip = (roundtrip_fn)dlsym(wayland, "wl_display_roundtrip");
    marshal_constructor_fn marshal = (marshal_constructor_fn)dlsym(wayland, "wl_proxy_marshal_constructor");
    marshal_versioned_fn bind = (marshal_versioned_fn)dlsym(wayland, "wl_proxy_marshal_constructor_versioned");
    add_listener_fn add_listener = (add_listener_fn)dlsym(wayland, "wl_proxy_add_listener");
    destroy_fn destroy = (destroy_fn)dlsym(wayland, "wl_proxy_destroy");
    const void *registry_interface = dlsym(wayland, "wl_registry_interface");
    const void *seat_interface = dlsym(wayland, "wl_seat_interface");
    if (!connect_display || !disconnect_display || !roundtrip || !marshal || !bind || !add_listener || !destroy
        || !registry_interface || !seat_interface) return -2;
    void *display = connect_display(display_name);
    if (!display) return -1;
    // wl_display_get_registry: request 1 of wl_display, a new wl_registry.
    void *registry = marshal(display, 1, registry_interface, NULL);
    int seats = -1;
    if (registry) {
        static const struct tessera_wl_listener registry_listener = {
            { (void (*)(void))tessera_wl_registry_global, (void (*)(void))tessera_wl_registry_global_remove }
        };
        struct tessera_wl_probe probe;
        SDL_memset(&probe, 0, sizeof(probe));
        probe.registry = registry;
        probe.bind = bind;
        probe.seat_interface = seat_interface;
        probe.add_listener = add_listener;
        add_listener(registry, (void (**)(void))&registry_listener, &probe);
        // The first round trip lists the globals (binding the seats), the second brings their capabilities.
        if (roundtrip(display) >= 0 && roundtrip(display) >= 0) {
            seats = probe.seats;
            if (capabilities) *capabilities = probe.capabilities;
        }
        for (int i = 0; i < probe.bound_count; i++) destroy(probe.bound[i]);
        destroy(registry);
    }
    disconnect_display(display);
    return seats;
}

// The C library's allocator (glibc): what it holds free, and giving free pages back to the system.

#include <malloc.h>

/// Bytes of free chunks the allocator keeps in its arenas (mallinfo2's fordblks): memory the process
/// holds that nothing uses, resident at most this much.
static inline size_t tessera_malloc_free_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
}

/// Both figures from one walk of the arenas: the bytes the allocator has handed out and not had back
/// (in its arenas, uordblks, and mapped on their own, hblkhd: written by whoever asked for them, so
/// resident) and its free chunks' bytes (fordblks).
static inline void tessera_malloc_statistics(size_t *in_use, size_t *free_bytes) {
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks + info.hblkhd;
    *free_bytes = info.fordblks;
}

/// Gives every arena's free pages back to the system (malloc_trim); 1 when some memory was released.
static inline int tessera_malloc_trim(void) {
    return malloc_trim(0);
}

#endif
