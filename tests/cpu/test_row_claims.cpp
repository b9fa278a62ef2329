// SPDX-License-Identifier: Apache-2.0
// Which row-claim counter each ring launch takes (runtime/launch/row_claims.h): no two streams, and no
// two captured launches, ever share one.
#include <doctest/doctest.h>

#include <set>

#include "runtime/launch/row_claims.h"

using namespace kjit;

TEST_CASE("a stream takes its own counters in turn") {
  ClaimSlots slots(64);
  std::set<int> first_stream;
  for (int launch = 0; launch < 2 * ClaimSlots::kPerStream; ++launch) first_stream.insert(slots.next(7));
  CHECK(first_stream.size() == ClaimSlots::kPerStream);
  const int turn_a = slots.next(7);
  const int turn_b = slots.next(7);
  CHECK(turn_b == turn_a + 1);  // a full round later, the same order
  for (int launch = 0; launch < 2 * ClaimSlots::kPerStream; ++launch) CHECK(first_stream.count(slots.next(8)) == 0);
}

TEST_CASE("every captured launch takes a counter no stream and no other capture has") {
  ClaimSlots slots(64);
  std::set<int> taken;
  for (int launch = 0; launch < ClaimSlots::kPerStream; ++launch) taken.insert(slots.next(7));
  for (int capture = 0; capture < 10; ++capture) CHECK(taken.insert(slots.own()).second);
  for (int launch = 0; launch < ClaimSlots::kPerStream; ++launch) CHECK(taken.insert(slots.next(8)).second);
}

TEST_CASE("once the counters run out, new streams and captures get none and old streams keep theirs") {
  ClaimSlots slots(2 * ClaimSlots::kPerStream + 1);
  CHECK(slots.next(1) >= 0);
  CHECK(slots.next(2) >= 0);
  CHECK(slots.own() >= 0);
  CHECK(slots.next(3) == -1);
  CHECK(slots.own() == -1);
  CHECK(slots.next(1) >= 0);
}
