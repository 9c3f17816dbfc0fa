// LZ4 block decompression, one thread block of LZ4K_DECODE_THREADS per LZ4 block, many blocks
// in parallel. A block is a chain of sequences (literals, then a match that repeats earlier
// output), so the decoder works in batches of up to LZ4K_BATCH sequences: the threads stage the
// next LZ4K_WINDOW_BYTES of the block in shared memory with one load each; thread 0 walks the
// chain from there; then thread s checks sequence s; then the threads copy.
//
// The walk is the serial part, one thread of 32, so it does only what the next step needs: read
// the token (and the length extensions where the token has them, every read checked against the
// block's end, bytes past the window from global memory), step to the next token, add up the output
// position, store both. Thread s then reads its offset, fills in its sequence's fields and checks
// them in the order a serial parse would (truncated input, output overflow, the block's last
// sequence, zero or too-far offset, ending with a match, a match within the input margins liblz4
// keeps at a block's end); the batch stops at its lowest-numbered
// problem (an atomicMin of s << 3 | status), so the status is the one an in-order parse reports,
// and a batch with a problem copies nothing. The walk may run on past a bad sequence: its reads
// stay inside the block, lengths that run past the block end it, and what it finds there is never
// used. Its lengths are clamped (a literal run to the block's size + 1, a match to 2^32 - 1) so
// that 32-bit sums only wrap past a sequence that fails.
//
// Copies are by sequence, not by byte: thread s copies sequence s on its own, its literals and
// then its match, a few bytes at a time with all loads before all stores (the compiler cannot
// prove that the pointers differ, so a plain loop would wait out each load before its store).
// A sequence may read output of earlier sequences only once they are written, so the batch is cut
// into epochs, each behind a barrier: a new epoch starts at a sequence whose match source overlaps
// the output of an earlier sequence of the current epoch. Thread s finds the latest earlier
// sequence its match reads (a binary search over the batch's output positions); while the threads
// copy epoch e they find where epoch e + 1 ends (the first sequence that reads one of e + 1's),
// so no thread walks the batch again. A source in the sequence's own literals or its own match
// (overlapping matches repeat the `offset` bytes before them) needs no barrier, as the same thread
// wrote it. Parts longer than LZ4K_SHORT would leave the other threads idle, so such a sequence is
// copied by all threads together, after the epoch's short ones. Hostile blocks stop at the first
// problem with a status code (lz4_status.h); nothing is read or written outside [in, in + stored)
// and [out, out + cap).
//
// Launch: block = LZ4K_DECODE_THREADS (32) threads, grid = count. Block i reads
// in[in_offsets[i], + in_lengths[i] & 0x7FFFFFFF) (bit 31: stored raw) and writes
// out[out_offsets[i], + out_caps[i]); its decoded size goes to sizes[i], its status to status[i].
#include "lz4_copy.cuh"
#include "lz4_status.h"

#define LZ4K_DECODE_THREADS 32
#ifndef LZ4K_WINDOW_BYTES
#define LZ4K_WINDOW_BYTES 512u
#endif
#define LZ4K_BATCH 32u  // one sequence per thread
// Longest literal run or match a thread copies on its own; longer ones are copied by all threads.
#ifndef LZ4K_SHORT
#define LZ4K_SHORT 32u
#endif
// Bytes a thread loads before it stores them when it copies alone.
#ifndef LZ4K_CHUNK
#define LZ4K_CHUNK 8u
#endif
// The same for each thread when all copy a long part: more than 8 spills registers (64 at most).
#define LZ4K_LONG_UNROLL 8u

// One batch, shared by the block's threads. Sequence s writes its literals at out[s] and then
// its match; the batch writes [out[0], out[count]) of the block's output.
struct Lz4Batch {
  unsigned char window[LZ4K_WINDOW_BYTES];  // in[lo, lo + n)
  // Thread 0's parse: where each token is, where its output goes, and the lengths it had to
  // extend (only where the token says so); entry `count` holds the positions after the batch.
  unsigned int token[LZ4K_BATCH + 1];   // window position of sequence s's token
  unsigned int out[LZ4K_BATCH + 1];     // output position of its literals
  unsigned int literals[LZ4K_BATCH];    // literal bytes (all of them once the batch is checked)
  unsigned int from[LZ4K_BATCH];        // their input position (likewise)
  unsigned int match[LZ4K_BATCH];       // match bytes (likewise; 0: the block's last sequence)
  unsigned int offset[LZ4K_BATCH];      // match offset, filled by thread s
  unsigned int dependency[LZ4K_BATCH];  // the last earlier sequence its match reads, + 1 (0: none)
  unsigned int lo, window_bytes;        // the window's place in the block
  unsigned int count;                   // sequences parsed
  unsigned int next;                    // input position after them
  unsigned int match_cut;               // the sequence whose match length runs past the end, or 32
  unsigned int problem;                 // (s << 3 | status) of the first bad sequence, or ~0
  unsigned int done;                    // the batch ends with the block's last sequence
  unsigned int long_ones;               // bit s: sequence s is copied by all threads
  unsigned int epoch_start[3];          // the next epochs' first sequences, in rotation
};

// Thread 0's view of the block's bytes: the window where it has them, else global memory.
struct Lz4Reader {
  const unsigned char* in;
  const unsigned char* window;
  unsigned int lo, n;

  __device__ __forceinline__ unsigned int operator[](unsigned int p) const {
    const unsigned int d = p - lo;  // p >= lo: the parse only moves forward
    return d < n ? window[d] : in[p];
  }
};

// Adds the 255-run length extension at in[*ip..] to *length; 0 when the input ends first.
__device__ __forceinline__ int lz4k_extend(const Lz4Reader& in, unsigned int end, unsigned int* ip,
                                           unsigned long long* length) {
  unsigned int b;
  do {
    if (*ip >= end) return 0;
    b = in[(*ip)++];
    *length += b;
  } while (b == 255u);
  return 1;
}

// Thread s: checks its sequence in the order a serial parse would (after the token and the literal
// length, which thread 0 checked) and fills in its offset; returns LZ4K_OK or the problem, and sets
// *last for the block's last sequence (literals only).
__device__ __forceinline__ unsigned int lz4k_check(Lz4Batch& b, const Lz4Reader& in, unsigned int end, unsigned int cap,
                                                   unsigned int s, unsigned int op, unsigned int from,
                                                   unsigned int literals, unsigned int match, unsigned int* offset,
                                                   int* last) {
  if (literals > end - from) return LZ4K_INPUT_TRUNCATED;
  if (literals > cap - op) return LZ4K_OUTPUT_OVERFLOW;
  const unsigned int at = from + literals, match_at = op + literals;
  if (at == end) {
    *last = 1;
    return LZ4K_OK;
  }
  if (end - at < 2u) return LZ4K_INPUT_TRUNCATED;
  *offset = in[at] | in[at + 1u] << 8;
  if (*offset == 0u) return LZ4K_ZERO_OFFSET;
  if (*offset > match_at) return LZ4K_BAD_OFFSET;
  if (s == b.match_cut) return LZ4K_INPUT_TRUNCATED;
  if (match > cap - match_at) return LZ4K_OUTPUT_OVERFLOW;
  const unsigned int next = b.token[s + 1] + in.lo;
  if (next == end) return LZ4K_ENDS_WITH_MATCH;  // a block must end with literals
  // The format's "the last 5 bytes are literals", on the input as liblz4 checks it: a sequence
  // with a match leaves at least 8 bytes after its literals (offset, next token, 5) and at least 5
  // after its match length; liblz4 rejects a block that does not.
  if (end - at < 8u || end - next < 5u) return LZ4K_SHORT_TAIL;
  return LZ4K_OK;
}

// Where sequence s's literals are read from: the window where it holds all of them, else the input.
__device__ __forceinline__ const unsigned char* lz4k_literal_source(const Lz4Batch& b, const unsigned char* in,
                                                                    unsigned int from, unsigned int literals) {
  const unsigned int w = from - b.lo;
  return w < b.window_bytes && literals <= b.window_bytes - w ? &b.window[w] : in + from;
}

// One thread: min(n, LZ4K_CHUNK) bytes from `from` to `to`, every load before the first store.
__device__ __forceinline__ void lz4k_copy_chunk(unsigned char* to, const unsigned char* from, unsigned int n) {
  unsigned char v[LZ4K_CHUNK];
#pragma unroll
  for (unsigned int u = 0; u < LZ4K_CHUNK; ++u) v[u] = u < n ? from[u] : 0;
#pragma unroll
  for (unsigned int u = 0; u < LZ4K_CHUNK; ++u)
    if (u < n) to[u] = v[u];
}

// One thread: the match of `n` bytes at `to` whose source starts `offset` bytes before it. Byte m
// repeats byte m % offset of the source, so where offset < LZ4K_CHUNK the first chunk is copied
// byte by byte with that index, and every later byte from a whole number of periods back, at
// least a chunk back: in a chunk the thread stored earlier, never in the one it is loading.
__device__ __forceinline__ void lz4k_copy_match_alone(unsigned char* to, unsigned int offset, unsigned int n) {
  unsigned int m = 0, back = offset;
  if (offset < LZ4K_CHUNK) {
    const unsigned char* source = to - offset;
    unsigned char v[LZ4K_CHUNK];
    unsigned int r = 0;  // m % offset, kept without a division
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_CHUNK; ++u) {
      v[u] = u < n ? source[r] : 0;
      r = r + 1u == offset ? 0u : r + 1u;
    }
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_CHUNK; ++u)
      if (u < n) to[u] = v[u];
    m = LZ4K_CHUNK;
    back = r == 0u ? LZ4K_CHUNK : LZ4K_CHUNK + offset - r;  // the least multiple of offset >= LZ4K_CHUNK
  }
  for (; m < n; m += LZ4K_CHUNK) lz4k_copy_chunk(to + m, to + m - back, n - m);
}

// All threads: the match of `n` bytes at `to` whose source starts `offset` bytes before it (its
// bytes lie before `to`: the caller made them visible). Byte m repeats source byte m % offset;
// thread t's bytes are m = t, t + threads, ..., so that index moves by threads % offset a step.
__device__ __forceinline__ void lz4k_copy_match_together(unsigned char* to, unsigned int offset, unsigned int n,
                                                         unsigned int t) {
  const unsigned int threads = LZ4K_DECODE_THREADS;
  if (offset >= n) {  // no overlap: a plain copy
    lz4k_copy<LZ4K_LONG_UNROLL>(to, to - offset, n, t, threads);
    return;
  }
  const unsigned char* source = to - offset;
  unsigned int r = offset > threads ? t : t % offset;
  const unsigned int step = offset > threads ? threads : threads % offset;
  lz4k_copy_with<LZ4K_LONG_UNROLL>(
      to,
      [source, step, offset, &r](unsigned int) {
        const unsigned char byte = source[r];
        r += step;
        if (r >= offset) r -= offset;
        return byte;
      },
      n, t, threads);
}

// All threads: sequence s, a long one: its literals, then (behind a barrier when the match reads
// them) its match.
__device__ __forceinline__ void lz4k_copy_long(const Lz4Batch& b, unsigned int s, const unsigned char* in,
                                               unsigned char* out, unsigned int t) {
  const unsigned int op = b.out[s], literals = b.literals[s], offset = b.offset[s], match = b.match[s];
  lz4k_copy<LZ4K_LONG_UNROLL>(out + op, lz4k_literal_source(b, in, b.from[s], literals), literals, t,
                              LZ4K_DECODE_THREADS);
  if (match == 0u) return;
  const unsigned int match_at = op + literals, source = match_at - offset;
  if (source + (match < offset ? match : offset) > op) __syncthreads();  // it reads the literals
  lz4k_copy_match_together(out + match_at, offset, match, t);
}

// 32 blocks per SM (the hardware's most) at 64 registers a thread.
extern "C" __global__ void __launch_bounds__(LZ4K_DECODE_THREADS, 32)
    lz4_decompress(const unsigned char* in_base, const unsigned long long* in_offsets, const unsigned int* in_lengths,
                   unsigned char* out_base, const unsigned long long* out_offsets, const unsigned int* out_caps,
                   unsigned int* sizes, unsigned int* status) {
  const unsigned int block = blockIdx.x;
  const unsigned int t = threadIdx.x;
  const unsigned char* in = in_base + in_offsets[block];
  unsigned char* out = out_base + out_offsets[block];
  const unsigned int stored = in_lengths[block] & 0x7FFFFFFFu;
  const unsigned int cap = out_caps[block];

  if (in_lengths[block] & 0x80000000u) {  // stored raw
    const int fits = stored <= cap;
    if (fits) lz4k_copy(out, in, stored, t, LZ4K_DECODE_THREADS);
    if (t == 0) {
      sizes[block] = fits ? stored : 0u;
      status[block] = fits ? LZ4K_OK : LZ4K_OUTPUT_OVERFLOW;
    }
    return;
  }

  __shared__ Lz4Batch batch;
  if (t == 0) {
    batch.next = 0;
    batch.out[0] = 0;
    batch.count = 0;
    batch.problem = ~0u;
    batch.done = 0;
  }
  __syncthreads();
  for (;;) {
    // Stage the window: one load per thread per 32 bytes, all in flight at once.
    const unsigned int lo = batch.next;
    const unsigned int left = stored - lo;
    const unsigned int n = left < LZ4K_WINDOW_BYTES ? left : LZ4K_WINDOW_BYTES;
    lz4k_copy(batch.window, in + lo, n, t, LZ4K_DECODE_THREADS);
    const Lz4Reader reader = {in, batch.window, lo, n};
    __syncthreads();
    if (t == 0) {
      // The serial chain: token, length extensions, the step to the next token, the output
      // position; while the next token lies in the window (the first one always). Everything else
      // about a sequence is checked by its own thread below. A sequence with an extension stores
      // its lengths (clamped: a literal run past the block's end, a match past any capacity) and
      // ends the chain where they run past the block.
      unsigned int op = batch.out[batch.count];  // where the last batch ended
      unsigned int d = 0, count = 0, problem0 = ~0u, match_cut = LZ4K_BATCH;
      batch.lo = lo;
      batch.window_bytes = n;
      batch.long_ones = 0;
      if (n == 0u) problem0 = LZ4K_INPUT_TRUNCATED;  // no token
      while (n != 0u) {
        const unsigned int token = batch.window[d];
        const unsigned int literals = token >> 4, match = token & 15u;
        batch.token[count] = d;
        batch.out[count] = op;
        if (literals != 15u && match != 15u) {
          d += 3u + literals;
          op += literals + match + 4u;
        } else {
          unsigned int p = lo + d + 1u;
          unsigned long long l = literals, m = match;
          if (literals == 15u && !lz4k_extend(reader, stored, &p, &l)) {
            problem0 = count << 3 | LZ4K_INPUT_TRUNCATED;
            break;
          }
          const int cut = l > stored - p;  // its thread reports it
          batch.literals[count] = cut ? stored + 1u : (unsigned int)l;
          batch.from[count] = p;
          if (cut) {
            ++count;
            break;
          }
          p += (unsigned int)l + 2u;
          if (match == 15u && !lz4k_extend(reader, stored, &p, &m)) {
            match_cut = count++;
            break;
          }
          m += 4u;
          batch.match[count] = m < 0xFFFFFFFFull ? (unsigned int)m : 0xFFFFFFFFu;
          d = p - lo;
          op += (unsigned int)l + (unsigned int)m;  // wraps only past a sequence that fails
        }
        if (++count == LZ4K_BATCH || d >= n) break;
      }
      batch.token[count] = d;
      batch.out[count] = op;
      batch.count = count;
      batch.epoch_start[1] = count;  // no later epoch found yet
      batch.epoch_start[2] = count;
      batch.next = lo + d;
      batch.match_cut = match_cut;
      batch.problem = problem0;
    }
    __syncthreads();
    // Thread s: sequence s's fields, its checks, and the latest earlier sequence of the batch whose
    // output its match reads (dependency: that sequence + 1, 0 if none).
    const unsigned int count = batch.count;
    unsigned int dependency = 0;
    if (t < count) {
      const unsigned int d = batch.token[t], token = batch.window[d], out_at = batch.out[t];
      unsigned int literals = token >> 4, from = lo + d + 1u, match = (token & 15u) + 4u, offset = 0;
      if (literals == 15u) {
        literals = batch.literals[t];
        from = batch.from[t];
      }
      if (match == 19u) match = batch.match[t];
      int last = 0;
      const unsigned int status =
          lz4k_check(batch, reader, stored, cap, t, out_at, from, literals, match, &offset, &last);
      if (status != LZ4K_OK) atomicMin(&batch.problem, t << 3 | status);
      if (last) {
        match = 0;
        batch.out[t + 1u] = out_at + literals;  // the chain counted a match
        batch.done = 1;
      }
      batch.literals[t] = literals;
      batch.from[t] = from;
      batch.match[t] = match;
      batch.offset[t] = offset;
      if (literals > LZ4K_SHORT || match > LZ4K_SHORT) atomicOr(&batch.long_ones, 1u << t);
      // The bytes its match reads before its own output, [source, limit), from the batch's output?
      const unsigned int source = out_at + literals - offset, overlap = match < offset ? match : offset;
      const unsigned int limit = source + overlap < out_at ? source + overlap : out_at;
      if (status == LZ4K_OK && match != 0u && source < out_at && limit > batch.out[0]) {
        unsigned int j = 0;  // the last sequence j < t with out[j] < limit (out[0] is)
#pragma unroll
        for (unsigned int step = LZ4K_BATCH / 2u; step != 0u; step >>= 1)
          if (j + step < t && batch.out[j + step] < limit) j += step;
        dependency = j + 1u;
        if (dependency > 0u) atomicMin(&batch.epoch_start[1], t);  // epoch 0 starts at 0
      }
    }
    batch.dependency[t] = dependency;
    __syncthreads();
    if (batch.problem != ~0u) break;
    // Epoch by epoch: an epoch [first, next) ends before the first sequence whose match reads output
    // of a sequence of the epoch (dependency > first). While the threads copy the epoch, they find
    // where the one after it ends, so that it is known after the barrier that ends this one. Short
    // sequences are copied each by its thread, then the long ones by all threads; the barrier after
    // an epoch makes its output readable by the next (and lets the next batch overwrite the window
    // after the last). Fields are read in the epoch, not kept in registers through the others.
    // Epoch e's end is in epoch_start[(e + 1) % 3]; the slot of e's own start is free again.
    for (unsigned int first = 0, slot = 1; first < batch.count; slot = slot == 2u ? 0u : slot + 1u) {
      const unsigned int next = batch.epoch_start[slot];
      const unsigned int after = slot == 2u ? 0u : slot + 1u;
      if (batch.dependency[t] > next) atomicMin(&batch.epoch_start[after], t);
      if (t == 0) batch.epoch_start[after == 2u ? 0u : after + 1u] = batch.count;
      const unsigned int epoch = (next == LZ4K_BATCH ? ~0u : (1u << next) - 1u) & ~((1u << first) - 1u);
      if (t >= first && t < next && !(batch.long_ones >> t & 1u)) {
        const unsigned int op = batch.out[t], literals = batch.literals[t], match = batch.match[t];
        const unsigned char* literal_source = lz4k_literal_source(batch, in, batch.from[t], literals);
        for (unsigned int k = 0; k < literals; k += LZ4K_CHUNK)
          lz4k_copy_chunk(out + op + k, literal_source + k, literals - k);
        if (match != 0u) lz4k_copy_match_alone(out + op + literals, batch.offset[t], match);
      }
      for (unsigned int ones = batch.long_ones & epoch; ones != 0u; ones &= ones - 1u)
        lz4k_copy_long(batch, (unsigned int)__ffs((int)ones) - 1u, in, out, t);
      __syncthreads();
      first = next;
    }
    if (batch.done) break;
  }
  if (t == 0) {
    const unsigned int problem = batch.problem;
    sizes[block] = problem == ~0u ? batch.out[batch.count] : 0u;
    status[block] = problem == ~0u ? LZ4K_OK : problem & 7u;
  }
}
