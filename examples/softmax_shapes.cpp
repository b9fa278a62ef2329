// SPDX-License-Identifier: Apache-2.0
// Calls kjit's softmax on shapes chosen at run time and checks every row against a host
// reference. Uses only the public API plus the CUDA driver, loaded at run time like kjit does.
// Exit code: 0 all good, 1 a wrong result, 2 kjit refused, 77 no GPU (nothing to check).
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <kjit/kjit.h>
#include <kjit/kjit.hpp>

namespace {

// The few driver calls this example needs, from libcuda.so.1.
struct Driver {
  int (*init)(unsigned) = nullptr;
  int (*retain_primary)(void**, int) = nullptr;
  int (*set_current)(void*) = nullptr;
  int (*mem_alloc)(std::uint64_t*, std::size_t) = nullptr;
  int (*htod)(std::uint64_t, const void*, std::size_t) = nullptr;
  int (*dtoh)(void*, std::uint64_t, std::size_t) = nullptr;

  bool load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) return false;
    init = reinterpret_cast<decltype(init)>(dlsym(lib, "cuInit"));
    retain_primary = reinterpret_cast<decltype(retain_primary)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
    set_current = reinterpret_cast<decltype(set_current)>(dlsym(lib, "cuCtxSetCurrent"));
    mem_alloc = reinterpret_cast<decltype(mem_alloc)>(dlsym(lib, "cuMemAlloc_v2"));
    htod = reinterpret_cast<decltype(htod)>(dlsym(lib, "cuMemcpyHtoD_v2"));
    dtoh = reinterpret_cast<decltype(dtoh)>(dlsym(lib, "cuMemcpyDtoH_v2"));
    if (!init || !retain_primary || !set_current || !mem_alloc || !htod || !dtoh) return false;
    // Device 0's primary context, the one kjit (and the CUDA runtime) would use too.
    void* context = nullptr;
    return init(0) == 0 && retain_primary(&context, 0) == 0 && set_current(context) == 0;
  }
};

bool check_rows(const std::vector<float>& x, const std::vector<float>& y, std::int64_t cols) {
  for (std::size_t row = 0; row < x.size() / cols; ++row) {
    double max = -INFINITY, sum = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) max = std::fmax(max, x[row * cols + c]);
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(x[row * cols + c] - max);
    for (std::int64_t c = 0; c < cols; ++c) {
      const double ref = std::exp(x[row * cols + c] - max) / sum;
      if (std::fabs(y[row * cols + c] - ref) > 1e-6 + 1e-5 * ref) return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kjit::Runtime runtime;  // compiles nothing yet: kernels are made on first use of a shape
  Driver driver;
  const unsigned seed = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : std::random_device{}();
  std::mt19937 rng(seed);
  try {
    for (int trial = 0; trial < 4; ++trial) {
      const std::int64_t rows = 1 + rng() % 64, cols = 1 + rng() % 5000;
      std::vector<float> x(rows * cols), y(rows * cols);
      std::normal_distribution<float> normal(0.0f, 4.0f);
      for (float& v : x) v = normal(rng);
      if (trial == 0 && !driver.load()) {
        runtime.softmax({nullptr, cols, nullptr, cols, 0, cols});  // rows = 0: a no-op
        std::printf("no CUDA driver here: linked and ran kjit, nothing to check on a GPU\n");
        return 77;
      }
      std::uint64_t in = 0, out = 0;
      if (driver.mem_alloc(&in, x.size() * 4) || driver.mem_alloc(&out, y.size() * 4)) return 2;
      driver.htod(in, x.data(), x.size() * 4);
      runtime.softmax({reinterpret_cast<const void*>(in), cols, reinterpret_cast<void*>(out), cols,
                       rows, cols});
      driver.dtoh(y.data(), out, y.size() * 4);  // synchronous: waits for the kernel
      const bool ok = check_rows(x, y, cols);
      std::printf("softmax %lldx%lld: %s\n", static_cast<long long>(rows),
                  static_cast<long long>(cols), ok ? "ok" : "WRONG");
      if (!ok) return 1;
    }
  } catch (const kjit::Error& e) {
    std::fprintf(stderr, "kjit: %s\n", e.what());
    return e.status() == kjit::Status::kErrorNoDriver ? 77 : 2;
  }
  return 0;
}
