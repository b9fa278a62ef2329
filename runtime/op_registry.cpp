// SPDX-License-Identifier: Apache-2.0
// The op families the tools know: each registers itself (KJIT_REGISTER_OP_FAMILY) from its
// entry-point file under runtime/ops/<family>/.
#include <algorithm>
#include <mutex>

#include "kjit/error.hpp"
#include "runtime/op_tools.h"
#include "runtime/ops/call_fields.h"

namespace kjit {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<const OpTools*> tools;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void register_op_tools(const OpTools& tools) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.tools.push_back(&tools);
  std::sort(r.tools.begin(), r.tools.end(),
            [](const OpTools* a, const OpTools* b) { return a->name() < b->name(); });
}

std::vector<const OpTools*> all_op_tools() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.tools;
}

std::string known_ops() {
  std::string names;
  for (const OpTools* tools : all_op_tools())
    for (const std::string& op : tools->ops()) names += (names.empty() ? "" : ", ") + op;
  return names;
}

const OpTools& op_tools(const std::string& op) {
  for (const OpTools* tools : all_op_tools()) {
    const std::vector<std::string> ops = tools->ops();
    if (std::find(ops.begin(), ops.end(), op) != ops.end()) return *tools;
  }
  throw Error(Status::kErrorInvalidArgument, "op " + quoted_text(op) + " is not one of " + known_ops());
}

}  // namespace kjit
