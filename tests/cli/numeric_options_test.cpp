// Every number option of every `zeus` command, enumerated from the CLI11 app
// main() parses (zeus_app.hpp), not from a list typed here: each must carry
// one of option_checks.hpp's validators, and each is fed NaN, infinities,
// '', a huge value, -1 and 0. The first four are refused while parsing with
// exit code 2 (125 under `zeus run`, docs/cli.md) and a message naming the
// option; -1 and 0 are refused exactly when they are outside the range the
// option's --help shows (that range documents what is accepted).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "option_checks.hpp"
#include "support/command_output.hpp"
#include "zeus_app.hpp"
#include "support/build_paths.hpp"

namespace zeus::cli {
namespace {

struct Range {
    double min = 0;
    bool min_included = true;
    double max = 0;
    [[nodiscard]] bool contains(double v) const { return (v > min || (min_included && v == min)) && v <= max; }
};

struct NumberOption {
    std::vector<std::string> command;  // {"perseus", "solve"}
    std::string flag;                  // "--noise-factor"
    std::string type;                  // CLI11's type name with the validators' descriptions
    std::optional<Range> range;        // from the validator's description; none: no zeus validator
};

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// "NUMBER in [0.01, 1]", "NUMBER in (0, 1]", "INTEGER in [1, 256]".
std::optional<Range> declared_range(CLI::Option& option) {
    for (const char* name : {"finite number", "whole number"}) {
        CLI::Validator* validator = nullptr;
        try {
            validator = option.get_validator(name);
        } catch (const CLI::OptionNotFound&) {
            continue;
        }
        if (validator == nullptr || validator->get_name() != name) continue;
        const std::string text = validator->get_description();
        const auto open = text.find_first_of("[(");
        const auto comma = text.find(',', open);
        if (open == std::string::npos || comma == std::string::npos) return std::nullopt;
        Range range;
        range.min_included = text[open] == '[';
        range.min = std::strtod(text.c_str() + open + 1, nullptr);
        range.max = std::strtod(text.c_str() + comma + 1, nullptr);
        return range;
    }
    return std::nullopt;
}

bool numeric_type(const std::string& type) {
    for (const char* t : {"INT", "UINT", "FLOAT", "NUMBER", "INTEGER"}) {
        if (type.rfind(t, 0) == 0) return true;
    }
    return false;
}

void collect(CLI::App& app, const std::vector<std::string>& path, std::vector<NumberOption>& out) {
    for (CLI::Option* option : app.get_options({})) {
        if (option->get_lnames().empty() || option->get_expected_max() == 0) continue;  // positionals, flags
        const std::string type = option->get_type_name();
        auto range = declared_range(*option);
        if (!numeric_type(type) && !range) continue;
        out.push_back({path, "--" + option->get_lnames().front(), type, range});
    }
    for (CLI::App* sub : app.get_subcommands({})) {
        auto deeper = path;
        deeper.push_back(sub->get_name());
        collect(*sub, deeper, out);
    }
}

std::vector<NumberOption> every_number_option() {
    CLI::App app{"", "zeus"};
    const auto runners = add_commands(app);  // they own the storage the options parse into
    std::vector<NumberOption> options;
    collect(app, {}, options);
    return options;
}

struct Parsed {
    bool refused = false;
    int exit_code = 0;
    std::string message;
};

// Parses as main() does, on a fresh app; nothing runs.
Parsed parse(const NumberOption& option, const std::string& value) {
    CLI::App app{"", "zeus"};
    const auto runners = add_commands(app);  // they own the storage the options parse into
    std::vector<std::string> words{"zeus"};
    words.insert(words.end(), option.command.begin(), option.command.end());
    words.push_back(option.flag);
    words.push_back(value);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    Parsed parsed;
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::RequiredError&) {
        // The value passed its check; another option is missing.
    } catch (const CLI::RequiresError&) {
        // The value passed its check; the option needs another (--kubelet-timeout needs --attribution).
    } catch (const CLI::ParseError& e) {
        std::ostringstream captured;
        auto* const saved = std::cerr.rdbuf(captured.rdbuf());
        parsed.exit_code = report_parse_error(app, e);
        std::cerr.rdbuf(saved);
        parsed.refused = true;
        parsed.message = captured.str();
    }
    return parsed;
}

TEST(NumericOptions, EveryNumberOptionOfEveryCommandIsFound) {
    const auto options = every_number_option();
    // The examples of issue 24 must be among them; the rest come from the app.
    for (const std::string wanted :
         {"perseus solve --noise-factor", "perseus simulate --forward-units", "perseus simulate --imbalance",
          "perseus simulate --min-frequency", "profile --warmup-iterations", "demo --util", "power --interval",
          "exporter --period", "bso-server --threads"}) {
        bool found = false;
        for (const auto& o : options) found = found || joined(o.command) + " " + o.flag == wanted;
        EXPECT_TRUE(found) << wanted;
    }
    EXPECT_GT(options.size(), 40U);
}

TEST(NumericOptions, EachCarriesAZeusValidatorWithItsRange) {
    for (const auto& o : every_number_option()) {
        EXPECT_TRUE(o.range.has_value()) << "zeus " << joined(o.command) << " " << o.flag << " (" << o.type
                                         << ") has no finite_number/whole_number check";
    }
}

TEST(NumericOptions, NonFiniteEmptyAndHugeValuesAreRefusedNamingTheOption) {
    for (const auto& o : every_number_option()) {
        const int expected_exit = o.command.front() == "run" ? 125 : 2;
        for (const std::string value : {"nan", "NaN", "inf", "-inf", "", " ", "1e20", "100000000000000000000", "1O"}) {
            const auto what = "zeus " + joined(o.command) + " " + o.flag + " '" + value + "'";
            const auto parsed = parse(o, value);
            ASSERT_TRUE(parsed.refused) << what << " was accepted";
            EXPECT_EQ(parsed.exit_code, expected_exit) << what << "\n" << parsed.message;
            EXPECT_NE(parsed.message.find(o.flag), std::string::npos) << what << "\n" << parsed.message;
            EXPECT_NE(parsed.message.find("zeus: fix:"), std::string::npos) << what << "\n" << parsed.message;
        }
    }
}

TEST(NumericOptions, MinusOneAndZeroAreAcceptedExactlyWhenTheShownRangeHasThem) {
    for (const auto& o : every_number_option()) {
        if (!o.range) continue;  // reported by EachCarriesAZeusValidatorWithItsRange
        for (const double v : {-1.0, 0.0}) {
            const std::string value = v < 0 ? "-1" : "0";
            const auto what = "zeus " + joined(o.command) + " " + o.flag + " " + value + " (range " + o.type + ")";
            const auto parsed = parse(o, value);
            EXPECT_EQ(parsed.refused, !o.range->contains(v)) << what << "\n" << parsed.message;
            if (parsed.refused) {
                EXPECT_NE(parsed.message.find(o.flag), std::string::npos) << what << parsed.message;
            }
        }
    }
}

// `zeus` alone names every command (it left out `bso`), from the same app.
TEST(ZeusApp, WithoutACommandEveryCommandIsListed) {
    CLI::App app{"", "zeus"};
    const auto runners = add_commands(app);  // they own the storage the options parse into
    int exit_code = -1;
    const std::string out = testing::capture(zeus::testing::zeus_cli_path(), exit_code);
    EXPECT_EQ(exit_code, 2);
    const auto line = out.substr(out.find("zeus: a subcommand is required"));
    for (const auto* sub : app.get_subcommands({})) {
        EXPECT_NE(line.find(sub->get_name()), std::string::npos) << sub->get_name() << " missing from: " << line;
    }
    EXPECT_NE(line.find("bso,"), std::string::npos) << line;
}

// `zeus demo --help` shows its defaults, as every other command's help does.
TEST(ZeusApp, DemoHelpShowsDefaults) {
    int exit_code = -1;
    const std::string out = testing::capture(zeus::testing::zeus_cli_path() + " demo --help", exit_code);
    EXPECT_EQ(exit_code, 0);
    for (const auto& flag : {"--seconds", "--util"}) {
        const auto at = out.find(flag);
        ASSERT_NE(at, std::string::npos) << out;
        const auto line = out.substr(at, out.find('\n', at) - at);
        EXPECT_NE(line.find('='), std::string::npos) << "no default shown: " << line;
    }
}

}  // namespace
}  // namespace zeus::cli
