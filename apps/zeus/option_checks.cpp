#include "option_checks.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "zeus/platform/utf8.hpp"

namespace zeus::cli {
namespace {

// zeus run's failures, apart from the command's exit codes (docs/cli.md).
constexpr int kRunFailed = 125;
constexpr int kBadOption = 2;

// "power-limit simulate", "run", or "" before any subcommand.
std::string command_path(CLI::App& app) {
    std::string path;
    CLI::App* at = &app;
    while (true) {
        auto subs = at->get_subcommands();
        if (subs.empty()) break;
        at = subs.front();
        if (!path.empty()) path += ' ';
        path += at->get_name();
    }
    return path;
}

// CLI11's wording, turned into ours where it differs.
std::string problem(const CLI::ParseError& error) {
    std::string what = error.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        const auto colon = what.find(": ");
        return "unknown option or argument " + (colon == std::string::npos ? what : what.substr(colon + 2));
    }
    if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
        // "Could not convert: --gpus = abc"
        const std::string prefix = "Could not convert: ";
        if (what.starts_with(prefix)) {
            const std::string rest = what.substr(prefix.size());
            const auto eq = rest.find(" = ");
            if (eq != std::string::npos) {
                return fmt::format("{} {}: '{}' is not a valid value", rest.substr(0, eq), rest.substr(eq + 3),
                                   rest.substr(eq + 3));
            }
        }
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
        const auto colon = what.find(':');
        const std::string option = colon == std::string::npos ? what : what.substr(0, colon);
        if (what.find("missing") != std::string::npos) return option + " needs a value";
        if (what.find("At Most") != std::string::npos) return option + " is given more than once";
    }
    return what;
}

}  // namespace

namespace {

CLI::Validator number_in(double min, bool min_included, double max, const std::string& unit) {
    const std::string units = unit.empty() ? std::string() : " " + unit;
    const std::string range = min_included ? fmt::format("from {:g} to {:g}{}", min, max, units)
                                           : fmt::format("above {:g} and at most {:g}{}", min, max, units);
    return CLI::Validator(
        [min, min_included, max, range](std::string& text) -> std::string {
            char* end = nullptr;
            errno = 0;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
                return fmt::format("'{}' is not a finite number; give a number {}", text, range);
            }
            if (v < min || (v == min && !min_included) || v > max) {
                return fmt::format("{} is out of range; give a number {}", text, range);
            }
            return {};
        },
        fmt::format("NUMBER in {}{:g}, {:g}]", min_included ? "[" : "(", min, max), "finite number");
}

}  // namespace

CLI::Validator finite_number(double min, double max, std::string unit) { return number_in(min, true, max, unit); }

CLI::Validator positive_number(double max, std::string unit) { return number_in(0.0, false, max, unit); }

CLI::Validator whole_number(long long min, long long max) {
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            char* end = nullptr;
            errno = 0;
            const long long v = std::strtoll(text.c_str(), &end, 10);
            if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
                return fmt::format("'{}' is not a whole number; give one from {} to {}", text, min, max);
            }
            if (v < min || v > max) return fmt::format("{} is out of range; give a whole number from {} to {}", text, min, max);
            return {};
        },
        fmt::format("INTEGER in [{}, {}]", min, max), "whole number");
}

CLI::Validator one_of(std::vector<std::string> choices) {
    const std::string list = fmt::format("{}", fmt::join(choices, ", "));
    return CLI::Validator(
        [choices, list](std::string& text) -> std::string {
            for (const auto& c : choices) {
                if (text == c) return {};
            }
            return fmt::format("'{}' is not one of {}", text, list);
        },
        "{" + list + "}", "one of");
}

CLI::Validator utf8_name() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const std::string problem = utf8_problem(text);
            if (problem.empty()) return {};
            return problem + "; " + utf8_name_fix("it");
        },
        "", "UTF-8 name");
}

int report_parse_error(CLI::App& app, const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    const std::string path = command_path(app);
    // The problem quotes what was given, escaped for the terminal.
    std::cerr << "zeus: " << (path.empty() ? "" : path + ": ") << terminal_safe(problem(error)) << "\n"
              << "zeus: fix: "
              << (path.empty() ? "see zeus --help for the commands and options"
                               : fmt::format("see zeus {} --help for its options and their values", path))
              << "\n";
    return path == "run" ? kRunFailed : kBadOption;
}

}  // namespace zeus::cli
