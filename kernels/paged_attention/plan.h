// How a ragged batch's decode is split over the SMs: one chunk length for the whole batch, each sequence
// split into ceil(len / chunk) chunks, each chunk of each (sequence, kv head, row block) a block. A pure
// function of the lengths (host copy) and the GPU's resident block slots, so the CPU tests check it.
//
// Why one chunk length: a bandwidth-bound decode finishes when its most loaded SM does. Over `slots`
// resident blocks the keys to read are W = units_per_seq x sum(len), so no schedule beats W / slots a slot;
// the blocks of a full chunk C come in waves of `slots`, so ceil(full blocks / slots) x C bounds it too (exact
// when every sequence has one length); and no block is cut below its chunk. The plan estimates a chunk's
// makespan as the largest of the three. Shorter chunks add partial outputs to write and combine, so it takes
// the longest chunk within kMakespanSlack of the best estimate: a batch that fills the GPU keeps whole
// sequences (no combine), a long sequence among short ones is cut to about a slot's share, and a single
// sequence is cut to fill one wave (decode_splitk's choice at the same shape). Candidates are the tile times
// powers of two from min_chunk_keys up, and the longest sequence whole.
#pragma once

#include <cstdint>

namespace sb::paged_attention {

inline constexpr double kMakespanSlack = 1.05;

struct SplitPlan {
  int64_t chunk_keys = 0;   // keys a split block reads at most: a multiple of the tile (a power-of-2 multiple
                            // unless forced), or the longest sequence rounded up to the tile for no split
  int64_t max_splits = 1;   // splits of the longest sequence: the grid's split dimension
  int64_t blocks = 0;       // non-empty split blocks: units_per_seq x sum over sequences of ceil(len / chunk)
};

// lens: the batch's `batch` KV lengths (each >= 1; Problem::seq_lens_host, read in place: the plan runs on every
// launch and allocates nothing); units_per_seq: blocks a sequence needs per chunk (kv heads x
// row blocks); tile_keys: the kernel's key tile (chunks are multiples of it); slots: resident split blocks
// on the GPU (SMs x blocks an SM); min_chunk_keys: no chunk shorter (except a whole sequence shorter than
// it); forced_splits > 0: the longest sequence in that many chunks (the bench's split sweep), else the
// makespan rule above. Throws std::invalid_argument for an empty batch, a length < 1 or a non-positive size.
SplitPlan plan_splits(const int32_t* lens, int64_t batch, int64_t units_per_seq, int64_t tile_keys, int64_t slots,
                      int64_t min_chunk_keys, int64_t forced_splits = 0);

}  // namespace sb::paged_attention
