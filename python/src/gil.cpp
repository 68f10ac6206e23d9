#include "gil.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace zeus::python {

namespace {

struct Gate {
    std::mutex mutex;
    std::condition_variable returned;
    bool closed = false;
    std::thread::id closer;  // the exiting thread: its later exit hooks still make native calls
    int returning = 0;       // threads past the gate, waiting for the GIL
};

// Never destroyed: threads held at the gate outlive static destructors.
Gate& gate() {
    static Gate* const g = new Gate;
    return *g;
}

// Passes the gate (or waits there for the process to end), then `take`s the GIL.
template <class Take>
auto enter_python(Take&& take) {
    Gate& g = gate();
    {
        std::unique_lock lock(g.mutex);
        if (g.closed && std::this_thread::get_id() != g.closer) {
            lock.unlock();
            for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
        }
        ++g.returning;
    }
    auto taken = take();
    std::lock_guard lock(g.mutex);
    --g.returning;
    g.returned.notify_all();
    return taken;
}

}  // namespace

ReleasedGil::ReleasedGil() : state_(PyEval_SaveThread()) {}

ReleasedGil::~ReleasedGil() {
    enter_python([this] {
        PyEval_RestoreThread(state_);
        return 0;
    });
}

AcquiredGil::AcquiredGil() : state_(enter_python([] { return PyGILState_Ensure(); })) {}

AcquiredGil::~AcquiredGil() { PyGILState_Release(state_); }

void close_native_gate() {
    Gate& g = gate();
    {
        std::lock_guard lock(g.mutex);
        if (g.closed) return;
        g.closed = true;
        g.closer = std::this_thread::get_id();
    }
    // Let the threads already past the gate take the GIL and go on before
    // finalization starts (they would be ended while taking it otherwise).
    PyThreadState* state = PyEval_SaveThread();
    {
        std::unique_lock lock(g.mutex);
        g.returned.wait(lock, [&] { return g.returning == 0; });
    }
    PyEval_RestoreThread(state);
}

}  // namespace zeus::python
