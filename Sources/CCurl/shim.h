#ifndef EMOJIART_CCURL_SHIM_H
#define EMOJIART_CCURL_SHIM_H
#include <curl/curl.h>

/* Swift cannot call C variadic functions, so each curl_easy_setopt / curl_easy_getinfo /
 * curl_multi_setopt argument type gets a typed, non-variadic wrapper. */

typedef size_t (*emojiart_curl_write_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*emojiart_curl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                                               curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode emojiart_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode emojiart_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode emojiart_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode emojiart_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode emojiart_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode emojiart_curl_easy_setopt_write_function(CURL *handle, emojiart_curl_write_callback value) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, value);
}
static inline CURLcode emojiart_curl_easy_setopt_header_function(CURL *handle, emojiart_curl_write_callback value) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, value);
}
static inline CURLcode emojiart_curl_easy_setopt_xferinfo_function(CURL *handle, emojiart_curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode emojiart_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode emojiart_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode emojiart_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode emojiart_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode emojiart_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

/* Macros Swift does not import (an expression, or a value it may not type as size_t). */
static inline size_t emojiart_curl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline int emojiart_curlpause_cont(void) { return CURLPAUSE_CONT; }

#endif
