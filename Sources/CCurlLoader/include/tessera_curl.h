#ifndef TESSERA_CURL_LOADER_H
#define TESSERA_CURL_LOADER_H

// libcurl, loaded on first use (dlopen of libcurl.so.4) instead of linked: an app that never fetches
// by URL maps none of it. `tessera_curl_load` loads it once per process (any thread; later calls
// return at once) and says why when it cannot; every other function here may be called only after it
// returned 1. libcurl's option and information calls are variadic, which Swift cannot call: the
// setopt and getinfo wrappers give each argument type its own function, so every option reaches
// libcurl with the type its documentation asks for.
#include <curl/curl.h>

/// 1 when libcurl is loaded and every function used was found; 0 with `*reason` (when not NULL) set
/// to a static text saying why not.
int tessera_curl_load(const char **reason);

CURLcode tessera_curl_global_init(long flags);
curl_version_info_data *tessera_curl_version_info(CURLversion version);
const char *tessera_curl_easy_strerror(CURLcode code);

CURL *tessera_curl_easy_init(void);
void tessera_curl_easy_cleanup(CURL *handle);
CURLcode tessera_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode tessera_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode tessera_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode tessera_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode tessera_curl_easy_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode tessera_curl_easy_setopt_blob(CURL *handle, CURLoption option, struct curl_blob *value);
/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
CURLcode tessera_curl_easy_setopt_write_function(CURL *handle, CURLoption option,
                                                 size_t (*function)(char *, size_t, size_t, void *));
/// CURLOPT_PREREQFUNCTION: called once the connection is made, before the request is sent.
CURLcode tessera_curl_easy_setopt_prereq_function(CURL *handle, int (*function)(void *, char *, char *, int, int));
CURLcode tessera_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode tessera_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode tessera_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

CURLM *tessera_curl_multi_init(void);
CURLMcode tessera_curl_multi_cleanup(CURLM *multi);
CURLMcode tessera_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode tessera_curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode tessera_curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode tessera_curl_multi_perform(CURLM *multi, int *running);
CURLMcode tessera_curl_multi_poll(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready);
CURLMcode tessera_curl_multi_wakeup(CURLM *multi);
CURLMcode tessera_curl_multi_timeout(CURLM *multi, long *milliseconds);
CURLMsg *tessera_curl_multi_info_read(CURLM *multi, int *queued);

struct curl_slist *tessera_curl_slist_append(struct curl_slist *list, const char *text);
void tessera_curl_slist_free_all(struct curl_slist *list);

#endif
