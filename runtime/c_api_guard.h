// SPDX-License-Identifier: Apache-2.0
// What every C API entry point shares: exceptions turned into kjit_status codes, with the message
// kept per thread for kjit_last_error().
#pragma once

#include <cstring>
#include <new>
#include <string>

#include "kjit/error.hpp"
#include "kjit/kjit.h"
#include "kjit/runtime.hpp"

struct kjit_runtime {
  kjit::Runtime runtime;
};

namespace kjit::c_api {

/// This thread's last error message (kjit_last_error's text).
std::string& last_error();

/// Runs `body`; an exception becomes its status, and its message the thread's last error.
template <typename Body>
kjit_status guarded(Body&& body) noexcept {
  try {
    body();
    last_error().clear();
    return KJIT_SUCCESS;
  } catch (const Error& e) {
    last_error() = e.what();
    return static_cast<kjit_status>(e.status());
  } catch (const std::bad_alloc&) {
    last_error() = "out of host memory";
    return KJIT_ERROR_OUT_OF_RESOURCES;
  } catch (const std::exception& e) {
    last_error() = std::string("internal error: ") + e.what();
    return KJIT_ERROR_INTERNAL;
  } catch (...) {
    last_error() = "internal error";
    return KJIT_ERROR_INTERNAL;
  }
}

/// A C enum field as the int a C caller may have stored there: loading a value no enumerator
/// covers through the enum type is undefined behaviour in C++, so it is read as an int.
template <typename CEnum>
int enum_value(const CEnum& field) noexcept {
  int raw = 0;
  static_assert(sizeof raw == sizeof field, "C enums are int-sized");
  std::memcpy(&raw, &field, sizeof raw);
  return raw;
}

/// The runtime behind a handle; throws Error(kErrorInvalidArgument) for null.
inline Runtime& runtime_of(kjit_runtime* rt) {
  if (rt == nullptr) throw Error(Status::kErrorInvalidArgument, "rt is null");
  return rt->runtime;
}

}  // namespace kjit::c_api
