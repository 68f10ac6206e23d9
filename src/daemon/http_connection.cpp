#include "daemon/http_connection.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <array>
#include <memory>

namespace zeus::daemon {
namespace {

// Bounds what a misbehaving peer can make us buffer; zeusd's answers are a
// few hundred bytes per device.
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

HttpConnection::HttpConnection(const ZeusdConfig& config)
    : endpoint_(config.endpoint()), environment_(config.as_environment()), connect_timeout_(config.connect_timeout) {
    global_init_once();
    curl_ = curl_easy_init();
    if (config.transport == ZeusdConfig::Transport::UnixSocket) {
        // The host part is ignored on a Unix socket; the original client uses localhost too.
        base_url_ = "http://localhost";
        socket_path_ = config.socket_path;
    } else {
        base_url_ = "http://" + endpoint_;
    }
    if (config.token) authorization_ = "Authorization: Bearer " + *config.token;
}

HttpConnection::~HttpConnection() {
    if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpReply> HttpConnection::request(std::string_view method, const std::string& target,
                                          std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex_);
    auto* curl = static_cast<CURL*>(curl_);
    if (curl == nullptr) {
        return Error{ErrorCode::Memory, "could not create a libcurl handle to talk to zeusd", "", 0};
    }
    // reset keeps the open connection and caches; only the options go.
    curl_easy_reset(curl);
    const std::string url = base_url_ + target;
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
    if (!authorization_.empty()) add_header(authorization_);
    add_header("Accept: application/json");
    // zeusd takes every parameter in the query; POST bodies are empty, so no content type.
    add_header("Content-Type:");

    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (!socket_path_.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path_.c_str());
    // The daemon is local (or on the cluster network): an http_proxy meant
    // for the internet must not intercept it.
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts: we may run in any thread
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_.count()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer.data());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    if (method == "POST") {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
    } else {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }

    const CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK) {
        if (sink.overflow) {
            return Error{ErrorCode::InvalidState,
                         fmt::format("zeusd at {} answered {} {} with more than {} MiB", endpoint_, method,
                                     target, kMaxBody >> 20U),
                         fmt::format("check that {} points at zeusd", environment_), 0};
        }
        const std::string detail = error_buffer[0] != '\0' ? error_buffer.data() : curl_easy_strerror(rc);
        const bool timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        return Error{timed_out ? ErrorCode::Timeout : ErrorCode::Unavailable,
                     fmt::format("could not reach zeusd at {} ({} {}): {}", endpoint_, method, target, detail),
                     timed_out ? "the daemon did not answer in time; check that it is healthy (its log, "
                                 "`systemctl status zeusd`)"
                               : fmt::format("start zeusd (`zeusd serve`, or `systemctl start zeusd`) or point {} "
                                             "at the running daemon; unset it to use the devices directly",
                                             environment_.substr(0, environment_.find('='))),
                     static_cast<int>(rc)};
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

}  // namespace zeus::daemon
