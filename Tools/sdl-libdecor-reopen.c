/*
 * SDL 2.26 (Debian 12's 2.26.5) with libdecor 0.1.1, on a compositor without server-side
 * decorations (weston): a window opened after the process's last window was destroyed crashes SDL
 * in its libdecor configure handler, from the next event pump. Tessera's `gallery --bench idle`
 * (one window per screen, in turn) hits it; GalleryWestonTests measures each screen in a process
 * of its own instead. With two windows open, destroying one and opening another is fine; so is
 * quitting SDL's video subsystem and starting it again between the windows (REINIT=1).
 *
 *   gcc Tools/sdl-libdecor-reopen.c -o /tmp/reopen $(sdl2-config --cflags --libs)
 *   WAYLAND_DISPLAY=... /tmp/reopen            # window 0 done, window 1 created, SIGSEGV
 *   REINIT=1 WAYLAND_DISPLAY=... /tmp/reopen   # three windows, exit 0
 */
#include <SDL2/SDL.h>
#include <stdio.h>
#include <stdlib.h>

static void one(int n) {
    SDL_Window *w = SDL_CreateWindow("reopen", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, 640, 480,
                                     SDL_WINDOW_OPENGL | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!w) { printf("create: %s\n", SDL_GetError()); exit(1); }
    printf("window %d created\n", n); fflush(stdout);
    SDL_GLContext c = SDL_GL_CreateContext(w);
    for (int i = 0; i < 60; i++) {
        SDL_Event e;
        while (SDL_WaitEventTimeout(&e, 10)) {}
        SDL_GL_MakeCurrent(w, c);
        SDL_GL_SwapWindow(w);
    }
    SDL_GL_DeleteContext(c);
    SDL_DestroyWindow(w);
    printf("window %d done\n", n); fflush(stdout);
    if (getenv("REINIT")) { SDL_QuitSubSystem(SDL_INIT_VIDEO); SDL_InitSubSystem(SDL_INIT_VIDEO); }
}

int main(void) {
    if (SDL_Init(SDL_INIT_VIDEO)) { printf("init: %s\n", SDL_GetError()); return 1; }
    printf("driver %s\n", SDL_GetCurrentVideoDriver());
    for (int n = 0; n < 3; n++) one(n);
    SDL_Quit();
    return 0;
}
