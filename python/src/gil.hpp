// How the binding lets go of the GIL around native calls and takes it back,
// safely when the interpreter exits while a daemon thread is inside a call.
//
// A thread that takes the GIL after finalization has begun is ended by
// CPython with pthread_exit, whose forced unwinding through a destructor (as
// nb::gil_scoped_release's) calls std::terminate: "terminate called without
// an active exception", exit 134. So once zeus_native's exit hook has stopped
// the package's threads and closed the gate (before finalization), any other
// thread that would take the GIL back waits until the process ends instead.
#pragma once

#include <Python.h>

namespace zeus::python {

// nb::gil_scoped_release, through the gate.
class ReleasedGil {
  public:
    ReleasedGil();
    ~ReleasedGil();
    ReleasedGil(const ReleasedGil&) = delete;
    ReleasedGil& operator=(const ReleasedGil&) = delete;

  private:
    PyThreadState* state_;
};

// nb::gil_scoped_acquire (callbacks into Python from native code), through the gate.
class AcquiredGil {
  public:
    AcquiredGil();
    ~AcquiredGil();
    AcquiredGil(const AcquiredGil&) = delete;
    AcquiredGil& operator=(const AcquiredGil&) = delete;

  private:
    PyGILState_STATE state_;
};

// Called once by the interpreter-exit hook, with the GIL held: threads already
// on their way back into Python get there; later ones wait for the process end.
void close_native_gate();

}  // namespace zeus::python
