// Writes a few bytes of key material to device memory from a kernel parameter rather than by a
// host-to-device copy. A copy from pageable host memory cannot be captured into a CUDA graph and
// a pinned staging buffer would have to outlive every replay; a parameter is copied into the
// launch (and into a captured graph, which must hold the key to replay it). Thread i stores byte i:
// the index is the thread's, never a secret.
#define SECRET_STORE_MAX_BYTES 256

struct secret_store_bytes {
  unsigned char b[SECRET_STORE_MAX_BYTES];
};

extern "C" __global__ void secret_store(unsigned char* dst, secret_store_bytes bytes, unsigned int count) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = bytes.b[i];
}
