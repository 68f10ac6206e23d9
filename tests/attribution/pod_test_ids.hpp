// GPU, MIG, pod and container ids of the pod-naming tests (pods_test.cpp,
// kubelet_test.cpp), in the forms device plugins and cgroup paths use.
#pragma once

#include <string>

namespace zeus::attribution::test_ids {

inline const std::string kGpu0 = "GPU-0b1c2d3e-0000-4000-8000-000000000000";
inline const std::string kGpu1 = "GPU-1b1c2d3e-0000-4000-8000-000000000001";
inline const std::string kMig0 = "MIG-9f3e2d1c-0000-5000-9000-00000000000a";
inline const std::string kMig1 = "MIG-9f3e2d1c-0000-5000-9000-00000000000b";
inline const std::string kUidA = "11111111-1111-4111-8111-111111111111";
inline const std::string kUidB = "22222222-2222-4222-8222-222222222222";
inline const std::string kUidC = "33333333-3333-4333-8333-333333333333";
inline const std::string kContainer1(64, '1');
inline const std::string kContainer2(64, '2');
inline const std::string kContainer3(64, '3');

}  // namespace zeus::attribution::test_ids
