#include "communicator.hpp"

#include <fmt/format.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "gil.hpp"

namespace zeus::python {

namespace {

// zeus_native.utils.framework's all_reduce, asked from native code (which may
// have released the GIL).
class FrameworkCommunicator final : public profile::Communicator {
  public:
    FrameworkCommunicator(nb::object framework, int rank, int size)
        : framework_(std::move(framework)), rank_(rank), size_(size) {}
    FrameworkCommunicator(const FrameworkCommunicator&) = delete;
    FrameworkCommunicator& operator=(const FrameworkCommunicator&) = delete;
    ~FrameworkCommunicator() override {
        if (!Py_IsInitialized()) {
            (void)framework_.release();  // the interpreter is gone: nothing to release it to
            return;
        }
        AcquiredGil gil;
        framework_.reset();
    }

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return size_; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, profile::ReduceOp op) override {
        AcquiredGil gil;
        try {
            nb::list list;
            for (double v : values) list.append(v);
            nb::object reduced = framework_.attr("all_reduce")(list, op == profile::ReduceOp::Sum ? "sum" : "max");
            return nb::cast<std::vector<double>>(reduced);
        } catch (const std::exception& e) {
            return Error{ErrorCode::Unknown,
                         fmt::format("combining the ranks' measurements with torch.distributed failed: {}", e.what()),
                         "every rank must make the same profiling and optimizer calls, with the process group up", 0};
        }
    }

  private:
    nb::object framework_;
    int rank_;
    int size_;
};

}  // namespace

std::unique_ptr<profile::Communicator> framework_communicator() {
    nb::module_ framework = nb::module_::import_("zeus_native.utils.framework");
    nb::object ranks = framework.attr("running_ranks")();
    if (ranks.is_none()) return nullptr;
    auto [rank, size] = nb::cast<std::pair<int, int>>(ranks);
    return std::make_unique<FrameworkCommunicator>(std::move(framework), rank, size);
}

}  // namespace zeus::python
