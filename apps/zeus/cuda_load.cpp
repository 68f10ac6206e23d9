#include "cuda_load.hpp"

#include <fmt/format.h>

#include <mutex>
#include <thread>

#include "zeus/platform/dynamic_library.hpp"

namespace zeus::cli {
namespace {

// Our own declarations of the few CUDA driver API entry points used (stable C ABI).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;

struct CudaDriver {
    CUresult (*init)(unsigned) = nullptr;
    CUresult (*device_get)(CUdevice*, int) = nullptr;
    CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice) = nullptr;
    CUresult (*ctx_destroy)(CUcontext) = nullptr;
    CUresult (*ctx_synchronize)() = nullptr;
    CUresult (*mem_alloc)(CUdeviceptr*, std::size_t) = nullptr;
    CUresult (*mem_free)(CUdeviceptr) = nullptr;
    CUresult (*memset_d32)(CUdeviceptr, unsigned, std::size_t) = nullptr;
};

constexpr std::size_t kBufferBytes = std::size_t{1} << 30;  // 1 GiB: fits every GPU Zeus supports

Status load_one(const CudaDriver& cu, unsigned ordinal, std::chrono::duration<double> duration) {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUdeviceptr buffer = 0;
    auto fail = [&](const char* what, CUresult rc) {
        return Error{ErrorCode::Unknown, fmt::format("CUDA {} failed on device {} (CUresult {})", what, ordinal, rc),
                     "check that the GPU is not in exclusive use by another process", rc};
    };
    if (CUresult rc = cu.device_get(&dev, static_cast<int>(ordinal)); rc != 0) return fail("cuDeviceGet", rc);
    if (CUresult rc = cu.ctx_create(&ctx, 0, dev); rc != 0) return fail("cuCtxCreate", rc);
    Status result;
    if (CUresult rc = cu.mem_alloc(&buffer, kBufferBytes); rc != 0) {
        result = fail("cuMemAlloc", rc);
    } else {
        const auto end = std::chrono::steady_clock::now() + duration;
        unsigned value = 0;
        while (std::chrono::steady_clock::now() < end) {
            for (int i = 0; i < 16; ++i) cu.memset_d32(buffer, ++value, kBufferBytes / 4);
            if (CUresult sync_rc = cu.ctx_synchronize(); sync_rc != 0) {
                result = fail("cuCtxSynchronize", sync_rc);
                break;
            }
        }
        cu.mem_free(buffer);
    }
    cu.ctx_destroy(ctx);
    return result;
}

}  // namespace

Status run_cuda_memset_load(const std::vector<unsigned>& devices, std::chrono::duration<double> duration) {
    auto lib = DynamicLibrary::open("libcuda.so.1");
    if (!lib) {
        Error e = lib.error();
        e.hint = "the CUDA driver library ships with the NVIDIA driver; without it the demo has no GPU load";
        return e;
    }
    CudaDriver cu;
    cu.init = lib->function<decltype(cu.init)>("cuInit");
    cu.device_get = lib->function<decltype(cu.device_get)>("cuDeviceGet");
    cu.ctx_create = lib->function<decltype(cu.ctx_create)>("cuCtxCreate_v2");
    cu.ctx_destroy = lib->function<decltype(cu.ctx_destroy)>("cuCtxDestroy_v2");
    cu.ctx_synchronize = lib->function<decltype(cu.ctx_synchronize)>("cuCtxSynchronize");
    cu.mem_alloc = lib->function<decltype(cu.mem_alloc)>("cuMemAlloc_v2");
    cu.mem_free = lib->function<decltype(cu.mem_free)>("cuMemFree_v2");
    cu.memset_d32 = lib->function<decltype(cu.memset_d32)>("cuMemsetD32_v2");
    if (!cu.init || !cu.device_get || !cu.ctx_create || !cu.ctx_destroy || !cu.ctx_synchronize || !cu.mem_alloc ||
        !cu.mem_free || !cu.memset_d32) {
        return Error{ErrorCode::FunctionNotFound, "libcuda.so.1 lacks a CUDA driver API function the demo needs",
                     "update the NVIDIA driver", 0};
    }
    if (CUresult rc = cu.init(0); rc != 0) {
        return Error{ErrorCode::Unknown, fmt::format("cuInit failed (CUresult {})", rc),
                     "check `nvidia-smi`; CUDA_VISIBLE_DEVICES may hide every GPU", rc};
    }
    std::mutex mutex;
    Status first_error;
    std::vector<std::thread> threads;
    for (unsigned ordinal : devices) {
        threads.emplace_back([&, ordinal] {
            Status s = load_one(cu, ordinal, duration);
            std::lock_guard lock(mutex);
            if (!s && first_error) first_error = s;
        });
    }
    for (auto& t : threads) t.join();
    return first_error;
}

}  // namespace zeus::cli
