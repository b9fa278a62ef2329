// SPDX-License-Identifier: Apache-2.0
// The op families the tools know. A new family adds its line here.
#include <algorithm>

#include "kjit/error.hpp"
#include "runtime/op_tools_for.h"
#include "runtime/ops/rowwise/rowwise_family.h"
#include "runtime/ops/rowwise/rowwise_scratch.h"
#include "runtime/ops/topk/topk_family.h"
#include "runtime/ops/topk/topk_scratch.h"

namespace kjit {

const std::vector<const OpTools*>& all_op_tools() {
  static const OpToolsFor<RowwiseFamily> rowwise;
  static const OpToolsFor<TopkFamily> topk;
  static const std::vector<const OpTools*> tools = {&rowwise, &topk};
  return tools;
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
  throw Error(Status::kErrorInvalidArgument, "op '" + op + "' is not one of " + known_ops());
}

}  // namespace kjit
