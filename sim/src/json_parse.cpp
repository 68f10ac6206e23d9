#include "json_parse.h"

#include <set>
#include <vector>

#include "config_error.h"

namespace zeus::sim {
namespace {

using nlohmann::json;

// Follows the parser's events to know the key path of the value being read.
// nlohmann reports a number overflow ("1e400") without saying where.
class PathTracker {
 public:
  explicit PathTracker(const std::string& source) : source_(source) {}

  bool on_event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames_.push_back({false, {}, 0});
        break;
      case json::parse_event_t::array_start:
        frames_.push_back({true, {}, 0});
        break;
      case json::parse_event_t::key:
        if (!frames_.empty()) {
          Frame& frame = frames_.back();
          frame.key = parsed.get<std::string>();
          // JSON parsers keep one of two equal keys silently; which one a reader meant is unknowable.
          if (!frame.keys.insert(frame.key).second) {
            throw ConfigError("zeus-sim config " + source_ + ": " + path() + " is given twice; keep one");
          }
        }
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        value_done();
        break;
      case json::parse_event_t::value:
        value_done();
        break;
    }
    return true;  // keep everything
  }

  // "gpus[0].power.idle_w"; empty at the top level.
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.array) {
        out += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty()) {
        out += (out.empty() ? "" : ".") + f.key;
      }
    }
    return out;
  }

 private:
  struct Frame {
    bool array;
    std::string key;    // objects: the key whose value is being read
    std::size_t index;  // arrays: the element being read
    std::set<std::string> keys{};  // objects: the keys read so far
  };

  void value_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }

  std::string source_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_config_json(const std::string& text, const std::string& source) {
  PathTracker tracker(source);
  try {
    return json::parse(text,
                       [&](int, json::parse_event_t event, json& parsed) { return tracker.on_event(event, parsed); });
  } catch (const json::parse_error& e) {
    throw ConfigError("zeus-sim config " + source + ": not valid JSON: " + e.what());
  } catch (const json::exception& e) {
    // Valid syntax but an unrepresentable value, e.g. a number beyond a double.
    const std::string path = tracker.path();
    throw ConfigError("zeus-sim config " + source + ": " + (path.empty() ? "a value" : path) +
                      " cannot be read: " + e.what());
  }
}

}  // namespace zeus::sim
