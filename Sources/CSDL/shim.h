#ifndef TESSERA_CSDL_SHIM_H
#define TESSERA_CSDL_SHIM_H

// The three SDL libraries Tessera builds on, from the default include path: SDL's headers
// include one another with quotes, so no -I/usr/include/SDL2 is needed (see Package.swift).
#include <SDL2/SDL.h>
#include <SDL2/SDL_ttf.h>
#include <SDL2/SDL_image.h>

#endif
