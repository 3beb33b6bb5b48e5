#ifndef TESSERA_CSDL_SHIM_H
#define TESSERA_CSDL_SHIM_H

// The three SDL libraries Tessera builds on, from the default include path: SDL's headers
// include one another with quotes, so no -I/usr/include/SDL2 is needed (see Package.swift).
#include <SDL2/SDL.h>
#include <SDL2/SDL_ttf.h>
#include <SDL2/SDL_image.h>

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

#endif
