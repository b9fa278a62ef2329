// SPDX-License-Identifier: Apache-2.0
// The one interface every op family provides. The dispatcher (runtime/dispatch), the tuner and
// the tuning records (autotune/) and the CLI are written once over it, so a new op is a folder
// under runtime/ops/, its kernel source and its public entry points (ARCHITECTURE.md, "Adding an
// op").
//
// A family is a struct of types and static functions (checked by check_op_family below):
//
//   using Call     one call's arguments as the runtime received them (pointers, strides, ...)
//   using Problem  what decides the kernel: dtypes, sizes, alignment; has `std::int64_t rows`
//   using Key      the dispatch-table and tuning class: Problem with rows (and k) bucketed
//   using KeyHash  hash of Key
//   using Config   one point of the configuration space: ==, to_string, to_json, from_json
//   using Scratch  device buffers the tuner runs candidates on (autotune/tuner.h says what)
//   kName                      the family's name in tuning logs, e.g. "rowwise"
//   validate(Call)             -> Problem; names the bad argument in an Error, launches nothing
//   key_of(Problem)            -> Key
//   planned(Problem)           -> Problem every call of its class is planned for
//   key_fields(Key)            -> ordered JSON fields of the class (part of the tuning key)
//   describe(Problem)          -> JSON fields that describe a problem (op, dtypes, sizes)
//   moved_bytes(Problem)       -> bytes one call reads and writes at least (for GB/s)
//   tunes_alignment(Problem)   -> whether contiguous, aligned scratch buffers speak for it
//   can_implement(Problem, DeviceProps, Config) -> Verdict
//   complete(Problem, DeviceProps, Config partial) -> Config (zero fields chosen)
//   pick(Problem, DeviceProps) -> Config (the heuristics)
//   candidates(Problem, DeviceProps) -> std::vector<Config>, the pick first
//   reference(Problem)         -> Config every candidate's output is checked against
//   kernel_spec(Problem, Config)                    -> KernelSpec
//   launch_shape(Problem, Config, DeviceProps)      -> LaunchShape
//   bind(Launchable&, Config, ContextResources&)    attaches per-context launch resources
//   launch(Launchable, Call, CUstream)              no allocation, no synchronization
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kjit/error.hpp"
#include "runtime/driver/context.h"

namespace kjit {

/// Whether a config can run a problem (CUTLASS's can_implement): kSuccess, or
/// kErrorInvalidConfig with the reason.
struct Verdict {
  Status status = Status::kSuccess;
  std::string reason;

  static Verdict ok() { return {}; }
  static Verdict refuse(std::string why) { return {Status::kErrorInvalidConfig, std::move(why)}; }
  /// The verdict of a "why not" text: empty means it can.
  static Verdict from_reason(std::string why) {
    return why.empty() ? ok() : refuse(std::move(why));
  }
  explicit operator bool() const noexcept { return status == Status::kSuccess; }
};

/// Compile-time check that `Family` provides the interface above; every template written over
/// a family instantiates it, so a missing piece fails with this message instead of deep inside.
template <typename Family>
constexpr bool check_op_family() {
  using Problem = typename Family::Problem;
  using Config = typename Family::Config;
  static_assert(std::is_same<decltype(Family::validate(std::declval<const typename Family::Call&>())),
                             Problem>::value,
                "an op family needs Problem validate(const Call&)");
  static_assert(std::is_same<decltype(Family::key_of(std::declval<const Problem&>())),
                             typename Family::Key>::value,
                "an op family needs Key key_of(const Problem&)");
  static_assert(std::is_same<decltype(Family::pick(std::declval<const Problem&>(),
                                                   std::declval<const DeviceProps&>())),
                             Config>::value,
                "an op family needs Config pick(const Problem&, const DeviceProps&)");
  static_assert(std::is_same<decltype(Family::can_implement(
                                 std::declval<const Problem&>(),
                                 std::declval<const DeviceProps&>(),
                                 std::declval<const Config&>())),
                             Verdict>::value,
                "an op family needs Verdict can_implement(const Problem&, const DeviceProps&, "
                "const Config&)");
  static_assert(std::is_same<decltype(Family::candidates(
                                 std::declval<const Problem&>(),
                                 std::declval<const DeviceProps&>())),
                             std::vector<Config>>::value,
                "an op family needs std::vector<Config> candidates(const Problem&, const "
                "DeviceProps&)");
  static_assert(std::is_same<decltype(std::declval<const Config&>().to_json()), std::string>::value,
                "a Config needs std::string to_json() const");
  static_assert(std::is_same<decltype(Config::from_json(std::declval<const std::string&>())),
                             Config>::value,
                "a Config needs static Config from_json(const std::string&)");
  return true;
}

}  // namespace kjit
