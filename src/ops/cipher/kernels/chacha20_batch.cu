// Batch ChaCha20 / ChaCha20-Poly1305: each message with its own key, nonce and counter (keys,
// ivs), AAD and tag. Message i is in[offsets[i], offsets[i + 1]), or in[i * message_bytes, ...)
// when offsets is null; the output has the same layout.
//
// Work layout: G = 2^lanes_log2 consecutive threads of a warp (G <= 32; the host picks G from the
// messages' length) work on one message, and a block of BLOCK threads takes BLOCK / G consecutive
// messages. Lane j of a group computes the message's 64-byte keystream blocks j, j + G, j + 2G, ...
// (one block per lane per round), so that a round's loads and stores cover G consecutive blocks
// of the message, and no thread walks a whole message (one thread per message put every 16-byte
// access of a warp in another message, and a message's Poly1305 in one chain).
//
// Any alignment (cipher_io.cuh): a message at mis = in % 16 moves as the buffer's aligned 16-byte
// chunks. Lane j's block b owns out chunks 4b .. 4b + 3, and chunk 4b starts with the last mis
// bytes of block b - 1: the lane below hands over that block's last keystream part (ChaCha20) or
// output block (AEAD) through chacha20_lanes::take_from_below; lane 0 keeps what lane G - 1 hands
// it for its block of the next round. The last block's lane also writes the chunk after it
// (the message's last mis bytes).
//
// Poly1305 (AEAD), Poly(m_1..m_k) = sum m_i r^(k - i + 1) over AAD || ciphertext || lengths (RFC
// 8439, each part padded to 16 bytes). Of the message's B 64-byte blocks, the F = B - 1 before
// the last are "full" (four 16-byte blocks each): lane j sums its full blocks by Horner with the
// step r^(4G) (h = h r^(4G) + Q_b, Q_b = sum_q c_(4b+q) r^(4-q): one carry chain per block), so
// that h_j = sum over its blocks of Q_b r^(4 (b_last - b)). Lane G - 1 starts from Poly(AAD), the
// AAD being "block -1" of its sequence. Then Poly(AAD || full blocks) = sum_j h_j r^(4 m_j), m_j =
// (F - 1 - j) mod G (the distance of lane j's last full block from block F - 1), which log2 G
// exchange steps build in lane (F - 1) mod G (each lane adds lane j - s's value times r^(4s), s = 1,
// 2, 4, ..; the lanes whose sums wrap around are not read). The last block's lane, F mod G, takes
// that value, appends the last block's 1..4 blocks and the length block, and writes the tag.
// The one-time key (keystream block 0), s, r^1..r^4, r^8 .. r^(4G) and Poly(AAD) are computed
// once per message, by thread m of the block for its message m before a barrier, into shared
// memory (BLOCK / G entries, chacha20_mac_key: the launch's dynamic shared memory): a warp's worth
// of messages per warp, not a whole keystream block and the powers per lane.
//
// Decryption (AEAD, DECRYPT 1) decrypts while it authenticates, then verifies: the tag's lane
// compares the computed tag with the expected one (tags + 16 i) in constant time (the OR of the
// words' differences and a select: no branch, no address on either) and writes the message's
// verdict byte (1: authentic, 0: not). The verdict is public (the call reports the failing
// messages): the group's lanes read it back through `verdicts` after a barrier of the group
// (tools/ct_sass_check.py is told that parameter is public), and for a failing message each lane
// zeroes every output byte it wrote (its own blocks: no ordering between lanes is needed), and the
// tag's lane adds 1 to *failures. So when the kernel has run, a failing message's output is zero
// and *failures says whether the host needs the verdicts at all.
//
// Compile-time parameters (-D):
//   AEAD      1: ChaCha20-Poly1305 (counter 1 for the data, block 0 for the one-time key, tag to
//             tags[16 i]); 0 (default): ChaCha20 from the IV's counter word or `counter`
//   ALIGNED   1: every message starts 16-byte aligned in in and out; 0 (default): any alignment,
//             16-byte loads and stores of the aligned chunks around each message when in and out
//             are in the same phase (cipher_io.cuh), byte loads and stores otherwise
//   DECRYPT   AEAD only: 1 MACs the input and verifies the expected tags (below), 0 (default)
//             MACs the output and writes the tags
//   BLOCK     threads per block (default 256), a multiple of 32
#include "cipher_io.cuh"
#include "poly1305.cuh"

#ifndef AEAD
#define AEAD 0
#endif
#ifndef ALIGNED
#define ALIGNED 0
#endif
#ifndef DECRYPT
#define DECRYPT 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif

// The double rounds a loop iteration of a keystream block holds (chacha20_rounds_rest's Unroll).
// The AEAD kernel's lane loop (a block, its Poly1305 products, the exchanges) is, unrolled, 1,926
// SASS instructions at 109 registers aligned and 2,122 at 126 any alignment (sm_90, encrypt); as a
// loop of one double round 1,173 / 1,363 + 9 x 99, the registers 110 / 125. The roll is
// chacha20_bulk.cu's, where "no instruction" was the top stall unrolled; here it is not yet
// measured. ChaCha20 alone keeps all nine unrolled.
#ifndef CHACHA20_BATCH_ROUNDS_UNROLL
#define CHACHA20_BATCH_ROUNDS_UNROLL (AEAD ? 1 : 9)
#endif

#define CHACHA20_EXCHANGE_WORDS 5  // the most words one exchange moves (a Poly1305 element)

// The G lanes of one message: G consecutive threads of a warp, lane = threadIdx.x % G.
struct chacha20_lanes {
  unsigned int lane;   // 0 .. count - 1
  unsigned int count;  // G, a power of two <= 32
  unsigned int mask;   // the group's lanes in its warp

  CIPHER_FN static chacha20_lanes of_thread(unsigned int lanes_log2) {
    chacha20_lanes g;
    g.count = 1u << lanes_log2;
    g.lane = threadIdx.x & (g.count - 1u);
    const unsigned int first_in_warp = (threadIdx.x & 31u) & ~(g.count - 1u);
    g.mask = (0xffffffffu >> (32u - g.count)) << first_in_warp;
    return g;
  }

  // w becomes lane (lane - s) mod G's w. Every lane of the group calls it at the same point, the
  // same number of times. On a GPU a shuffle within the group; the CPU backend has no warps (a
  // block's threads run one after another, switching at barriers), so there the words go through
  // shared memory between two barriers. Its barriers pair up a group's lanes, whose calls are the
  // same, while other groups may be at other calls or done (the CPU backend's barrier waits only
  // for the threads that have not returned).
  template <int N>
  CIPHER_FN void take_from_below(unsigned int (&w)[N], unsigned int s) const {
    static_assert(N <= CHACHA20_EXCHANGE_WORDS, "chacha20_lanes moves at most CHACHA20_EXCHANGE_WORDS words");
    const unsigned int from = (lane - s) & (count - 1u);
#ifdef __CUDA_ARCH__
#pragma unroll
    for (int k = 0; k < N; ++k) w[k] = __shfl_sync(mask, w[k], from, count);
#else
    __shared__ unsigned int slots[BLOCK][CHACHA20_EXCHANGE_WORDS];
#pragma unroll
    for (int k = 0; k < N; ++k) slots[threadIdx.x][k] = w[k];
    __syncthreads();
    const unsigned int source = threadIdx.x - lane + from;
#pragma unroll
    for (int k = 0; k < N; ++k) w[k] = slots[source][k];
    __syncthreads();
#endif
  }

  // Orders the group's memory accesses before the call against those after it: a warp barrier of
  // the group on a GPU; the CPU backend's threads switch at block barriers (see above).
  CIPHER_FN void sync() const {
#ifdef __CUDA_ARCH__
    __syncwarp(mask);
#else
    __syncthreads();
#endif
  }
};

// Message i's bytes and keystream parameters.
struct chacha20_batch_message {
  const unsigned char* in;
  unsigned char* out;
  unsigned long long n;
  unsigned int key[8], nonce[3];
  unsigned int counter;  // of the data's first keystream block
};

// Word w of the 4-byte aligned bytes at p (keys and IVs: 32 and 12 or 16 bytes a message from an
// aligned buffer), little-endian as the CPU backend's hosts and the GPU store them.
CIPHER_FN unsigned int chacha20_word(const unsigned char* p, int w) {
  return reinterpret_cast<const unsigned int*>(p)[w];
}

// keys: 32 bytes per message; ivs: iv_bytes (16: the counter word || nonce, as OpenSSL takes a
// chacha20 IV; 12: the nonce, the counter then `counter`; the AEAD's data starts at counter 1)
// per message, read as the caller gave them (no parameter table built on the host).
CIPHER_FN chacha20_batch_message chacha20_message_of(unsigned long long i, const unsigned char* in, unsigned char* out,
                                                     unsigned long long message_bytes,
                                                     const unsigned long long* offsets, const unsigned char* keys,
                                                     const unsigned char* ivs, unsigned int iv_bytes,
                                                     unsigned int counter) {
  chacha20_batch_message m;
  const unsigned long long begin = offsets ? offsets[i] : i * message_bytes;
  m.in = in + begin;
  m.out = out + begin;
  m.n = offsets ? offsets[i + 1] - begin : message_bytes;
#pragma unroll
  for (int w = 0; w < 8; ++w) m.key[w] = chacha20_word(keys + 32u * i, w);
  const unsigned char* iv = ivs + iv_bytes * i;
  const unsigned char* nonce = iv_bytes == 16u ? iv + 4 : iv;
#pragma unroll
  for (int w = 0; w < 3; ++w) m.nonce[w] = chacha20_word(nonce, w);
  m.counter = AEAD ? 1u : (iv_bytes == 16u ? chacha20_word(iv, 0) : counter);
  return m;
}

// ---- Poly1305 (AEAD) ----

// One message's Poly1305 values, computed once per message (chacha20_mac_key_store) and read
// by its lanes from shared memory: 6 + log2 G elements of 20 bytes (chacha20_device.cpp sizes the
// launch's shared memory by that), each message's entry after the last one's:
//   [0]      s (in its first four limbs)
//   [1..4]   r^1 .. r^4
//   [5]      Poly(AAD), the AAD's padded blocks (the lengths come last)
//   [5 + e]  r^(4 * 2^e) for e = 1 .. log2 G: the combining steps' multipliers r^(4s), s = 2 ..
//            G / 2, and last r^(4G), the step from one of a lane's 64-byte blocks to its next
#define CHACHA20_MAC_KEY_ELEMS(lanes_log2) (6u + (lanes_log2))

struct chacha20_mac_key {
  const poly1305_elem* e;  // the message's entry
  unsigned int lanes_log2;

  CIPHER_FN const unsigned int* s() const { return e[0].l; }
  CIPHER_FN const poly1305_elem& power(unsigned int k) const { return e[k]; }  // r^k, k = 1..4
  CIPHER_FN const poly1305_elem& aad() const { return e[5]; }
  CIPHER_FN const poly1305_elem& r4_power(unsigned int log2) const {
    return e[log2 == 0 ? 4u : 5u + log2];
  }  // r^(4 * 2^log2)
  CIPHER_FN const poly1305_elem& lane_step() const { return r4_power(lanes_log2); }
};

// Fills message m's entry at e: its one-time key (keystream block 0), the powers, Poly(AAD).
CIPHER_FN void chacha20_mac_key_store(poly1305_elem* e, const chacha20_batch_message& m, const unsigned char* aad,
                                      unsigned long long aad_bytes, unsigned int lanes_log2) {
  unsigned int ks[16];
  chacha20_block(ks, m.key, 0u, m.nonce);
  poly1305_elem s = poly1305_zero();
#pragma unroll
  for (int w = 0; w < 4; ++w) s.l[w] = ks[4 + w];
  e[0] = s;
  poly1305_elem power = poly1305_clamped_r(ks);
  const poly1305_mul_by r = poly1305_multiplier(power);
  e[1] = power;
  for (unsigned int k = 2; k <= 4; ++k) e[k] = power = poly1305_mul(power, r);
  for (unsigned int log2 = 1; log2 <= lanes_log2; ++log2)
    e[5 + log2] = power = poly1305_mul(power, poly1305_multiplier(power));
  poly1305_elem h = poly1305_zero();
  for (unsigned long long at = 0; at < aad_bytes; at += 16u) {
    const unsigned int left = aad_bytes - at >= 16u ? 16u : (unsigned int)(aad_bytes - at);
    h = poly1305_step(h, cipher_load_partial(aad + at, left), r);
  }
  e[5] = h;
}

// A lane's Poly1305 state: the Horner sum of its full blocks, and the message's last block's
// value when the lane has that block.
struct chacha20_lane_mac {
  poly1305_elem h;
  poly1305_elem last;
};

// Block b's 16-byte blocks ct[0 .. here) (here = 1..4, public): the message's last block becomes
// `last` (sum ct_q r^(here - q)), a full one a Horner step of h (h r^(4G) + sum ct_q r^(4 - q)),
// with one carry chain either way.
CIPHER_FN void chacha20_mac_block(chacha20_lane_mac& mac, const cipher_vec4 ct[4], unsigned int here, bool last,
                                  const chacha20_mac_key& key) {
  poly1305_columns sum = poly1305_columns_zero();
  if (!last) poly1305_mul_add(sum, mac.h, poly1305_multiplier(key.lane_step()));
#pragma unroll
  for (unsigned int q = 0; q < 4; ++q)
    if (q < here) poly1305_mul_add(sum, poly1305_block(ct[q]), poly1305_multiplier(key.power(here - q)));
  const poly1305_elem v = poly1305_reduce(sum);
  if (last)
    mac.last = v;
  else
    mac.h = v;
}

// The tag, from every lane's state: Poly(AAD || full blocks) built in lane (F - 1) mod G, handed
// to the last block's lane F mod G, which finishes it into `tag` (see the top). Every lane of the
// group calls it; returns true in the lane that holds the tag.
CIPHER_FN bool chacha20_mac_finish(const chacha20_lane_mac& mac, const chacha20_lanes& lanes,
                                   const chacha20_mac_key& key, unsigned long long n, unsigned long long aad_bytes,
                                   cipher_vec4& tag) {
  const unsigned long long blocks = (n + 63u) / 64u, full = blocks == 0 ? 0 : blocks - 1u;
  const unsigned int last_parts = (unsigned int)((n + 15u) / 16u - 4u * full);  // 0 (no data) .. 4
  poly1305_elem sum = mac.h;
  for (unsigned int log2 = 0; log2 < key.lanes_log2; ++log2) {  // s = 2^log2
    poly1305_elem below = sum;
    lanes.take_from_below(below.l, 1u << log2);
    sum = poly1305_add(sum, poly1305_mul(below, poly1305_multiplier(key.r4_power(log2))));
  }
  lanes.take_from_below(sum.l, 1u);
  if (lanes.lane != (unsigned int)(full & (lanes.count - 1u))) return false;
  poly1305_elem h = sum;
  if (last_parts != 0) h = poly1305_add(poly1305_mul(sum, poly1305_multiplier(key.power(last_parts))), mac.last);
  cipher_vec4 lengths;
  lengths.x = (unsigned int)aad_bytes, lengths.y = (unsigned int)(aad_bytes >> 32);
  lengths.z = (unsigned int)n, lengths.w = (unsigned int)(n >> 32);
  h = poly1305_step(h, lengths, poly1305_multiplier(key.power(1)));
  tag = poly1305_finish(h, key.s());
  return true;
}

// Zeroes the message's output bytes this lane wrote: of each of its blocks b, message bytes
// [64 b - mis, 64 b + 64 - mis) (the buffer's chunks 4b .. 4b + 3 on the chunk path; mis = 0 on the
// others, whose lanes write their blocks in place), the last block's up to the message's end (the
// chunk path's last lane also writes the chunk after it). Byte stores: only a failing message
// takes this path.
CIPHER_FN void chacha20_zero_lane(const chacha20_batch_message& m, const chacha20_lanes& lanes, unsigned int mis) {
  const unsigned long long blocks = (m.n + 63u) / 64u;
  for (unsigned long long b = lanes.lane; b < blocks; b += lanes.count) {
    const unsigned long long from = 64u * b > mis ? 64u * b - mis : 0;
    const unsigned long long to = b + 1u == blocks ? m.n : 64u * b + 64u - mis;
    for (unsigned long long k = from; k < to; ++k) m.out[k] = 0;
  }
}

// Decryption's verdict for message m (see the top): the tag's lane compares and writes *verdict;
// then every lane of the group reads it (a volatile load through the public `verdicts`, not a
// value forwarded from the comparison) and a failing message's lanes zero what they wrote.
CIPHER_FN void chacha20_verify(const chacha20_batch_message& m, const chacha20_lanes& lanes, unsigned int mis,
                               bool tag_lane, const cipher_vec4& tag, const unsigned char* expected,
                               unsigned char* verdict, unsigned long long* failures) {
  if (tag_lane) {
    const cipher_vec4 e = cipher_load_partial(expected, 16u);
    const unsigned int diff = (tag.x ^ e.x) | (tag.y ^ e.y) | (tag.z ^ e.z) | (tag.w ^ e.w);
    *verdict = diff == 0u ? 1u : 0u;
  }
  lanes.sync();
  if (*(const volatile unsigned char*)verdict != 0u) return;
  chacha20_zero_lane(m, lanes, mis);
  if (tag_lane) atomicAdd(failures, 1ull);
}

// ---- Keystream blocks ----

// The message's keystream block b, from the counter-free start that all of a lane's blocks share.
struct chacha20_lane_keystream {
  unsigned int init[16], shared[16], counter;

  CIPHER_FN void start(const chacha20_batch_message& m) {
    chacha20_shared_start(init, shared, m.key, m.nonce);
    counter = m.counter;
  }
  CIPHER_FN void block(unsigned int ks[16], unsigned long long b) const {
    chacha20_block_from<CHACHA20_BATCH_ROUNDS_UNROLL>(ks, init, shared, counter + (unsigned int)b);
  }
};

// Block b of the message (bytes 64 b .. 64 b + 63, fewer for the last), in and out in their own
// places: 16-byte accesses (VECTOR: both 16-byte aligned) or byte by byte. The block's input is
// loaded before its rounds, which then hide the loads' latency. ct: what Poly1305 reads (the
// input when decrypting, else the output), zero past the end.
template <bool VECTOR>
CIPHER_FN void chacha20_xor_block(const chacha20_batch_message& m, const chacha20_lane_keystream& stream,
                                  unsigned long long b, cipher_vec4 ct[4]) {
  const unsigned long long at = 64u * b;
  const bool whole = at + 64u <= m.n;
  cipher_vec4 x[4];
  if (whole) {
#pragma unroll
    for (int j = 0; j < 4; ++j) x[j] = cipher_load16<VECTOR>(m.in + at + 16 * j);
  }
  unsigned int ks[16];
  stream.block(ks, b);
  if (whole) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const cipher_vec4 y = cipher_xor(x[j], ks + 4 * j);
      cipher_store16<VECTOR>(m.out + at + 16 * j, y);
      ct[j] = DECRYPT ? x[j] : y;
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const unsigned long long p = at + 16u * j;
    const unsigned int left = p >= m.n ? 0u : (m.n - p >= 16u ? 16u : (unsigned int)(m.n - p));
    const cipher_vec4 x = cipher_load_partial(m.in + (p < m.n ? p : 0), left);
    const cipher_vec4 y = cipher_keep_bytes(cipher_xor(x, ks + 4 * j), left);
    cipher_store_partial(m.out + (p < m.n ? p : 0), y, left);
    ct[j] = DECRYPT ? x : y;
  }
}

// The lane's blocks when in and out are in their own places (no exchange between lanes).
template <bool VECTOR>
CIPHER_FN void chacha20_lane_direct(const chacha20_batch_message& m, const chacha20_lanes& lanes,
                                    const chacha20_lane_keystream& stream, chacha20_lane_mac& mac,
                                    const chacha20_mac_key* key) {
  const unsigned long long blocks = (m.n + 63u) / 64u, parts = (m.n + 15u) / 16u;
  for (unsigned long long b = lanes.lane; b < blocks; b += lanes.count) {
    cipher_vec4 ct[4];
    chacha20_xor_block<VECTOR>(m, stream, b, ct);
    if (AEAD) {
      const unsigned long long here = parts - 4u * b;
      chacha20_mac_block(mac, ct, here >= 4u ? 4u : (unsigned int)here, b + 1u == blocks, *key);
    }
  }
}

CIPHER_FN cipher_vec4 chacha20_vec(const unsigned int* w) {
  cipher_vec4 v;
  v.x = w[0], v.y = w[1], v.z = w[2], v.w = w[3];
  return v;
}

CIPHER_FN void chacha20_copy4(unsigned int* to, const unsigned int* from) {
#pragma unroll
  for (int k = 0; k < 4; ++k) to[k] = from[k];
}

// The chunk after the message's last part (index parts), which holds the message's last mis bytes
// when 16 parts - mis < n: the bytes at offset 16 - mis of last || zero, last being the keystream
// part (ChaCha20, then XORed with the input) or the output block (AEAD) of the last part.
CIPHER_FN void chacha20_store_after_last(const unsigned char* in_base, unsigned char* out_base, unsigned long long n,
                                         unsigned int mis, const unsigned int last[4]) {
  const unsigned long long parts = (n + 15u) / 16u;
  int from, to;
  (void)cipher_chunk_bounds(parts, n, mis, from, to);
  if (from >= to) return;
  const unsigned int zero[4] = {0, 0, 0, 0};
  unsigned int y[4];
  cipher_extract16(last, zero, 16u - mis, y);
  if (!AEAD) {
    unsigned int in[4];
    cipher_load_part(in_base + 16u * parts, from, to, in);
#pragma unroll
    for (int k = 0; k < 4; ++k) y[k] ^= in[k];
  }
  cipher_store_part(out_base + 16u * parts, from, to, y);
}

// The lane's blocks when in and out are at the same mis = address % 16 (cipher_io.cuh): chunk c
// of the buffer holds message bytes [16 c - mis, 16 c - mis + 16), i.e. the bytes at offset
// o = 16 - mis of message parts c - 1 || c. ChaCha20: out chunk c = in chunk c ^ those bytes of
// the keystream. AEAD: message block t (offset mis of in chunks t || t + 1) ^ keystream part t is
// output block t (Poly1305 takes the ciphertext in message order), and out chunk c is the bytes at
// offset o of output blocks c - 1 || c. Block b's lane loads in chunks 4b .. 4b + 3 (AEAD: + 4) and
// stores out chunks 4b .. 4b + 3, of which chunk 4b needs part 4b - 1 from the lane below. Every
// lane runs every round (the exchange), a lane past the last block idle in it.
CIPHER_FN void chacha20_lane_chunks(const chacha20_batch_message& m, unsigned int mis, const chacha20_lanes& lanes,
                                    const chacha20_lane_keystream& stream, chacha20_lane_mac& mac,
                                    const chacha20_mac_key* key) {
  const unsigned char* in_base = m.in - mis;
  unsigned char* out_base = m.out - mis;
  const unsigned int o = 16u - mis;
  const unsigned long long n = m.n, blocks = (n + 63u) / 64u;
  const unsigned long long rounds = (blocks + lanes.count - 1u) / lanes.count;
  unsigned int carry[4] = {0, 0, 0, 0};  // lane 0: part 4b - 1 of its next round's block b
  unsigned int last[4] = {0, 0, 0, 0};   // the last block's lane: the message's last part
  for (unsigned long long round = 0; round < rounds; ++round) {
    const unsigned long long b = lanes.lane + round * lanes.count, t0 = 4u * b;
    const bool active = b < blocks;
    // The block's bounds in 32 bits: room = the buffer bytes from chunk t0 on that are the
    // message's, counting the mis bytes before it (n + mis - 16 t0, at most the 80 of chunks t0 ..
    // t0 + 4); part t0 + q exists when 16 q + mis < room, chunk t0 + c is whole when the message
    // has all of it: room >= 16 (c + 1), and not the message's first chunk when mis != 0.
    const unsigned long long room64 = active ? n + mis - 16u * t0 : 0;
    const unsigned int room = room64 >= 80u ? 80u : (unsigned int)room64;
    const bool head = b == 0 && mis != 0;
    unsigned int cur[4][4] = {};  // keystream parts (ChaCha20) or output blocks (AEAD) t0 .. t0 + 3
    unsigned int x[AEAD ? 5 : 4][4];
    if (active) {
#pragma unroll
      for (unsigned int c = 0; c < (AEAD ? 5u : 4u); ++c) {
        if ((c != 0 || !head) && room >= 16u * (c + 1u)) {
          cipher_load_chunk(in_base + 16u * (t0 + c), x[c]);
        } else {
          int from, to;
          (void)cipher_chunk_bounds(t0 + c, n, mis, from, to);
          cipher_load_part(in_base + 16u * (t0 + c), from, to, x[c]);
        }
      }
      unsigned int ks[16];
      stream.block(ks, b);
#pragma unroll
      for (int q = 0; q < 4; ++q) chacha20_copy4(cur[q], ks + 4 * q);
      if (AEAD) {
        cipher_vec4 ct[4];
#pragma unroll
        for (unsigned int q = 0; q < 4; ++q) {
          unsigned int in_block[4];
          cipher_extract16(x[q], x[q + 1], mis, in_block);  // message block t0 + q, zero past n
#pragma unroll
          for (int k = 0; k < 4; ++k) cur[q][k] ^= in_block[k];
          const unsigned int left = room <= 16u * q + mis         ? 0u
                                    : room - 16u * q - mis >= 16u ? 16u
                                                                  : room - 16u * q - mis;
          ct[q] = DECRYPT ? chacha20_vec(in_block) : cipher_keep_bytes(chacha20_vec(cur[q]), left);
        }
        const unsigned int here = room - mis >= 64u ? 4u : (room - mis + 15u) / 16u;  // parts of this block
        chacha20_mac_block(mac, ct, here, b + 1u == blocks, *key);
      }
    }
    unsigned int below[4], prev[4];
    chacha20_copy4(below, cur[3]);
    lanes.take_from_below(below, 1u);
    const bool first = lanes.lane == 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      prev[k] = first ? carry[k] : below[k];
      carry[k] = first ? below[k] : carry[k];
    }
    if (!active) continue;
#pragma unroll
    for (unsigned int q = 0; q < 4; ++q) {
      if (16u * q + mis >= room) break;  // no part t0 + q
      unsigned int y[4];
      cipher_extract16(q == 0 ? prev : cur[q - 1], cur[q], o, y);
      if (!AEAD) {
#pragma unroll
        for (int k = 0; k < 4; ++k) y[k] ^= x[q][k];
      }
      if ((q != 0 || !head) && room >= 16u * (q + 1u)) {
        cipher_store_chunk(out_base + 16u * (t0 + q), y);
      } else {
        int from, to;
        (void)cipher_chunk_bounds(t0 + q, n, mis, from, to);
        cipher_store_part(out_base + 16u * (t0 + q), from, to, y);
      }
    }
    if (b + 1u == blocks) {
      // The last part's words by selects (an index into cur would put cur in local memory).
      const unsigned int q = (room - mis - 1u) / 16u;
#pragma unroll
      for (int k = 0; k < 4; ++k) last[k] = q == 0 ? cur[0][k] : q == 1 ? cur[1][k] : q == 2 ? cur[2][k] : cur[3][k];
    }
  }
  if (blocks != 0 && lanes.lane == (unsigned int)((blocks - 1u) & (lanes.count - 1u)))
    chacha20_store_after_last(in_base, out_base, n, mis, last);
}

#if AEAD && DECRYPT
typedef const unsigned char* chacha20_tags;  // the expected tags, read
#else
typedef unsigned char* chacha20_tags;  // the tags (AEAD), written
#endif

// Launch: BLOCK threads, grid = ceil(count / (BLOCK / G)); AEAD: BLOCK / G entries of
// CHACHA20_MAC_KEY_ELEMS(log2 G) * 20 bytes of dynamic shared memory. lanes_log2: log2 G (0..5).
// tags: 16 bytes per message (AEAD). verdicts (count bytes) and failures (8 bytes, zero before
// the launch): AEAD decryption only, see the top; null otherwise.
__global__ void __launch_bounds__(BLOCK)
    chacha20_batch(const unsigned char* in, unsigned char* out, unsigned long long count,
                   unsigned long long message_bytes, const unsigned long long* offsets, const unsigned char* keys,
                   const unsigned char* aad, const unsigned long long* aad_offsets, chacha20_tags tags,
                   const unsigned char* ivs, unsigned int iv_bytes, unsigned int counter, unsigned int lanes_log2,
                   unsigned char* verdicts, unsigned long long* failures) {
  const unsigned int per_block = BLOCK >> lanes_log2;
  const unsigned long long first = (unsigned long long)blockIdx.x * per_block;
  const unsigned long long i = first + (threadIdx.x >> lanes_log2);
#if AEAD
  // Each message's one-time key, powers and Poly(AAD), once, by thread m for message m.
  extern __shared__ poly1305_elem mac_keys[];
  const unsigned int entry = CHACHA20_MAC_KEY_ELEMS(lanes_log2);
  if (threadIdx.x < per_block && first + threadIdx.x < count) {
    const unsigned long long k = first + threadIdx.x;
    const chacha20_batch_message m =
        chacha20_message_of(k, in, out, message_bytes, offsets, keys, ivs, iv_bytes, counter);
    const unsigned long long aad_at = aad_offsets ? aad_offsets[k] : 0;
    const unsigned long long aad_bytes = aad_offsets ? aad_offsets[k + 1] - aad_at : 0;
    chacha20_mac_key_store(mac_keys + threadIdx.x * entry, m, aad + aad_at, aad_bytes, lanes_log2);
  }
  __syncthreads();
  chacha20_mac_key mac_key;
  mac_key.e = mac_keys + (threadIdx.x >> lanes_log2) * entry;
  mac_key.lanes_log2 = lanes_log2;
  const chacha20_mac_key* key = &mac_key;
#else
  (void)aad, (void)aad_offsets, (void)tags;
  const chacha20_mac_key* key = nullptr;
#endif
#if !(AEAD && DECRYPT)
  (void)verdicts, (void)failures;
#endif
  if (i >= count) return;
  const chacha20_lanes lanes = chacha20_lanes::of_thread(lanes_log2);
  const chacha20_batch_message m =
      chacha20_message_of(i, in, out, message_bytes, offsets, keys, ivs, iv_bytes, counter);
  chacha20_lane_keystream stream;
  stream.start(m);
  chacha20_lane_mac mac;
  mac.h = AEAD && lanes.lane == lanes.count - 1u ? key->aad() : poly1305_zero();
  mac.last = poly1305_zero();
  unsigned int mis = 0;  // the chunk path's alignment: what each lane's blocks cover (chacha20_zero_lane)
#if ALIGNED
  chacha20_lane_direct<true>(m, lanes, stream, mac, key);
#else
  const unsigned long long a = reinterpret_cast<unsigned long long>(m.in),
                           o = reinterpret_cast<unsigned long long>(m.out);
  if (((a ^ o) & 15u) == 0) {
    mis = (unsigned int)(a & 15u);
    chacha20_lane_chunks(m, mis, lanes, stream, mac, key);
  } else {
    chacha20_lane_direct<false>(m, lanes, stream, mac, key);
  }
#endif
  (void)mis;
#if AEAD
  const unsigned long long aad_bytes = aad_offsets ? aad_offsets[i + 1] - aad_offsets[i] : 0;
  cipher_vec4 tag = {0u, 0u, 0u, 0u};  // set in the tag's lane
  const bool tag_lane = chacha20_mac_finish(mac, lanes, *key, m.n, aad_bytes, tag);
#if DECRYPT
  chacha20_verify(m, lanes, mis, tag_lane, tag, tags + 16u * i, verdicts + i, failures);
#else
  if (tag_lane) cipher_store_partial(tags + 16u * i, tag, 16u);
#endif
#endif
}
