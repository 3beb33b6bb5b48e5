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

// Adds _NET_WM_STATE_MODAL to an X11 window's _NET_WM_STATE before it is mapped (SDL 2.26's
// SDL_SetWindowModalFor sets only WM_TRANSIENT_FOR): the window manager then treats it as a modal
// dialog of the window it is transient for. Called on the thread that owns the window, through
// the libX11 SDL itself loaded (looked up, never loaded here: no X11 in the process, nothing done).
// Returns 1 when the property was set.
static inline int tessera_sdl_x11_mark_modal(SDL_Window *window) {
    struct tessera_sdl_wm_info info;
    SDL_memset(&info, 0, sizeof(info));
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != 2 || !info.info.x11.display) return 0;
    void *x11 = dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD);
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
// What an XDND message says: `kind` 1 a drag came in (XdndEnter), 2 it is at (root_x, root_y) on the
// screen (XdndPosition), 3 it left (XdndLeave), 4 it was dropped (XdndDrop); `window` is the X window
// it is for. Returns 0 for any other event.
struct tessera_xdnd_message {
    int kind;
    unsigned long window;
    int root_x;
    int root_y;
};
static inline int tessera_sdl_xdnd_message(const SDL_Event *event, struct tessera_xdnd_message *out) {
    if (event->type != SDL_SYSWMEVENT || !event->syswm.msg) return 0;
    const struct tessera_sdl_syswm_msg *msg = (const struct tessera_sdl_syswm_msg *)event->syswm.msg;
    // SDL_SYSWM_X11 is 2; ClientMessage is 33.
    if (msg->subsystem != 2 || msg->msg.client.type != 33 || msg->msg.client.format != 32 || !msg->msg.client.display) return 0;
    void *x11 = dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!x11) return 0;
    typedef unsigned long (*intern_atom)(void *, const char *, int);
    intern_atom intern = (intern_atom)dlsym(x11, "XInternAtom");
    int kind = 0;
    if (intern) {
        // Only if they exist (SDL made them when it set XdndAware): no request to the server.
        void *display = msg->msg.client.display;
        unsigned long type = msg->msg.client.message_type;
        if (type == intern(display, "XdndEnter", 1)) kind = 1;
        else if (type == intern(display, "XdndPosition", 1)) kind = 2;
        else if (type == intern(display, "XdndLeave", 1)) kind = 3;
        else if (type == intern(display, "XdndDrop", 1)) kind = 4;
    }
    dlclose(x11);
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

#endif
