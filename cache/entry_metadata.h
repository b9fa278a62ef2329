// SPDX-License-Identifier: Apache-2.0
// The facts an entry records beside its payload, read once into typed fields when the entry is
// decoded. A field of the wrong type or out of range makes the whole entry bad (a miss that
// verify removes), so no reader ever meets a string where it expects a number.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kjit::cache {

/// Every field is optional: entries carry what their writer knew (a cubin compiled without a
/// ptxas report has no register count). Fields not named here are kept in the raw JSON only.
struct EntryMetadata {
  std::optional<std::string> kernel;        ///< name expression, or a tuned class's summary
  std::optional<std::string> header;        ///< kernel source file
  std::optional<std::string> lowered_name;  ///< the cubin's mangled kernel name
  std::optional<int> arch;                  ///< sm_<arch>
  std::optional<double> compile_ms;         ///< NVRTC time
  std::optional<int> registers;             ///< ptxas: registers per thread
  std::optional<int> spill_stores;          ///< ptxas: spill store bytes
  std::optional<int> spill_loads;           ///< ptxas: spill load bytes
  std::optional<int> stack_frame;           ///< ptxas: stack frame bytes
  std::optional<int> static_smem;           ///< ptxas: static shared memory bytes
  std::optional<nlohmann::json> winner;     ///< tuning records: the winning config (an object)
};

/// Reads `json` (which must be an object) into `out`. Returns "" or the first problem, e.g.
/// "\"registers\" is \"forty\", not an integer in 0..1073741824".
std::string read_metadata(const nlohmann::json& json, EntryMetadata& out);

}  // namespace kjit::cache
