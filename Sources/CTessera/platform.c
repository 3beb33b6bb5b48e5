// Process-level services the Swift modules need without linking Foundation: which thread is the
// main one, and a turn of the main dispatch queue. The package's bundled fonts are this target's
// resources (Fonts/), copied beside every executable as `Tessera_CTessera.resources`.
#define _GNU_SOURCE
#include "tessera_platform.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <spawn.h>

static pthread_t main_thread;

__attribute__((constructor)) static void tessera_record_main_thread(void) { main_thread = pthread_self(); }

int tessera_is_main_thread(void) { return pthread_equal(pthread_self(), main_thread) != 0; }

int tessera_set_thread_name(const char *name) { return pthread_setname_np(pthread_self(), name); }

// libdispatch's hook for a run loop that serves the main queue (exported on Linux for
// CoreFoundation): drains the items queued on it, on the main thread.
extern void _dispatch_main_queue_callback_4CF(void *message);

// CoreFoundation's `CFRunLoopRunInMode` and `kCFRunLoopDefaultMode`: present only when Foundation
// is loaded. Looked up once: a library loaded later with dlopen is not the app's run loop.
typedef int (*run_in_mode_fn)(const void *mode, double seconds, unsigned char return_after_source);
static run_in_mode_fn run_in_mode;
static const void *const *default_mode;
static pthread_once_t look_up_once = PTHREAD_ONCE_INIT;

static void look_up_run_loop(void) {
    run_in_mode = (run_in_mode_fn)dlsym(RTLD_DEFAULT, "CFRunLoopRunInMode");
    default_mode = (const void *const *)dlsym(RTLD_DEFAULT, "kCFRunLoopDefaultMode");
}

int tessera_run_main_queue(int allows_run_loop) {
    if (allows_run_loop) {
        pthread_once(&look_up_once, look_up_run_loop);
        if (run_in_mode && default_mode && *default_mode) {
            // One pass, without waiting; the main queue is one of the run loop's sources.
            run_in_mode(*default_mode, 0, 1);
            return 1;
        }
    }
    _dispatch_main_queue_callback_4CF(0);
    return 0;
}

int tessera_spawn_close_from(void *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}
