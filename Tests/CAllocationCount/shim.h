#ifndef TESSERA_CALLOCATIONCOUNT_SHIM_H
#define TESSERA_CALLOCATIONCOUNT_SHIM_H

// What the C allocator holds in use, for tests that bound what a cache keeps alive.
#include <stddef.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

/// Bytes handed out by malloc and not yet freed, over every arena and mapped block; -1 where the
/// allocator does not say.
static inline long long tessera_allocated_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (long long)info.uordblks + (long long)info.hblkhd;
#else
    return -1;
#endif
}

#endif
