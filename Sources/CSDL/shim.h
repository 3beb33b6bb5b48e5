#ifndef TESSERA_CSDL_SHIM_H
#define TESSERA_CSDL_SHIM_H

// The three SDL libraries Tessera builds on. SDL's own headers are included as the
// pkg-config flags of `sdl2` (-I/usr/include/SDL2) expect them.
#include <SDL.h>
#include <SDL_ttf.h>
#include <SDL_image.h>

#endif
