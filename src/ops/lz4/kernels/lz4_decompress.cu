// LZ4 block decompression, one thread block of LZ4K_DECODE_THREADS per LZ4 block, many blocks
// in parallel. The decoder's cost is its chain of dependent reads, so it works in batches: the
// threads stage the next LZ4K_WINDOW_BYTES of the block in shared memory with one load each;
// thread 0 parses up to LZ4K_BATCH sequences (token, lengths, offset) from there, checking every
// read against the block's end and every write against its capacity (bytes past the window come
// from global memory); then all threads copy every sequence's literals at once (from the window
// where it has them), and then the matches in order, with a barrier only before a match whose
// source reaches bytes another match of the batch wrote since the last barrier. An overlapping
// match (offset < length) repeats the `offset` bytes before it, so byte j of the match is source
// byte j % offset: no thread waits on another's byte. Hostile blocks stop at the first problem with
// a status code (lz4_status.h); nothing is read or written outside [in, in + stored) and
// [out, out + cap).
//
// Launch: block = LZ4K_DECODE_THREADS (32) threads, grid = count. Block i reads
// in[in_offsets[i], + in_lengths[i] & 0x7FFFFFFF) (bit 31: stored raw) and writes
// out[out_offsets[i], + out_caps[i]); its decoded size goes to sizes[i], its status to status[i].
#include "lz4_status.h"

#define LZ4K_DECODE_THREADS 32
#define LZ4K_WINDOW_BYTES 256u
#define LZ4K_BATCH 32u

struct Lz4Sequence {
  unsigned int literal_from;  // input position of the literals
  unsigned int literals;      // literal bytes
  unsigned int out;           // output position of the literals
  unsigned int match;         // match bytes (0: the block's last sequence)
  unsigned int offset;        // match offset
};

// One batch, shared by the block's threads.
struct Lz4Batch {
  unsigned char window[LZ4K_WINDOW_BYTES];  // in[lo, lo + window_bytes)
  Lz4Sequence seq[LZ4K_BATCH];
  unsigned int lo, window_bytes;  // the window's place in the block
  unsigned int count;             // sequences parsed into seq
  unsigned int next;              // input position after them
  unsigned int status;            // LZ4K_OK, or the problem that stops the block
  unsigned int done;              // seq[count - 1] is the block's last sequence
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

// Thread 0: the sequence at `*ip` with output at `op` into *seq; returns LZ4K_OK or the problem,
// and sets *done for the block's last sequence (literals only).
__device__ unsigned int lz4k_parse(const Lz4Reader& in, unsigned int end, unsigned int* ip, unsigned int op,
                                   unsigned int cap, Lz4Sequence* seq, unsigned int* done) {
  if (*ip >= end) return LZ4K_INPUT_TRUNCATED;
  const unsigned int token = in[(*ip)++];
  unsigned long long literals = token >> 4;
  if (literals == 15u && !lz4k_extend(in, end, ip, &literals)) return LZ4K_INPUT_TRUNCATED;
  if (literals > end - *ip) return LZ4K_INPUT_TRUNCATED;
  if (literals > cap - op) return LZ4K_OUTPUT_OVERFLOW;
  seq->literal_from = *ip;
  seq->literals = (unsigned int)literals;
  seq->out = op;
  seq->match = 0;
  seq->offset = 0;
  *ip += (unsigned int)literals;
  if (*ip == end) {  // the last sequence: literals only
    *done = 1;
    return LZ4K_OK;
  }
  if (end - *ip < 2u) return LZ4K_INPUT_TRUNCATED;
  const unsigned int offset = in[*ip] | (in[*ip + 1] << 8);
  *ip += 2;
  const unsigned int match_at = op + (unsigned int)literals;
  if (offset == 0u) return LZ4K_ZERO_OFFSET;
  if (offset > match_at) return LZ4K_BAD_OFFSET;
  unsigned long long match = (token & 15u);
  if (match == 15u && !lz4k_extend(in, end, ip, &match)) return LZ4K_INPUT_TRUNCATED;
  match += 4u;
  if (match > cap - match_at) return LZ4K_OUTPUT_OVERFLOW;
  if (*ip == end) return LZ4K_ENDS_WITH_MATCH;  // a block must end with literals
  seq->offset = offset;
  seq->match = (unsigned int)match;
  return LZ4K_OK;
}

extern "C" __global__ void lz4_decompress(const unsigned char* in_base, const unsigned long long* in_offsets,
                                          const unsigned int* in_lengths, unsigned char* out_base,
                                          const unsigned long long* out_offsets, const unsigned int* out_caps,
                                          unsigned int* sizes, unsigned int* status) {
  const unsigned int block = blockIdx.x;
  const unsigned int t = threadIdx.x;
  const unsigned char* in = in_base + in_offsets[block];
  unsigned char* out = out_base + out_offsets[block];
  const unsigned int stored = in_lengths[block] & 0x7FFFFFFFu;
  const unsigned int cap = out_caps[block];

  if (in_lengths[block] & 0x80000000u) {  // stored raw
    const int fits = stored <= cap;
    if (fits)
      for (unsigned int j = t; j < stored; j += blockDim.x) out[j] = in[j];
    if (t == 0) {
      sizes[block] = fits ? stored : 0u;
      status[block] = fits ? LZ4K_OK : LZ4K_OUTPUT_OVERFLOW;
    }
    return;
  }

  __shared__ Lz4Batch batch;
  unsigned int op = 0;  // thread 0: output written by the sequences parsed so far
  if (t == 0) {
    batch.next = 0;
    batch.status = LZ4K_OK;
    batch.done = 0;
  }
  __syncthreads();
  for (;;) {
    // Stage the window: one load per thread per 32 bytes, all in flight at once.
    const unsigned int lo = batch.next;
    const unsigned int left = stored - lo;
    const unsigned int n = left < LZ4K_WINDOW_BYTES ? left : LZ4K_WINDOW_BYTES;
    for (unsigned int j = t; j < n; j += blockDim.x) batch.window[j] = in[lo + j];
    __syncthreads();
    if (t == 0) {  // parse while the next token lies in the window (the first one always)
      const Lz4Reader reader = {in, batch.window, lo, n};
      unsigned int ip = lo, count = 0, status = LZ4K_OK, done = 0;
      while (count < LZ4K_BATCH && (count == 0 || ip - lo < n)) {
        status = lz4k_parse(reader, stored, &ip, op, cap, &batch.seq[count], &done);
        if (status != LZ4K_OK) break;
        op += batch.seq[count].literals + batch.seq[count].match;
        ++count;
        if (done) break;
      }
      batch.count = count;
      batch.next = ip;
      batch.status = status;
      batch.done = done;
    }
    __syncthreads();
    if (batch.status != LZ4K_OK) break;
    const unsigned int count = batch.count;
    // Every literal run of the batch at once: they come from the input, not from each other.
    for (unsigned int s = 0; s < count; ++s) {
      const Lz4Sequence q = batch.seq[s];
      for (unsigned int j = t; j < q.literals; j += blockDim.x) {
        const unsigned int p = q.literal_from + j, d = p - lo;
        out[q.out + j] = d < n ? batch.window[d] : in[p];
      }
    }
    __syncthreads();
    // The matches in order. `unsynced`: the first output byte a match wrote since the last
    // barrier (matches write upwards), so a match whose source reaches it waits for the barrier.
    unsigned int unsynced = 0xFFFFFFFFu;
    for (unsigned int s = 0; s < count; ++s) {
      const Lz4Sequence q = batch.seq[s];
      if (q.match == 0u) continue;
      const unsigned int at = q.out + q.literals, source = at - q.offset;
      const unsigned int source_end = source + (q.match < q.offset ? q.match : q.offset);
      if (source_end > unsynced) {  // the same decision in every thread: q and unsynced are shared
        __syncthreads();
        unsynced = 0xFFFFFFFFu;
      }
      if (q.offset >= q.match) {
        for (unsigned int j = t; j < q.match; j += blockDim.x) out[at + j] = out[source + j];
      } else {
        for (unsigned int j = t; j < q.match; j += blockDim.x) out[at + j] = out[source + j % q.offset];
      }
      if (unsynced == 0xFFFFFFFFu) unsynced = at;
    }
    const unsigned int done = batch.done;
    __syncthreads();  // the next batch overwrites the window and reads these bytes
    if (done) break;
  }
  if (t == 0) {
    sizes[block] = batch.status == LZ4K_OK ? op : 0u;
    status[block] = batch.status;
  }
}
