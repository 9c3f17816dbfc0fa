// LZ4 block decompression, one thread block of LZ4K_DECODE_THREADS per LZ4 block, many blocks
// in parallel. Thread 0 parses each sequence (token, lengths, offset), checking every read
// against the block's end and every write against its capacity; then all threads copy the
// literals and the match, striding by the thread count. An overlapping match (offset < length)
// repeats the `offset` bytes before it, so byte j of the match is source byte j % offset: no
// thread waits on another's byte. Hostile blocks stop at the first problem with a status code
// (lz4_status.h); nothing is read or written outside [in, in + stored) and [out, out + cap).
//
// Launch: block = LZ4K_DECODE_THREADS (32) threads, grid = count. Block i reads
// in[in_offsets[i], + in_lengths[i] & 0x7FFFFFFF) (bit 31: stored raw) and writes
// out[out_offsets[i], + out_caps[i]); its decoded size goes to sizes[i], its status to status[i].
#include "lz4_status.h"

#define LZ4K_DECODE_THREADS 32

struct Lz4Sequence {
  unsigned long long literal_from;  // input position of the literals
  unsigned int literals;            // literal bytes
  unsigned int match;               // match bytes (0: the block's last sequence)
  unsigned int offset;              // match offset
  unsigned int out;                 // output position of the literals
  unsigned int status;              // LZ4K_* once parsing failed or the block ended
  unsigned int done;
};

// Adds the 255-run length extension at in[*ip..] to *length; 0 when the input ends first.
__device__ __forceinline__ int lz4k_extend(const unsigned char* in, unsigned int end, unsigned int* ip,
                                           unsigned long long* length) {
  unsigned int b;
  do {
    if (*ip >= end) return 0;
    b = in[(*ip)++];
    *length += b;
  } while (b == 255u);
  return 1;
}

// Thread 0: the next sequence after `*ip` with output at `op`, or a status.
__device__ void lz4k_parse(const unsigned char* in, unsigned int end, unsigned int* ip, unsigned int op,
                           unsigned int cap, Lz4Sequence* seq) {
  seq->match = 0;
  seq->out = op;
  if (*ip >= end) {
    seq->status = LZ4K_INPUT_TRUNCATED;
    return;
  }
  const unsigned int token = in[(*ip)++];
  unsigned long long literals = token >> 4;
  if (literals == 15u && !lz4k_extend(in, end, ip, &literals)) {
    seq->status = LZ4K_INPUT_TRUNCATED;
    return;
  }
  if (literals > end - *ip) {
    seq->status = LZ4K_INPUT_TRUNCATED;
    return;
  }
  if (literals > cap - op) {
    seq->status = LZ4K_OUTPUT_OVERFLOW;
    return;
  }
  seq->literal_from = *ip;
  seq->literals = (unsigned int)literals;
  *ip += (unsigned int)literals;
  if (*ip == end) {  // the last sequence: literals only
    seq->done = 1;
    return;
  }
  if (end - *ip < 2u) {
    seq->status = LZ4K_INPUT_TRUNCATED;
    return;
  }
  const unsigned int offset = (unsigned int)in[*ip] | ((unsigned int)in[*ip + 1] << 8);
  *ip += 2;
  const unsigned int match_at = op + (unsigned int)literals;
  if (offset == 0u || offset > match_at) {
    seq->status = offset == 0u ? LZ4K_ZERO_OFFSET : LZ4K_BAD_OFFSET;
    return;
  }
  unsigned long long match = (token & 15u);
  if (match == 15u && !lz4k_extend(in, end, ip, &match)) {
    seq->status = LZ4K_INPUT_TRUNCATED;
    return;
  }
  match += 4u;
  if (match > cap - match_at) {
    seq->status = LZ4K_OUTPUT_OVERFLOW;
    return;
  }
  if (*ip == end) {  // a block must end with literals
    seq->status = LZ4K_ENDS_WITH_MATCH;
    return;
  }
  seq->offset = offset;
  seq->match = (unsigned int)match;
}

extern "C" __global__ void lz4_decompress(const unsigned char* in_base, const unsigned long long* in_offsets,
                                          const unsigned int* in_lengths, unsigned char* out_base,
                                          const unsigned long long* out_offsets, const unsigned int* out_caps,
                                          unsigned int* sizes, unsigned int* status) {
  __shared__ Lz4Sequence seq;
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

  unsigned int ip = 0;  // thread 0's parse position
  unsigned int op = 0;  // output written so far (every thread keeps it)
  if (t == 0) {
    seq.status = LZ4K_OK;
    seq.done = 0;
  }
  for (;;) {
    if (t == 0) lz4k_parse(in, stored, &ip, op, cap, &seq);
    __syncthreads();
    if (seq.status != LZ4K_OK) break;
    const unsigned long long from = seq.literal_from;
    const unsigned int literals = seq.literals;
    for (unsigned int j = t; j < literals; j += blockDim.x) out[op + j] = in[from + j];
    op += literals;
    const unsigned int match = seq.match, offset = seq.offset;
    const int done = seq.done;
    __syncthreads();  // the match may read the literals just written
    if (done) break;
    const unsigned int source = op - offset;
    if (offset >= match) {
      for (unsigned int j = t; j < match; j += blockDim.x) out[op + j] = out[source + j];
    } else {
      for (unsigned int j = t; j < match; j += blockDim.x) out[op + j] = out[source + j % offset];
    }
    op += match;
    __syncthreads();  // the next sequence's match may read this one
  }
  if (t == 0) {
    sizes[block] = op;
    status[block] = seq.status;
  }
}
