// SPDX-License-Identifier: Apache-2.0
// kjit's log lines into Python's logging. Lines from any thread are queued and handed to the
// Python handler (kjit/_logging.py) by the thread that holds the GIL at the end of a kjit call,
// so no kjit thread (a compile worker, say) ever waits for the GIL.
#pragma once

#include <atomic>

#include <nanobind/nanobind.h>

namespace kjit::python {

/// Adds _set_log_handler(handler or None) and _flush_log().
void bind_log_forwarding(nanobind::module_& m);

/// Hands the queued lines to the handler; call with the GIL held.
void flush_log_lines() noexcept;

/// True while lines wait (one relaxed load: cheap enough for every call).
extern std::atomic<bool> log_lines_pending;

/// Declared first in a binding, so the lines the call made reach Python when it returns.
struct LogFlush {
  LogFlush() = default;
  LogFlush(const LogFlush&) = delete;
  LogFlush& operator=(const LogFlush&) = delete;
  ~LogFlush() {
    if (log_lines_pending.load(std::memory_order_relaxed)) flush_log_lines();
  }
};

}  // namespace kjit::python
