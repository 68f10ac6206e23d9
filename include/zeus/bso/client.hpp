// The batch-size optimizer's client for C++ training code, with the original
// client's callbacks (zeus.optimizer.batch_size.client.BatchSizeOptimizer):
// the constructor registers the job, get_batch_size() asks for this run's
// batch size, on_train_begin() opens the measurement window, on_evaluate()
// reports cumulative time and GPU energy (from EnergyMonitor) after each
// epoch. The destructor ends the trial (PATCH /trials), as the original's
// atexit hook does, so a crashed run's trial becomes Failed.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "zeus/device/gpus.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/bso/algorithm.hpp"

namespace zeus {
class HttpClient;
}

namespace zeus::bso {

// What the client tells the server about its GPUs (the original's GpuConfig):
// GPU 0's maximum power limit in whole W times the number of GPUs measured.
struct GpuConfig {
    double max_power = 0.0;
    std::int64_t number_of_gpus = 0;
    std::string gpu_model;
};
Result<GpuConfig> gpu_config(const Gpus& gpus, const std::vector<unsigned>& gpu_indices);

// The server stopped a run that did not reach its target (the original's
// ZeusBSOTrainFailError): relaunch; the server picks another batch size.
class TrainFailError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class BatchSizeOptimizer {
public:
    // Registers `job` (job_id may be empty: the server makes one). Throws
    // ZeusError when the server cannot be reached or answers an error.
    BatchSizeOptimizer(EnergyMonitor& monitor, std::string server_url, JobSpec job, GpuConfig gpus, int rank = 0);
    ~BatchSizeOptimizer();
    BatchSizeOptimizer(const BatchSizeOptimizer&) = delete;
    BatchSizeOptimizer& operator=(const BatchSizeOptimizer&) = delete;

    [[nodiscard]] const JobSpec& job() const { return job_; }
    std::int64_t get_batch_size();  // rank 0 only
    void on_train_begin();
    void on_evaluate(double metric);
    [[nodiscard]] bool training_finished() const { return training_finished_; }

private:
    std::string call(std::string_view method, const std::string& target, const std::string& body);

    EnergyMonitor& monitor_;
    std::unique_ptr<HttpClient> http_;
    JobSpec job_;
    int rank_;
    std::int64_t batch_size_ = 0;
    std::int64_t trial_number_ = 0;
    std::int64_t epoch_ = 0;
    double running_time_ = 0.0;
    double consumed_energy_ = 0.0;
    bool training_finished_ = false;
};

}  // namespace zeus::bso
