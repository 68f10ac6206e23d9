// Command-line face of the auth code for tests/zeusd/auth/pyjwt_interop.py:
//   interop_tool issue KEY_FILE USER SCOPES EXPIRES   -> the token on stdout
//   interop_tool verify KEY_FILE TOKEN                -> a JSON verdict on stdout:
//     {"ok":true,"claims":{...}} or {"ok":false,"problem":"...","reason":"..."}
// Exit status 0 for a verdict, 2 for a usage or key error.
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "zeusd/auth/jwt.hpp"
#include "zeusd/auth/signing_key.hpp"
#include "zeusd/auth/token_issue.hpp"

namespace {

using namespace zeus::zeusd;

std::string problem_name(const zeus::Error& error) {
    switch (token_problem(error).value_or(TokenProblem::Malformed)) {
        case TokenProblem::Malformed: return token_problem(error) ? "Malformed" : "Other";
        case TokenProblem::WrongAlgorithm: return "WrongAlgorithm";
        case TokenProblem::BadSignature: return "BadSignature";
        case TokenProblem::UnknownScope: return "UnknownScope";
        case TokenProblem::Expired: return "Expired";
    }
    return "Other";
}

int usage() {
    std::cerr << "usage: zeusd_auth_interop_tool issue KEY_FILE USER SCOPES EXPIRES\n"
                 "       zeusd_auth_interop_tool verify KEY_FILE TOKEN\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string command = argv[1];
    if (command == "issue" && argc == 6) {
        const auto token = issue_token(argv[2], argv[3], argv[4], argv[5], unix_now());
        if (!token) {
            std::cerr << token.error().describe() << '\n';
            return 2;
        }
        std::cout << token.value() << '\n';
        return 0;
    }
    if (command == "verify" && argc == 4) {
        const auto key = load_signing_key(argv[2]);
        if (!key) {
            std::cerr << key.error().describe() << '\n';
            return 2;
        }
        const auto claims = verify(argv[3], key.value(), unix_now());
        nlohmann::json verdict;
        if (claims) {
            verdict = {{"ok", true}, {"claims", nlohmann::json::parse(claims_json(claims.value()).value())}};
        } else {
            verdict = {{"ok", false}, {"problem", problem_name(claims.error())}, {"reason", claims.error().message}};
        }
        std::cout << verdict.dump() << '\n';
        return 0;
    }
    return usage();
}
