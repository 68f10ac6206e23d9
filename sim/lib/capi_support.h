// Shared by the zeusSim* wrappers (capi.cpp, capi_processes.cpp): exceptions
// become status codes plus the thread-local message.
#pragma once

#include <memory>
#include <string>

#include "config.h"
#include "last_error.h"
#include "session.h"
#include "zeus_sim/zeus_sim.h"

namespace zeus::sim::capi {

template <typename F>
inline zeusSimStatus_t api_call(F&& f) noexcept {
  try {
    f();
    return ZEUS_SIM_OK;
  } catch (const SimError& e) {
    set_last_error(e.what());
    return static_cast<zeusSimStatus_t>(e.status());
  } catch (const ConfigError& e) {
    set_last_error(e.what());
    return ZEUS_SIM_ERROR_CONFIG;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return ZEUS_SIM_ERROR_STATE;
  } catch (...) {
    set_last_error("unexpected failure inside the simulator");
    return ZEUS_SIM_ERROR_STATE;
  }
}

inline std::shared_ptr<Simulator> open_simulator() {
  std::shared_ptr<Simulator> sim = session_current();
  if (!sim) throw SimError(Status::kState, "the simulator is not open: call zeusSimOpen() (or nvmlInit()) first");
  return sim;
}

template <typename T>
void require(T* out, const char* what) {
  if (!out) throw SimError(Status::kInvalidArgument, std::string(what) + " must not be NULL");
}

}  // namespace zeus::sim::capi
