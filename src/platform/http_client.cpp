#include "zeus/platform/http_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <array>
#include <memory>
#include <utility>

namespace zeus {
namespace {

// Bounds what a misbehaving peer can make us buffer; every server we talk to
// answers in kilobytes.
constexpr std::size_t kMaxBody = 8U << 20U;

struct Sink {
    std::string body;
    bool overflow = false;
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t n = size * count;
    if (sink->body.size() + n > kMaxBody) {
        sink->overflow = true;
        return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    sink->body.append(data, n);
    return n;
}

void global_init_once() {
    // curl_global_init is not thread-safe on every libcurl build; once is enough.
    static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)rc;
}

struct SlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

HttpClient::HttpClient(HttpEndpoint endpoint) : endpoint_(std::move(endpoint)) {
    global_init_once();
    curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
    if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpReply> HttpClient::request(std::string_view method, const std::string& target,
                                      std::chrono::milliseconds timeout) {
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.timeout = timeout;
    return request(req);
}

Result<HttpReply> HttpClient::request(const HttpRequest& req) {
    std::lock_guard lock(mutex_);
    auto* curl = static_cast<CURL*>(curl_);
    if (curl == nullptr) {
        return Error{ErrorCode::Memory, fmt::format("could not create a libcurl handle to talk to {}", endpoint_.name),
                     "", 0};
    }
    // reset keeps the open connection and caches; only the options go.
    curl_easy_reset(curl);
    const std::string url = endpoint_.base_url + req.target;
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    Sink sink;
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    auto add_header = [&headers](const std::string& h) {
        curl_slist* grown = curl_slist_append(headers.get(), h.c_str());
        if (grown != nullptr) {
            (void)headers.release();
            headers.reset(grown);
        }
    };
    for (const auto& h : endpoint_.headers) add_header(h);
    for (const auto& h : req.headers) add_header(h);
    // An empty value removes curl's default ("application/x-www-form-urlencoded" for POST).
    add_header("Content-Type:" + (req.content_type.empty() ? std::string() : " " + req.content_type));

    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (!endpoint_.unix_socket_path.empty()) {
        curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, endpoint_.unix_socket_path.c_str());
    }
    if (endpoint_.bypass_proxy) curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts: we may run in any thread
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(endpoint_.connect_timeout.count()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer.data());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    if (req.method == "GET") {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    } else {
        if (req.method == "POST") {
            curl_easy_setopt(curl, CURLOPT_POST, 1L);
        } else {
            const std::string method(req.method);
            curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
        }
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.c_str());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    }

    const CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK) {
        if (sink.overflow) {
            return Error{ErrorCode::InvalidState,
                         fmt::format("{} answered {} {} with more than {} MiB", endpoint_.name, req.method, req.target,
                                     kMaxBody >> 20U),
                         endpoint_.unreachable_fix, 0};
        }
        const std::string detail = error_buffer[0] != '\0' ? error_buffer.data() : curl_easy_strerror(rc);
        const bool timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        return Error{timed_out ? ErrorCode::Timeout : ErrorCode::Unavailable,
                     fmt::format("could not reach {} ({} {}): {}", endpoint_.name, req.method, req.target, detail),
                     timed_out ? endpoint_.timeout_fix : endpoint_.unreachable_fix, static_cast<int>(rc)};
    }
    HttpReply reply;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
    char* content_type = nullptr;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK && content_type != nullptr) {
        reply.content_type = content_type;
    }
    reply.body = std::move(sink.body);
    return reply;
}

}  // namespace zeus
