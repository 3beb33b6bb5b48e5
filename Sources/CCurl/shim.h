#ifndef TESSERA_CCURL_SHIM_H
#define TESSERA_CCURL_SHIM_H

// libcurl for Tessera's image fetches (`CurlImageFetcher`). libcurl's option and information calls
// are variadic, which Swift cannot call: the wrappers below give each argument type its own
// function, so every option reaches libcurl with the type its documentation asks for.
#include <curl/curl.h>

static inline CURLcode tessera_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode tessera_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode tessera_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode tessera_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode tessera_curl_easy_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode tessera_curl_easy_setopt_blob(CURL *handle, CURLoption option, struct curl_blob *value) {
    return curl_easy_setopt(handle, option, value);
}
/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode tessera_curl_easy_setopt_write_function(CURL *handle, CURLoption option,
                                                               size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, option, function);
}
/// CURLOPT_PREREQFUNCTION: called once the connection is made, before the request is sent.
static inline CURLcode tessera_curl_easy_setopt_prereq_function(CURL *handle,
                                                                int (*function)(void *, char *, char *, int, int)) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, function);
}
static inline CURLcode tessera_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode tessera_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode tessera_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode tessera_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

#endif
