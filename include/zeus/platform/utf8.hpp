// Text a user gave (arguments, environment variables, file names and
// contents, HTTP fields) is bytes, not necessarily UTF-8; JSON documents,
// Prometheus labels and a terminal each need something else. The one set of
// rules every writer applies (docs/cli.md, "Text that is not UTF-8"):
// - a value that is only reported is written with each invalid byte replaced
//   by U+FFFD (`to_utf8`, and `json_text` for every JSON document);
// - a value that names something (a Pushgateway job, a label, a zone, a
//   currency) is refused before anything runs (`require_utf8`);
// - text printed for a person has control characters and invalid bytes
//   escaped (`terminal_safe`), so that an argument cannot move the cursor or
//   change the terminal's state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"

namespace zeus {

// Where the first byte that is not part of well-formed UTF-8 lies (overlong
// forms, surrogates and code points above U+10FFFF are not), or npos.
[[nodiscard]] std::size_t first_invalid_utf8(std::string_view text);

[[nodiscard]] inline bool is_utf8(std::string_view text) { return first_invalid_utf8(text) == std::string_view::npos; }

// The text with each byte that is not part of well-formed UTF-8 replaced by
// U+FFFD, as nlohmann's error_handler_t::replace does inside `json_text`.
[[nodiscard]] std::string to_utf8(std::string_view text);

// The text for a terminal: C0 and C1 control characters and DEL as \n, \t,
// \r, \e or \xNN, and bytes that are not UTF-8 as \xNN; everything else,
// valid printable UTF-8 included (accented letters, CJK), unchanged.
[[nodiscard]] std::string terminal_safe(std::string_view text);

// terminal_safe for text of several lines: its line breaks are kept.
[[nodiscard]] std::string terminal_safe_lines(std::string_view text);

// "'VALUE' is not UTF-8 (byte 0xff at offset 5)", the value escaped, or ""
// when it is UTF-8.
[[nodiscard]] std::string utf8_problem(std::string_view value);

// Refuses text that is not UTF-8 where it names something: the error names
// `input` ("--job", "the Pushgateway job name") with utf8_problem, and the
// fix (utf8_name_fix).
[[nodiscard]] Status require_utf8(std::string_view input, std::string_view value);
[[nodiscard]] std::string utf8_name_fix(std::string_view input);

// A JSON document as text, bytes that are not UTF-8 in its strings replaced
// by U+FFFD instead of nlohmann's type_error.316 (which aborts a writer
// after the work is done). Every JSON the project writes goes through here;
// a template so that this header does not need nlohmann.
template <class Json>
[[nodiscard]] std::string json_text(const Json& document, int indent = -1) {
    return document.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace zeus
