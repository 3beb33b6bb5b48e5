#include "tessera_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The functions used, found once in the library loaded; written by `load` under pthread_once and only
// read after it (pthread_once orders the writes before every later return from it).
static struct {
    CURLcode (*global_init)(long);
    curl_version_info_data *(*version_info)(CURLversion);
    const char *(*easy_strerror)(CURLcode);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMcode (*multi_timeout)(CURLM *, long *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} api;

static int loaded = 0;
static char failure[512] = "libcurl was not loaded";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // The soname of libcurl 7.16 and later (Debian's libcurl4); RTLD_LOCAL keeps its symbols to itself.
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *error = dlerror();
        snprintf(failure, sizeof(failure), "libcurl (libcurl.so.4) could not be loaded: %s", error ? error : "no reason given");
        return;
    }
#define FIND(field, name)                                                                               \
    do {                                                                                                \
        *(void **)&api.field = dlsym(library, name);                                                    \
        if (!api.field) {                                                                               \
            snprintf(failure, sizeof(failure), "libcurl.so.4 has no %s (libcurl 7.84 or later is needed)", name); \
            return;                                                                                     \
        }                                                                                               \
    } while (0)
    FIND(global_init, "curl_global_init");
    FIND(version_info, "curl_version_info");
    FIND(easy_strerror, "curl_easy_strerror");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(multi_init, "curl_multi_init");
    FIND(multi_cleanup, "curl_multi_cleanup");
    FIND(multi_setopt, "curl_multi_setopt");
    FIND(multi_add_handle, "curl_multi_add_handle");
    FIND(multi_remove_handle, "curl_multi_remove_handle");
    FIND(multi_perform, "curl_multi_perform");
    FIND(multi_poll, "curl_multi_poll");
    FIND(multi_wakeup, "curl_multi_wakeup");
    FIND(multi_timeout, "curl_multi_timeout");
    FIND(multi_info_read, "curl_multi_info_read");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
#undef FIND
    loaded = 1;
}

int tessera_curl_load(const char **reason) {
    pthread_once(&once, load);
    if (!loaded && reason) *reason = failure;
    return loaded;
}

CURLcode tessera_curl_global_init(long flags) { return api.global_init(flags); }
curl_version_info_data *tessera_curl_version_info(CURLversion version) { return api.version_info(version); }
const char *tessera_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }

CURL *tessera_curl_easy_init(void) { return api.easy_init(); }
void tessera_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
CURLcode tessera_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return api.easy_setopt(handle, option, value);
}
CURLcode tessera_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return api.easy_setopt(handle, option, value);
}
CURLcode tessera_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return api.easy_setopt(handle, option, value);
}
CURLcode tessera_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return api.easy_setopt(handle, option, value);
}
CURLcode tessera_curl_easy_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return api.easy_setopt(handle, option, value);
}
CURLcode tessera_curl_easy_setopt_blob(CURL *handle, CURLoption option, struct curl_blob *value) {
    return api.easy_setopt(handle, option, value);
}
CURLcode tessera_curl_easy_setopt_write_function(CURL *handle, CURLoption option,
                                                 size_t (*function)(char *, size_t, size_t, void *)) {
    return api.easy_setopt(handle, option, function);
}
CURLcode tessera_curl_easy_setopt_prereq_function(CURL *handle, int (*function)(void *, char *, char *, int, int)) {
    return api.easy_setopt(handle, CURLOPT_PREREQFUNCTION, function);
}
CURLcode tessera_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return api.easy_getinfo(handle, info, value);
}
CURLcode tessera_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return api.easy_getinfo(handle, info, value);
}
CURLcode tessera_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return api.easy_getinfo(handle, info, value);
}

CURLM *tessera_curl_multi_init(void) { return api.multi_init(); }
CURLMcode tessera_curl_multi_cleanup(CURLM *multi) { return api.multi_cleanup(multi); }
CURLMcode tessera_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return api.multi_setopt(multi, option, value);
}
CURLMcode tessera_curl_multi_add_handle(CURLM *multi, CURL *handle) { return api.multi_add_handle(multi, handle); }
CURLMcode tessera_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return api.multi_remove_handle(multi, handle); }
CURLMcode tessera_curl_multi_perform(CURLM *multi, int *running) { return api.multi_perform(multi, running); }
CURLMcode tessera_curl_multi_poll(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready) {
    return api.multi_poll(multi, extra, count, timeout, ready);
}
CURLMcode tessera_curl_multi_wakeup(CURLM *multi) { return api.multi_wakeup(multi); }
CURLMcode tessera_curl_multi_timeout(CURLM *multi, long *milliseconds) { return api.multi_timeout(multi, milliseconds); }
CURLMsg *tessera_curl_multi_info_read(CURLM *multi, int *queued) { return api.multi_info_read(multi, queued); }

struct curl_slist *tessera_curl_slist_append(struct curl_slist *list, const char *text) {
    return api.slist_append(list, text);
}
void tessera_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }
