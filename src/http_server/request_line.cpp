#include "http_server/request_line.hpp"

#include <algorithm>
#include <string_view>

#include <boost/beast/core/string.hpp>
#include <fmt/format.h>

namespace zeus::http_server {
namespace {

// The request line at the start of `bytes`, without its CRLF; empty when
// its end has not arrived.
std::string_view request_line(std::span<const char> bytes) {
    const std::string_view text(bytes.data(), bytes.size());
    const auto end = text.find("\r\n");
    return end == std::string_view::npos ? std::string_view() : text.substr(0, end);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The offset of "HTTP/D.D" ending the request line, when it ends so.
std::optional<std::size_t> version_offset(std::string_view line) {
    constexpr std::string_view kPrefix = "HTTP/";
    if (line.size() < kPrefix.size() + 3) return std::nullopt;
    const auto at = line.size() - kPrefix.size() - 3;
    const auto version = line.substr(at);
    if (!version.starts_with(kPrefix) || !is_digit(version[5]) || version[6] != '.' || !is_digit(version[7])) {
        return std::nullopt;
    }
    return at;
}

}  // namespace

bool downgrade_minor_version(std::span<char> bytes) {
    const auto line = request_line(bytes);
    const auto at = version_offset(line);
    if (!at || line[*at + 5] != '1' || line[*at + 7] < '2') return false;
    bytes[*at + 7] = '1';
    return true;
}

http::status status_for_bad_version(std::span<const char> bytes) {
    const auto line = request_line(bytes);
    const auto at = version_offset(line);
    return at && line[*at + 5] != '1' ? http::status::http_version_not_supported : http::status::bad_request;
}

std::optional<std::string> host_problem(const Request& request) {
    const auto hosts = request.count(http::field::host);
    if (hosts > 1) {
        return fmt::format("Bad Request: {} Host headers; a request has at most one (RFC 9112 section 3.2)", hosts);
    }
    if (hosts == 0 && request.version() >= 11) {
        return std::string(
            "Bad Request: an HTTP/1.1 request needs a Host header (RFC 9112 section 3.2); send "
            "'Host: localhost' when there is no name to give");
    }
    return std::nullopt;
}

void to_origin_form(Request& request) {
    const std::string_view target = request.target();
    std::size_t scheme = 0;
    if (boost::beast::iequals(target.substr(0, 7), "http://"))
        scheme = 7;
    else if (boost::beast::iequals(target.substr(0, 8), "https://"))
        scheme = 8;
    if (scheme == 0) return;
    const auto path = target.find_first_of("/?#", scheme);
    std::string origin = path == std::string_view::npos ? std::string("/") : std::string(target.substr(path));
    if (origin.front() != '/') origin.insert(0, "/");
    request.target(origin);
}

}  // namespace zeus::http_server
