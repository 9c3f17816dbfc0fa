// Message bytes at any alignment through 16-byte aligned loads and stores, for the batch kernels
// (AES-CTR, GHASH, ChaCha20 / ChaCha20-Poly1305), where a message starts wherever the one before it
// ended: 1500-byte messages are 16-byte aligned one time in four.
//
// A message (or a thread's range of it) of n bytes at address p with mis = p % 16 lies in the
// buffer's aligned 16-byte chunks c = 0, 1, ... at (p - mis) + 16 c: chunk c holds message bytes
// [16 c - mis, 16 c - mis + 16). A message-aligned 16-byte block t is the 16 bytes at offset mis of
// chunk t || chunk t + 1; a chunk's bytes are the 16 bytes at offset 16 - mis of block c - 1 ||
// block c. Whole chunks inside the message move with one 16-byte load or store; only the first and
// the last chunk, which the message shares with its neighbours, go byte by byte (never touching a
// byte outside the message). mis is public (an address's low bits): it selects words and sets
// funnel shifts, never an address of secret data or a branch on it.
#pragma once

// The 16 bytes at byte offset o (0 <= o <= 16, public) of lo || hi (four little-endian words
// each): select stages on the word offset o / 4, then funnel shifts by 8 (o % 4): about 20 ALU
// operations, no table, no branch.
__device__ __forceinline__ void cipher_extract16(const unsigned int* lo, const unsigned int* hi, unsigned int o,
                                                 unsigned int* out) {
  const bool q4 = (o & 16u) != 0;  // o == 16: hi itself (then the stages below select nothing)
  const unsigned int w[8] = {
      q4 ? hi[0] : lo[0], q4 ? hi[1] : lo[1], q4 ? hi[2] : lo[2], q4 ? hi[3] : lo[3], hi[0], hi[1], hi[2], hi[3]};
  const bool q1 = (o & 4u) != 0, q2 = (o & 8u) != 0;
  unsigned int x[7], v[5];
#pragma unroll
  for (int k = 0; k < 7; ++k) x[k] = q1 ? w[k + 1] : w[k];
#pragma unroll
  for (int k = 0; k < 5; ++k) v[k] = q2 ? x[k + 2] : x[k];
  const unsigned int shift = 8u * (o & 3u);
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = __funnelshift_r(v[i], v[i + 1], shift);
}

// The aligned 16 bytes at p as words, of which only bytes [from, to) are read (public bounds,
// 0 <= from <= to <= 16); the others are zero. Byte loads, each predicated on its position.
__device__ __forceinline__ void cipher_load_part(const unsigned char* p, int from, int to, unsigned int* w) {
  w[0] = w[1] = w[2] = w[3] = 0;
#pragma unroll
  for (int j = 0; j < 16; ++j)
    if (j >= from && j < to) w[j >> 2] |= static_cast<unsigned int>(p[j]) << (8 * (j & 3));
}

// Bytes [from, to) of the words w to the aligned 16 bytes at p; the other bytes are not written.
__device__ __forceinline__ void cipher_store_part(unsigned char* p, int from, int to, const unsigned int* w) {
#pragma unroll
  for (int j = 0; j < 16; ++j)
    if (j >= from && j < to) p[j] = static_cast<unsigned char>(w[j >> 2] >> (8 * (j & 3)));
}

__device__ __forceinline__ void cipher_load_chunk(const unsigned char* p, unsigned int* w) {
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
}

__device__ __forceinline__ void cipher_store_chunk(unsigned char* p, const unsigned int* w) {
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
}

// Chunk c of an n-byte range at alignment mis (see the top): which of its bytes are the range's.
// Returns true when all 16 are (one 16-byte access), else sets [from, to) (possibly empty).
__device__ __forceinline__ bool cipher_chunk_bounds(unsigned long long c, unsigned long long n, unsigned int mis,
                                                    int& from, int& to) {
  const unsigned long long first = 16 * c;  // chunk byte j is range byte first + j - mis
  from = c == 0 ? static_cast<int>(mis) : 0;
  const unsigned long long end = n + mis;  // range bytes end at chunk-relative byte end - first
  to = end <= first ? 0 : (end - first >= 16 ? 16 : static_cast<int>(end - first));
  if (to < from) to = from;
  return from == 0 && to == 16;
}

// Chunk c (16 bytes at aligned base + 16 c) with the bytes outside the range zeroed.
__device__ __forceinline__ void cipher_load_range_chunk(const unsigned char* base, unsigned long long c,
                                                        unsigned long long n, unsigned int mis, unsigned int* w) {
  int from, to;
  if (cipher_chunk_bounds(c, n, mis, from, to))
    cipher_load_chunk(base + 16 * c, w);
  else
    cipher_load_part(base + 16 * c, from, to, w);
}
