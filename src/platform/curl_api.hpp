// The libcurl functions the HTTP client calls, behind one table so that the
// client's code is the same whether libcurl is linked (the default build) or
// loaded on first use with dlopen("libcurl.so.4") (ZEUS_CURL_DLOPEN, the
// Python wheel: its extension must load on machines without libcurl, and a
// bundled libcurl would bring OpenSSL, krb5 and GnuTLS into the wheel).
#pragma once

#include <curl/curl.h>

#include "zeus/platform/error.hpp"

namespace zeus {

struct CurlApi {
    decltype(&curl_global_init) global_init = nullptr;
    decltype(&curl_easy_init) easy_init = nullptr;
    decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&curl_easy_reset) easy_reset = nullptr;
    decltype(&curl_easy_setopt) easy_setopt = nullptr;
    decltype(&curl_easy_perform) easy_perform = nullptr;
    decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&curl_easy_strerror) easy_strerror = nullptr;
    decltype(&curl_slist_append) slist_append = nullptr;
    decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

// The table, ready to use (curl_global_init done once); with ZEUS_CURL_DLOPEN a
// LibraryNotFound error naming libcurl.so.4 and how to install it when it is
// missing. The library stays loaded for the life of the process.
[[nodiscard]] const Result<const CurlApi*>& curl_api();

}  // namespace zeus
