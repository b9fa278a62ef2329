// SPDX-License-Identifier: Apache-2.0
#include "kjit/error.hpp"

namespace kjit {

const char* to_string(Status status) noexcept {
  switch (status) {
    case Status::kSuccess: return "success";
    case Status::kErrorInvalidArgument: return "invalid_argument";
    case Status::kErrorNoDriver: return "no_driver";
    case Status::kErrorDriver: return "driver";
    case Status::kErrorCompile: return "compile";
    case Status::kErrorLoad: return "load";
    case Status::kErrorLaunch: return "launch";
    case Status::kErrorOutOfResources: return "out_of_resources";
    case Status::kErrorInvalidConfig: return "invalid_config";
    case Status::kErrorCacheIo: return "cache_io";
    case Status::kErrorNotFound: return "not_found";
    case Status::kErrorInternal: return "internal";
  }
  return "unknown";
}

static std::string with_detail(const std::string& message, const std::string& detail) {
  return detail.empty() ? message : message + "\n" + detail;
}

Error::Error(Status status, const std::string& message, std::string detail)
    : std::runtime_error(with_detail(message, detail)), status_(status), detail_(std::move(detail)) {}

}  // namespace kjit
