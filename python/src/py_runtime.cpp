// SPDX-License-Identifier: Apache-2.0
// The Runtime class: construction, options, and the tools that need a GPU (prepare, tune).
#include "python/src/py_runtime.h"

#include <string>

#include <nanobind/stl/string.h>
#include <nlohmann/json.hpp>

#include "python/src/call_json.h"
#include "python/src/device_scope.h"
#include "python/src/log_forwarding.h"
#include "runtime/op_tools.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

std::string prepare(PyRuntime& self, const std::string& call_text, int device) {
  LogFlush flush;
  const nlohmann::json call = parse_call(call_text);
  nb::gil_scoped_release unlocked;  // compiling takes a while; other Python threads go on
  DeviceScope scope(device);
  return op_tools(call["op"].get<std::string>()).prepare(*self.runtime, call).dump();
}

nlohmann::ordered_json summary_json(const TuneSummary& summary) {
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const auto& c : summary.candidates)
    candidates.push_back({{"config", c.config}, {"status", c.status},
                          {"median_us", c.timing.median_us}, {"p20_us", c.timing.p20_us},
                          {"p80_us", c.timing.p80_us}, {"reused", c.reused},
                          {"winner", c.winner}, {"heuristic", c.heuristic}});
  return {{"description", summary.description}, {"device", summary.device},
          {"seconds", summary.seconds}, {"moved_bytes", summary.moved_bytes},
          {"stored", summary.stored}, {"candidates", std::move(candidates)}};
}

std::string tune(PyRuntime& self, const std::string& call_text, int device, bool save,
                 bool reuse_record) {
  LogFlush flush;
  const nlohmann::json call = parse_call(call_text);
  nb::gil_scoped_release unlocked;
  DeviceScope scope(device);
  TuneRequest request;
  request.reuse_record = reuse_record;
  request.save = save;
  const TuneSummary summary = op_tools(call["op"].get<std::string>()).tune(*self.runtime, call, request);
  return summary_json(summary).dump();
}

}  // namespace

PyRuntime& default_runtime() {
  // Never destroyed: calls may come while the interpreter shuts down.
  static PyRuntime* runtime = new PyRuntime(RuntimeOptions::from_environment());
  return *runtime;
}

void bind_runtime(nb::module_& m) {
  nb::class_<PyRuntime> runtime(m, "Runtime",
                                "Compiled kernels of every device it served, with its options.");
  runtime.def(
      "__init__",
      [](PyRuntime* self, nb::kwargs kwargs) {
        LogFlush flush;
        new (self) PyRuntime(options_from_kwargs(kwargs));
      },
      "Runtime(**options): options not given come from the KJIT_* environment variables.");
  runtime.def_prop_ro("options", [](const PyRuntime& self) { return options_dict(self.options); },
                      "The options, as a dict Runtime(**options) takes.");
  runtime.def("_prepare", &prepare, nb::arg("call"), nb::arg("device"));
  runtime.def("_tune", &tune, nb::arg("call"), nb::arg("device"), nb::arg("save"),
              nb::arg("reuse_record"));
  bind_array_ops(runtime);
  bind_attention_op(runtime);
  m.def("default_runtime", &default_runtime, nb::rv_policy::reference,
        "The process's runtime, options from the environment, made on first use.");
}

}  // namespace kjit::python
