// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>

namespace kjit {

/// The one error vocabulary of kjit; the C API returns these as kjit_status values.
enum class Status : int {
  kSuccess = 0,
  kErrorInvalidArgument = 1,
  kErrorNoDriver = 2,
  kErrorDriver = 3,
  kErrorCompile = 4,
  kErrorLoad = 5,
  kErrorLaunch = 6,
  kErrorOutOfResources = 7,
  kErrorInvalidConfig = 8,
  kErrorCacheIo = 9,
  kErrorNotFound = 10,
  kErrorInternal = 11,
};

/// Short stable name of a status, e.g. "invalid_argument".
const char* to_string(Status status) noexcept;

/// The one exception type thrown by kjit: a status, a message, and an optional detail
/// (the NVRTC log of a failed compile, the driver's error name, ...).
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message, std::string detail = {});

  Status status() const noexcept { return status_; }
  /// Compiler log or other long diagnostic text; empty when there is none.
  const std::string& detail() const noexcept { return detail_; }

 private:
  Status status_;
  std::string detail_;
};

}  // namespace kjit
