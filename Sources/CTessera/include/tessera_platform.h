#ifndef TESSERA_PLATFORM_H
#define TESSERA_PLATFORM_H

/// The process's main thread: the one that ran the program's constructors (before `main`).
/// Returns 1 when the caller is that thread.
int tessera_is_main_thread(void);

/// Runs what was queued on the main dispatch queue, once, on the main thread. When the process has
/// a Foundation run loop (an app that links Foundation), runs one pass of it in its default mode
/// instead, so the app's own timers and run-loop sources get their turn as well. Returns 1 when the
/// run loop ran, 0 when the queue was drained directly.
int tessera_run_main_queue(int allows_run_loop);

/// Names the calling thread (at most 15 bytes on Linux). Returns pthread_setname_np's status.
int tessera_set_thread_name(const char *name);

/// Adds to a `posix_spawn_file_actions_t` (passed as a pointer) the closing of every descriptor from
/// `lowest` up in the child. Returns 0, or an error number.
int tessera_spawn_close_from(void *actions, int lowest);

#endif
