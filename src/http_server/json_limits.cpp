#include "http_server/json_limits.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace zeus::http_server {
namespace {

// The deepest nesting of brackets outside strings: one pass, no allocation,
// so a hostile body is refused for the cost of reading it once.
std::size_t nesting_depth(std::string_view text, std::size_t stop_above) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest && (deepest = depth) > stop_above) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

// Keys seen in each open object (nullopt for an open array).
class DuplicateKeyCheck {
  public:
    bool operator()(int, nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        switch (event) {
            case Event::object_start: open_.emplace_back(std::set<std::string>{}); break;
            case Event::array_start: open_.emplace_back(std::nullopt); break;
            case Event::object_end:
            case Event::array_end:
                if (!open_.empty()) open_.pop_back();
                break;
            case Event::key:
                if (!open_.empty() && open_.back() && !open_.back()->insert(parsed.get<std::string>()).second)
                    throw JsonLimitError(fmt::format("the key \"{}\" appears twice in one object; give each key once",
                                                     parsed.get<std::string>()));
                break;
            case Event::value: break;
        }
        return true;
    }

  private:
    std::vector<std::optional<std::set<std::string>>> open_;
};

}  // namespace

nlohmann::json parse_json_checked(std::string_view text, JsonChecks checks) {
    if (nesting_depth(text, checks.max_depth) > checks.max_depth)
        throw JsonLimitError(fmt::format("the JSON nests deeper than {} levels; send a flatter document",
                                         checks.max_depth));
    if (!checks.refuse_duplicate_keys) return nlohmann::json::parse(text);
    DuplicateKeyCheck check;
    return nlohmann::json::parse(text, [&check](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        return check(depth, event, parsed);
    });
}

}  // namespace zeus::http_server
