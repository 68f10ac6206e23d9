#include "zeusd/query.hpp"

#include "http_server/message.hpp"
#include "http_server/percent_decode.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

using http_server::percent_decode;

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

std::string expected_list(std::span<const std::string_view> allowed) {
    if (allowed.size() == 0) return "there are no fields";
    std::string out = allowed.size() == 1 ? "expected " : "expected one of ";
    bool first = true;
    for (const auto name : allowed) {
        if (!first) out += ", ";
        out += fmt::format("`{}`", name);
        first = false;
    }
    return out;
}

}  // namespace

std::optional<RequestTarget> parse_target(std::string_view target) {
    RequestTarget parsed;
    const http_server::TargetParts parts = http_server::split_target(target);
    std::string_view query = parts.query;
    auto path = percent_decode(parts.path);
    if (!path) return std::nullopt;
    parsed.path = std::move(*path);
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (pair.empty()) continue;
        const auto equals = pair.find('=');
        auto name = percent_decode(pair.substr(0, equals));
        auto value = percent_decode(equals == std::string_view::npos ? std::string_view{} : pair.substr(equals + 1));
        if (!name || !value) return std::nullopt;
        parsed.parameters.emplace_back(std::move(*name), std::move(*value));
    }
    return parsed;
}

std::variant<Query, QueryError> Query::check(const RequestTarget& target, std::span<const std::string_view> allowed) {
    Query query;
    for (const auto& [name, value] : target.parameters) {
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            return QueryError{fmt::format("Query deserialize error: unknown field `{}`, {}", name, expected_list(allowed))};
        }
        if (!query.values_.emplace(name, value).second) {
            return QueryError{fmt::format("Query deserialize error: duplicate field `{}`", name)};
        }
    }
    return query;
}

std::optional<std::string_view> Query::raw(std::string_view name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

void Query::fail(std::string message) {
    if (!error_) error_ = QueryError{std::move(message)};
}

std::optional<std::string_view> Query::required_string(std::string_view name) {
    auto value = raw(name);
    if (!value) fail(fmt::format("Query deserialize error: missing field `{}`", name));
    return value;
}

std::optional<bool> Query::required_bool(std::string_view name) {
    const auto value = required_string(name);
    if (!value) return std::nullopt;
    if (*value == "true") return true;
    if (*value == "false") return false;
    fail("Query deserialize error: provided string was not `true` or `false`");
    return std::nullopt;
}

std::optional<std::uint32_t> Query::required_u32(std::string_view name) {
    const auto value = required_string(name);
    if (!value) return std::nullopt;
    if (value->empty()) {
        fail("Query deserialize error: cannot parse integer from empty string");
        return std::nullopt;
    }
    std::uint64_t parsed = 0;
    const auto* begin = value->data();
    const auto* end = begin + value->size();
    const auto digits_only = std::all_of(begin, end, [](char c) { return c >= '0' && c <= '9'; });
    const auto [ptr, ec] = std::from_chars(begin, end, parsed);
    if (!digits_only || (ec != std::errc{} && ec != std::errc::result_out_of_range) || ptr != end) {
        fail("Query deserialize error: invalid digit found in string");
        return std::nullopt;
    }
    if (ec == std::errc::result_out_of_range || parsed > std::numeric_limits<std::uint32_t>::max()) {
        fail("Query deserialize error: number too large to fit in target type");
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(parsed);
}

std::variant<std::vector<unsigned>, IdListError> parse_id_list(std::string_view text, std::string_view parameter,
                                                              std::string_view noun) {
    if (trim(text).empty()) {
        return IdListError{fmt::format("{} must contain at least one {} index", parameter, noun)};
    }
    std::set<unsigned> ids;
    while (true) {
        const auto comma = text.find(',');
        const auto element = trim(text.substr(0, comma));
        if (element.empty()) return IdListError{fmt::format("{} contains an empty {} index", parameter, noun)};
        unsigned id = 0;
        const auto [ptr, ec] = std::from_chars(element.data(), element.data() + element.size(), id);
        if (ec != std::errc{} || ptr != element.data() + element.size()) {
            return IdListError{fmt::format("Invalid {} index: {}", noun, element)};
        }
        ids.insert(id);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return std::vector<unsigned>(ids.begin(), ids.end());
}

}  // namespace zeus::zeusd
