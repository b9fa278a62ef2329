// SPDX-License-Identifier: Apache-2.0
// The rows each cluster of the ring kernel (ring.cuh) takes: a fixed first row, then rows claimed
// one at a time from a counter in global memory (RowParams::row_claims) by rank 0's producer and
// sent to every block of the cluster (docs/experiments/row-scheduling.md).
#pragma once

#include "cluster_inbox.cuh"
#include "row_params.cuh"

namespace kjit {

/// The rows of a cluster's sequence. Without a counter every entry j is row cluster + j *
/// clusters; with a counter (RowParams::row_claims) only the first is (row `cluster`), and the
/// entries after it are claimed by rank 0's producer (RowClaimer) and sent to every block's row
/// box. An entry past the last row reads -1.
///
/// With a counter only the first entry is fixed: claims would hand each cluster one of the first
/// `clusters` rows anyway, and the claim's round trip held up the first load; fixing more
/// entries set the clusters' shares at the start instead of at the end
/// (docs/experiments/row-scheduling.md#the-first-row-without-a-claim).
struct RowSequence {
  // Entries a block may wait on at once: its producer runs at most a ring (12 chunks, so 12
  // rows) ahead of its consumers, whose rows every block of the cluster has started.
  static constexpr int kBox = 32;
  unsigned* counter;  // {rows claimed past the first `clusters`, clusters done claiming}; or null
  long long rows;
  long long cluster;
  unsigned clusters;
  unsigned rank;
  long long* box;       // [kBox], this block's
  ClusterInbox* inbox;  // [kBox], this block's

  __device__ __forceinline__ long long fixed_row(long long j) const {
    const long long row = cluster + j * clusters;
    return row < rows ? row : -1;
  }
  /// Whether this cluster claims entries: with a counter, when its first row is a row.
  __device__ __forceinline__ bool claims() const { return counter != nullptr && cluster < rows; }
  /// The clusters that claim: those with a first row.
  __device__ __forceinline__ unsigned claiming_clusters() const {
    return static_cast<unsigned>(rows < clusters ? rows : clusters);
  }
  /// Entry j (waits for it to arrive when it is claimed).
  __device__ __forceinline__ long long row(long long j) const {
    if (counter == nullptr || j == 0) return fixed_row(j);
    if (!claims()) return -1;
    const long long claimed = j - 1;
    const int e = static_cast<int>(claimed % kBox);
    inbox[e].wait(static_cast<unsigned>((claimed / kBox) & 1));
    return box[e];
  }
};

/// Rank 0's producer's claims: each entry after the first takes the next row from the
/// counter and is sent to every block of the cluster; once the rows run out, one end mark for
/// each consumer group. A row is claimed only when the ring has room for it, so that the last
/// rows go to the clusters that are ahead; asking the counter an entry early, so that its round
/// trip overlapped the ring's work, lost that.
template <int Cluster, int Groups>
struct RowClaimer {
  const RowSequence& sequence;
  bool claiming;  // this block claims for its cluster
  long long sent = 0;

  __device__ __forceinline__ explicit RowClaimer(const RowSequence& s)
      : sequence(s), claiming(s.rank == 0 && s.claims()) {}

  /// Claims and sends entries up to j.
  __device__ __forceinline__ void claim_through(long long j) {
    if (!claiming) return;
    while (sent >= 0 && sent < j) {  // entries 1 to j; entry 0 is fixed
      const long long row = static_cast<long long>(sequence.clusters) + atomicAdd(sequence.counter, 1u);
      if (row < sequence.rows) {
        send(sent++, row);
        continue;
      }
      for (int k = 0; k < Groups; ++k) send(sent++, -1);
      sent = -1;  // done claiming
    }
  }

  /// After the producer's last store: the last cluster done claiming sets the counters back for
  /// the next launch, since every claiming cluster has then claimed for the last time.
  __device__ __forceinline__ void finish() const {
    if (!claiming) return;
    if (atomicAdd(sequence.counter + 1, 1u) == sequence.claiming_clusters() - 1) {
      atomicExch(sequence.counter, 0u);
      atomicExch(sequence.counter + 1, 0u);
    }
  }

 private:
  __device__ __forceinline__ void send(long long claimed, long long row) const {
    const int e = static_cast<int>(claimed % RowSequence::kBox);
    if constexpr (Cluster == 1) {
      // No cluster to address (a launch without one may not use cluster instructions).
      sequence.box[e] = row;
      arrive_local(sequence.inbox[e]);
    } else {
      float2 bits;  // the row's 8 bytes, as st.async sends them
      bits.x = __int_as_float(static_cast<int>(row & 0xffffffffLL));
      bits.y = __int_as_float(static_cast<int>(row >> 32));
      for (unsigned peer = 0; peer < Cluster; ++peer) {
        announce_bytes(sequence.inbox[e], peer, sizeof(long long));
        send_8_bytes(reinterpret_cast<const float2*>(sequence.box), e, peer, bits, sequence.inbox[e]);
      }
    }
  }
};

}  // namespace kjit
