# SPDX-License-Identifier: Apache-2.0
"""How many copies of a call's buffers a timed graph cycles through, so that each launch reads
from memory rather than from the L2. Free of torch, so that shape lists can be planned without a
GPU (sweep_draw.py)."""

# Bytes of input one timed graph cycles through: more than twice the L2 of an H100 (50 MB) or an
# H200 (60 MB), so every launch reads its input from memory rather than from the cache.
WORKING_SET = 128 << 20


def rotation_sets(touched_bytes, max_sets):
    """Copies of the buffers whose touched bytes together pass WORKING_SET, at most max_sets (a
    call of a few KB would otherwise need tens of thousands of copies; it is bound by its launch,
    not by where its bytes come from)."""
    return max(1, min(max_sets, -(-WORKING_SET // max(1, touched_bytes))))
