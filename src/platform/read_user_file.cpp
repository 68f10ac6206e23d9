#include "zeus/platform/read_user_file.hpp"

#include <fmt/format.h>

#include "platform/csv_line.hpp"

namespace zeus {
namespace {

std::string fix_for(UserFileProblem problem, const UserInput& input) {
    switch (problem) {
        case UserFileProblem::Missing:
            return fmt::format("check the path given to {}", input.flag);
        case UserFileProblem::Directory:
            return fmt::format("give {} the path of a file, not of a directory", input.flag);
        case UserFileProblem::NotRegular:
            return fmt::format("give {} a regular file (save the data to one first)", input.flag);
        case UserFileProblem::Unreadable:
            return fmt::format("check the file's permissions (this user must be able to read it) and the path given to {}",
                               input.flag);
        case UserFileProblem::TooLarge:
            return fmt::format("check the path given to {}; input files are limited to {} (docs/cli.md, Input files)",
                               input.flag, describe_byte_count(input.max_bytes));
        case UserFileProblem::None:
            break;
    }
    return {};
}

ErrorCode code_for(UserFileProblem problem) {
    switch (problem) {
        case UserFileProblem::Missing:
            return ErrorCode::NotFound;
        case UserFileProblem::Unreadable:
            return ErrorCode::NoPermission;
        default:
            return ErrorCode::InvalidArgument;
    }
}

}  // namespace

Error user_file_error(const std::string& path, const UserInput& input, UserFileProblem problem,
                      const std::string& detail) {
    return Error{code_for(problem), fmt::format("cannot use the {} '{}': it {}", input.what, path, detail),
                 fix_for(problem, input), 0};
}

Result<std::string> read_user_file(const std::string& path, const UserInput& input) {
    UserFileText file = read_user_file_text(path, input.max_bytes);
    if (!file.ok()) return user_file_error(path, input, file.problem, file.detail);
    drop_utf8_bom(file.text);
    return std::move(file.text);
}

}  // namespace zeus
