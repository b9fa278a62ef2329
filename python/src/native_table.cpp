// SPDX-License-Identifier: Apache-2.0
// The launch table kjit._torch_ops calls (native_api.h). Its C++ kernels run without the GIL
// (torch releases it around an op); the GIL is taken only when a call failed or queued log
// lines, to hand them to Python. No exception crosses the table: the other side is another
// shared object, built against another copy of the C++ runtime's headers.
#include "python/src/native_table.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>

#include "kjit/error.hpp"

#include "python/src/errors.h"
#include "python/src/log_forwarding.h"
#include "python/src/native_api.h"
#include "python/src/raw_launch.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

/// Runs `call`; hands its log lines, then its error (as the current Python exception), to
/// Python. Returns 0 or the error's status.
template <typename Call>
int guarded(Call&& call) noexcept {
  std::optional<Error> failure;
  try {
    call();
  } catch (const Error& error) {
    failure = error;
  } catch (const std::exception& error) {
    failure.emplace(Status::kErrorInternal, error.what());
  } catch (...) {
    failure.emplace(Status::kErrorInternal, "an unknown C++ exception");
  }
  if (!failure && !log_lines_pending.load(std::memory_order_relaxed)) return 0;
  nb::gil_scoped_acquire gil;
  flush_log_lines();
  if (!failure) return 0;
  try {
    set_python_error(*failure);
  } catch (nb::python_error& unset) {
    unset.restore();  // the exception class itself failed: report that instead
  }
  return static_cast<int>(failure->status());
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

int rowwise(int op, const void* in, int64_t in_row_stride, void* out, int64_t out_row_stride,
            int64_t rows, int64_t cols, int in_dtype, int out_dtype, float* scale, void* stream,
            int device) {
  return guarded([&] {
    run_rowwise(op, address(in), in_row_stride, address(out), out_row_stride, rows, cols,
                in_dtype, out_dtype, address(scale), address(stream), device);
  });
}

int softmax_topk(const void* logits, int64_t row_stride, int64_t rows, int64_t cols,
                 int in_dtype, int k, const int32_t* k_per_row, float temperature,
                 unsigned flags, float* probs, void* indices, int index_dtype, void* stream,
                 int device) {
  return guarded([&] {
    run_topk(address(logits), row_stride, rows, cols, in_dtype, k, address(k_per_row),
             temperature, flags, address(probs), address(indices), index_dtype, address(stream),
             device);
  });
}

const kjit_native_api table{sizeof(kjit_native_api), &rowwise, &softmax_topk};

}  // namespace

void bind_native_table(nb::module_& m) {
  m.def("_native_api", [] {
    return nb::capsule(static_cast<const void*>(&table), KJIT_NATIVE_API_CAPSULE);
  }, "the launch table of kjit._torch_ops (python/src/native_api.h)");
}

}  // namespace kjit::python
