// SPDX-License-Identifier: Apache-2.0
#include "python/src/log_forwarding.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/log.h"

namespace nb = nanobind;

namespace kjit::python {

std::atomic<bool> log_lines_pending{false};

namespace {

std::mutex queue_mutex;
std::vector<std::pair<int, std::string>> queued;
nb::object* handler = nullptr;  // guarded by the GIL; never freed (may be used at exit)

void queue_line(int level, const char* message, void*) {
  std::lock_guard<std::mutex> guard(queue_mutex);
  queued.emplace_back(level, message);
  log_lines_pending.store(true, std::memory_order_relaxed);
}

void set_handler(nb::object callable) {
  if (handler == nullptr) handler = new nb::object();
  if (callable.is_none()) {
    set_log_callback(nullptr, nullptr);
    flush_log_lines();  // what was queued still goes to the old handler
    *handler = nb::none();
    return;
  }
  *handler = std::move(callable);
  set_log_callback(queue_line, nullptr);
}

}  // namespace

void flush_log_lines() noexcept {
  // A pending Python error must not meet a call into Python; the lines wait for the next call.
  if (PyErr_Occurred() != nullptr) return;
  std::vector<std::pair<int, std::string>> lines;
  {
    std::lock_guard<std::mutex> guard(queue_mutex);
    lines.swap(queued);
    log_lines_pending.store(false, std::memory_order_relaxed);
  }
  if (handler == nullptr || handler->is_none()) return;
  for (const auto& [level, text] : lines) {
    try {
      (*handler)(level, nb::str(text.c_str(), text.size()));
    } catch (nb::python_error& error) {
      error.discard_as_unraisable("kjit log handler");
    } catch (...) {
      // A failing log handler must never fail the call that logged.
    }
  }
}

void bind_log_forwarding(nb::module_& m) {
  m.def("_set_log_handler", &set_handler, nb::arg("handler").none(),
        "handler(level, message): spdlog level 0 (trace) .. 5 (critical); None: back to stderr");
  m.def("_flush_log", [] { flush_log_lines(); });
}

}  // namespace kjit::python
