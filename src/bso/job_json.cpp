#include "bso/job_json.hpp"

namespace zeus::bso {

using nlohmann::json;

json job_spec_json(const JobSpec& s) {
    return json{{"job_id", s.job_id ? json(*s.job_id) : json(nullptr)},
                {"job_id_prefix", s.job_id_prefix},
                {"batch_sizes", s.batch_sizes},
                {"default_batch_size", s.default_batch_size},
                {"eta_knob", s.eta_knob},
                {"beta_knob", s.beta_knob ? json(*s.beta_knob) : json(nullptr)},
                {"target_metric", s.target_metric},
                {"higher_is_better_metric", s.higher_is_better_metric},
                {"max_epochs", s.max_epochs},
                {"num_pruning_rounds", s.num_pruning_rounds},
                {"window_size", s.window_size},
                {"mab_prior_mean", s.mab_prior_mean},
                {"mab_prior_precision", s.mab_prior_precision},
                {"mab_num_explorations", s.mab_num_explorations},
                {"mab_seed", s.mab_seed ? json(*s.mab_seed) : json(nullptr)},
                {"max_power", s.max_power},
                {"number_of_gpus", s.number_of_gpus},
                {"gpu_model", s.gpu_model}};
}

}  // namespace zeus::bso
