#include "http_server/message.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace zeus::http_server {

PeerProcess::~PeerProcess() { ::close(pidfd_); }

std::string Peer::describe() const {
    if (pid && *pid == 0 && process) {
        return fmt::format("process #{} of another PID namespace, uid {} gid {}", process->id(), uid.value_or(0),
                           gid.value_or(0));
    }
    if (pid) return fmt::format("pid {} uid {} gid {}", *pid, uid.value_or(0), gid.value_or(0));
    return address;
}

Response Response::json(std::string body, http::status status) {
    Response response;
    response.status = status;
    response.body = std::move(body);
    return response;
}

Response Response::text(http::status status, std::string body) {
    Response response;
    response.status = status;
    response.content_type = "text/plain; charset=utf-8";
    response.body = std::move(body);
    return response;
}

Response Response::empty_ok() {
    Response response;
    response.content_type.clear();
    return response;
}

Response Response::event_stream(std::shared_ptr<EventSource> source) {
    Response response;
    response.content_type = "text/event-stream";
    response.stream = std::move(source);
    return response;
}

TargetParts split_target(std::string_view target) {
    const auto question = target.find('?');
    if (question == std::string_view::npos) return {target, {}};
    return {target.substr(0, question), target.substr(question + 1)};
}

}  // namespace zeus::http_server
