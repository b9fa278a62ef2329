// SPDX-License-Identifier: Apache-2.0
#include "support/device_buffer.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>

#include "kjit/error.hpp"
#include "runtime/driver/context.h"

namespace kjit::test {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  current_or_primary_context();
  memory_ = allocate_device(bytes == 0 ? 1 : bytes);
}

void* DeviceBuffer::pointer(std::size_t byte_offset) const noexcept {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address() + byte_offset));
}

void DeviceBuffer::check_range(std::size_t bytes, std::size_t byte_offset, const char* what) const {
  if (byte_offset > bytes_ || bytes > bytes_ - byte_offset)
    throw std::out_of_range(std::string("DeviceBuffer::") + what + ": range past the end");
}

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t byte_offset) {
  check_range(bytes, byte_offset, "upload");
  if (bytes == 0) return;
  current_or_primary_context();
  KJIT_CU(cuMemcpyHtoD, address() + byte_offset, host, bytes);
  // From pageable memory the copy may return before its DMA lands, and it runs on the legacy
  // stream, which kjit's non-blocking streams do not wait for: finish it here.
  KJIT_CU(cuStreamSynchronize, nullptr);
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t byte_offset) const {
  check_range(bytes, byte_offset, "download");
  if (bytes == 0) return;
  current_or_primary_context();
  KJIT_CU(cuMemcpyDtoH, host, address() + byte_offset, bytes);
}

std::vector<unsigned char> DeviceBuffer::download_all() const {
  std::vector<unsigned char> host(bytes_);
  download(host.data(), host.size());
  return host;
}

void DeviceBuffer::fill_async(unsigned char byte, CUstream stream) {
  current_or_primary_context();
  KJIT_CU(cuMemsetD8Async, address(), byte, bytes_ == 0 ? 1 : bytes_, stream);
}

void DeviceBuffer::fill(unsigned char byte) {
  fill_async(byte, nullptr);
  synchronize(nullptr);
}

void synchronize(CUstream stream) { KJIT_CU(cuStreamSynchronize, stream); }

namespace {

struct GpuProbe {
  bool available = false;
  std::string why;
};

GpuProbe probe_gpu() {
  GpuProbe probe;
  if (!driver_available()) {
    // cuda() remembers why loading failed and throws it; that message is the reason to show.
    try {
      cuda();
      probe.why = "the CUDA driver is unavailable";
    } catch (const Error& error) {
      probe.why = error.what();
    }
    return probe;
  }
  try {
    int count = 0;
    KJIT_CU(cuDeviceGetCount, &count);
    if (count == 0) {
      probe.why = "the CUDA driver reports 0 devices";
      return probe;
    }
    current_or_primary_context();
    probe.available = true;
  } catch (const Error& error) {
    probe.why = error.what();
  }
  return probe;
}

}  // namespace

bool gpu_available(std::string* why) {
  static const GpuProbe probe = probe_gpu();
  if (why != nullptr) *why = probe.why;
  return probe.available;
}

void report_gpu_skip(const std::string& why) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) MESSAGE("GPU tests SKIPPED: " << why);
}

void report_case_skip(const std::string& why) {
  // In a run of the whole suite the skip message would make ctest report every case skipped,
  // failures included.
  REQUIRE_MESSAGE(doctest::getContextOptions()->no_skip,
                  "a case that can skip must be marked doctest::skip() and run in a ctest entry of its own");
  MESSAGE("GPU tests SKIPPED: " << why);
}

}  // namespace kjit::test
