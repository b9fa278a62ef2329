// SPDX-License-Identifier: Apache-2.0
// Device memory for the GPU suites, owned through kjit's own driver handles, and the rule that
// lets those suites pass (visibly skipped) on a machine without a GPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/driver/handles.h"

namespace kjit::test {

/// A move-only block of device memory in the calling thread's context (device 0's primary
/// context when the thread has none, as kjit itself does).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (at least one byte is always allocated, so the address is never 0).
  explicit DeviceBuffer(std::size_t bytes);

  /// The device address.
  CUdeviceptr address() const noexcept { return memory_.get(); }
  /// The device address as a pointer, at a byte offset (for kjit's void* arguments).
  void* pointer(std::size_t byte_offset = 0) const noexcept;
  std::size_t bytes() const noexcept { return bytes_; }

  /// Copies host memory in at `byte_offset`; when it returns, the data is on the device and
  /// visible to work on any stream.
  void upload(const void* host, std::size_t bytes, std::size_t byte_offset = 0);
  template <typename T>
  void upload(const std::vector<T>& host, std::size_t byte_offset = 0) {
    upload(host.data(), host.size() * sizeof(T), byte_offset);
  }

  /// Copies device memory out. Work on other streams that writes the buffer must have been
  /// synchronized first.
  void download(void* host, std::size_t bytes, std::size_t byte_offset = 0) const;
  /// The whole buffer as bytes.
  std::vector<unsigned char> download_all() const;

  /// Sets every byte to `byte` on `stream` (ordered with later work on that stream).
  void fill_async(unsigned char byte, CUstream stream);
  /// Sets every byte to `byte` and waits for it.
  void fill(unsigned char byte);

 private:
  void check_range(std::size_t bytes, std::size_t byte_offset, const char* what) const;

  DeviceMemory memory_;
  std::size_t bytes_ = 0;
};

/// True when a driver loads and at least one device is usable; otherwise false with the reason
/// in `*why` (when not null). Answered once per process.
bool gpu_available(std::string* why);

/// Reports a skipped GPU test: prints "GPU tests SKIPPED: <reason>" the first time in a process.
void report_gpu_skip(const std::string& why);

/// Reports that a case that needs more than a GPU (sm_90, free memory) skips, as "GPU tests
/// SKIPPED: <reason>". Such a case is marked doctest::skip() and runs only in a ctest entry of
/// its own (tests/gpu/CMakeLists.txt passes --no-skip), so ctest shows the entry as skipped
/// without hiding other cases' results; elsewhere this fails the case instead.
void report_case_skip(const std::string& why);

/// Waits for all work on `stream`.
void synchronize(CUstream stream);

}  // namespace kjit::test

/// First statement of a GPU test case: without a usable GPU it reports the skip and returns, so
/// the run still ends green but says plainly that nothing was tested.
#define KJIT_REQUIRE_GPU()                                   \
  do {                                                       \
    std::string kjit_gpu_skip_reason_;                       \
    if (!::kjit::test::gpu_available(&kjit_gpu_skip_reason_)) { \
      ::kjit::test::report_gpu_skip(kjit_gpu_skip_reason_);  \
      return;                                                \
    }                                                        \
  } while (false)

/// Skips the rest of a case that needs more than a GPU, reporting `why` (report_case_skip).
#define KJIT_SKIP_GPU_CASE(why)                 \
  do {                                          \
    ::kjit::test::report_case_skip(why);        \
    return;                                     \
  } while (false)
