#include "zeus/metrics/pushgateway.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "zeus/platform/utf8.hpp"

namespace zeus::metrics {
namespace {

constexpr const char* kUrlForm = "give the Pushgateway as http://HOST:PORT (e.g. http://localhost:9091)";

Error malformed(const std::string& url, std::string_view why) {
    return Error{ErrorCode::InvalidArgument, fmt::format("Pushgateway URL '{}' is malformed: {}", url, why), kUrlForm,
                 0};
}

std::string url_encode(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += c;
        } else if (c == ' ') {
            out += '+';
        } else {
            out += fmt::format("%{:02X}", u);
        }
    }
    return out;
}

std::string base64_urlsafe(std::string_view text) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < text.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(text[i]) << 16U) |
                           (static_cast<unsigned char>(text[i + 1]) << 8U) | static_cast<unsigned char>(text[i + 2]);
        out += kAlphabet[(v >> 18U) & 63U];
        out += kAlphabet[(v >> 12U) & 63U];
        out += kAlphabet[(v >> 6U) & 63U];
        out += kAlphabet[v & 63U];
    }
    if (i < text.size()) {
        unsigned v = static_cast<unsigned char>(text[i]) << 16U;
        if (i + 1 < text.size()) v |= static_cast<unsigned char>(text[i + 1]) << 8U;
        out += kAlphabet[(v >> 18U) & 63U];
        out += kAlphabet[(v >> 12U) & 63U];
        out += i + 1 < text.size() ? kAlphabet[(v >> 6U) & 63U] : '=';
        out += '=';
    }
    return out;
}

// "http://host[:port][/prefix]" with host and port checked; the prefix is kept
// (a gateway behind a reverse proxy path).
Result<std::string> normalise(const std::string& url) {
    std::string full = url;
    if (full.rfind("http://", 0) != 0 && full.rfind("https://", 0) != 0) {
        if (full.find("://") != std::string::npos) {
            return malformed(url, "only http:// and https:// are supported");
        }
        full = "http://" + full;
    }
    while (!full.empty() && full.back() == '/') full.pop_back();
    for (const char c : full) {
        if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c))) {
            return malformed(url, "it contains a space or control character");
        }
    }
    const auto host_start = full.find("://") + 3;
    const auto path_start = full.find_first_of("/?#", host_start);
    std::string_view authority(full);
    authority = authority.substr(host_start, path_start == std::string::npos ? std::string::npos : path_start - host_start);
    if (path_start != std::string::npos && full[path_start] != '/') {
        return malformed(url, "a query or fragment has no place in it");
    }
    if (authority.find('@') != std::string_view::npos) return malformed(url, "credentials in the URL are not supported");
    std::string_view host = authority;
    std::string_view port;
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        if (close == std::string_view::npos) return malformed(url, "an IPv6 address lacks its closing ']'");
        port = host.substr(close + 1);
        host = host.substr(0, close + 1);
        if (!port.empty() && port.front() != ':') return malformed(url, "expected ':PORT' after the IPv6 address");
        if (!port.empty()) port.remove_prefix(1);
    } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
        port = host.substr(colon + 1);
        host = host.substr(0, colon);
        if (port.empty()) return malformed(url, "the port after ':' is empty");
    }
    if (host.empty()) return malformed(url, "it has no host");
    for (const char c : host) {
        const auto u = static_cast<unsigned char>(c);
        if (!(std::isalnum(u) || c == '.' || c == '-' || c == '_' || c == '[' || c == ']' || c == ':')) {
            return malformed(url, fmt::format("'{}' is not a host name", host));
        }
    }
    if (!port.empty()) {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            return malformed(url, fmt::format("'{}' is not a port (1-65535)", port));
        }
    }
    return full;
}

}  // namespace

std::string job_path(const std::string& job) {
    if (job.find('/') != std::string::npos) return "job@base64/" + base64_urlsafe(job);
    return "job/" + url_encode(job);
}

Result<std::unique_ptr<Pushgateway>> Pushgateway::open(const std::string& url, const std::string& job) {
    auto base = normalise(url);
    if (!base) return base.error();
    if (job.empty()) {
        return Error{ErrorCode::InvalidArgument, "the Pushgateway job name is empty",
                     "give a job name (e.g. --job training); the Pushgateway groups pushed metrics by it", 0};
    }
    // A job that is not UTF-8 is stored, and from then on the Pushgateway
    // refuses every push by anyone (400 "label ... is not utf8").
    if (auto named = require_utf8("the Pushgateway job name", job); !named) return named.error();
    return std::unique_ptr<Pushgateway>(new Pushgateway(*base, "/metrics/" + job_path(job)));
}

Pushgateway::Pushgateway(std::string base_url, std::string target)
    : target_(std::move(target)),
      push_url_(base_url + target_),
      client_(HttpEndpoint{base_url, {}, "the Pushgateway at " + base_url,
                           "check that the Pushgateway runs and the URL is right (its default port is 9091)",
                           "the Pushgateway did not answer in time; check its load and the network",
                           {}, std::chrono::milliseconds(3'000), true}) {}

Status Pushgateway::push(const std::vector<MetricFamily>& families) { return send("PUT", families); }
Status Pushgateway::push_add(const std::vector<MetricFamily>& families) { return send("POST", families); }

Status Pushgateway::send(std::string_view method, const std::vector<MetricFamily>& families) {
    HttpRequest request;
    request.method = method;
    request.target = target_;
    request.body = render(families, ExpositionFormat::PrometheusText);
    request.content_type = std::string(content_type(ExpositionFormat::PrometheusText));
    request.timeout = std::chrono::milliseconds(10'000);
    auto reply = client_.request(request);
    if (!reply) {
        Error error = reply.error();
        error.message = fmt::format("pushing metrics to {} failed: {}", push_url_, error.message);
        return error;
    }
    if (reply->status != 200 && reply->status != 202) {
        std::string body = reply->body.substr(0, 300);
        while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("the Pushgateway at {} refused the push with HTTP {}: {}", push_url_, reply->status,
                                 body),
                     "check the job name and that no other client pushes the same metric names with other types", 0};
    }
    return {};
}

}  // namespace zeus::metrics
