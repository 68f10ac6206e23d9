// One line of progress on stderr, rewritten in place (carriage return), as
// `zeus profile` and `zeus perseus solve` show on a terminal.
#pragma once

#include <iostream>
#include <string>

namespace zeus::cli {

class StatusLine {
  public:
    // Replaces the line; blanks pad a shorter text over the longer last one.
    void show(std::string text) {
        const std::size_t shown = text.size();
        if (text.size() < width_) text.append(width_ - text.size(), ' ');
        width_ = shown;
        std::cerr << '\r' << text << std::flush;
        dirty_ = true;
    }
    // Ends the line, so that what follows starts on its own.
    void finish() {
        if (dirty_) std::cerr << '\n' << std::flush;
        dirty_ = false;
    }
    [[nodiscard]] bool shown() const { return dirty_; }

  private:
    bool dirty_ = false;
    std::size_t width_ = 0;
};

}  // namespace zeus::cli
