// opkit::mpi::BatchHasher: each batch of messages split into one run per rank (MPI_Scatterv of
// the message lengths and bytes), hashed on every rank, the digests gathered on rank 0.
#include <mpi.h>
#include <omp.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "opkit/error.hpp"
#include "opkit/mpi.hpp"

namespace opkit::mpi {
namespace {

constexpr std::uint64_t finished_flag = 0, batch_flag = 1;

int as_count(std::uint64_t n, const char* what) {
  if (n > static_cast<std::uint64_t>(INT_MAX))
    throw Error(Errc::invalid_argument, "mpi BatchHasher",
                std::string(what) + " " + std::to_string(n) + " is over MPI's limit of 2^31 - 1; use smaller batches");
  return static_cast<int>(n);
}

// Rank q's run is messages [bounds[q], bounds[q + 1]), cut so that each run holds about the same
// bytes, counting each message as 64 bytes more (its padding block and per-message cost).
std::vector<std::size_t> split(std::span<const std::uint64_t> offsets, int ranks) {
  const std::size_t count = offsets.size() - 1;
  const double total = static_cast<double>(offsets.back() - offsets.front()) + 64.0 * static_cast<double>(count);
  std::vector<std::size_t> bounds(static_cast<std::size_t>(ranks) + 1, count);
  bounds[0] = 0;
  std::size_t i = 0;
  for (int q = 1; q < ranks; ++q) {
    const double goal = total * q / ranks;
    while (i < count && static_cast<double>(offsets[i] - offsets.front()) + 64.0 * static_cast<double>(i) < goal) ++i;
    bounds[static_cast<std::size_t>(q)] = i;
  }
  return bounds;
}

// A 32-byte digest as one MPI element, so that counts are messages, not bytes.
class DigestType {
 public:
  DigestType() {
    MPI_Type_contiguous(static_cast<int>(ops::sha256_digest_bytes), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~DigestType() { MPI_Type_free(&type_); }
  DigestType(const DigestType&) = delete;
  DigestType& operator=(const DigestType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

void limit_cpu_threads(const World& world) {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) omp_set_num_threads(node_share_of_cores(omp_get_num_procs(), world));
}

// Auto or a GPU: this rank's GPU from the node's share; the host CPU when the node has none.
ops::HashOptions rank_where(ops::HashOptions where, const World& world) {
  if (where.host_cpu || (where.device && !where.device->is_gpu())) {
    limit_cpu_threads(world);
    return where;
  }
  const std::vector<Device> gpus = ops::sha256_support().gpus();
  if (gpus.empty()) {
    if (where.device) return where;  // a GPU that the automatic choice does not list: keep the caller's
    where.host_cpu = true;
    limit_cpu_threads(world);
    return where;
  }
  where.device = node_share(gpus, world).front();
  return where;
}

}  // namespace

BatchHasher::BatchHasher(ops::HashAlgo algo, ops::HashOptions where) : algo_(algo), world_(init()) {
  where_ = rank_where(std::move(where), world_);
}

void BatchHasher::hash_run(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
                           std::span<std::uint8_t> digests) const {
  if (offsets.size() < 2) return;
  if (algo_ == ops::HashAlgo::sha256)
    ops::sha256(data, offsets, digests, where_);
  else
    ops::sha256d(data, offsets, digests, where_);
}

void BatchHasher::hash(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
                       std::span<std::uint8_t> digests) {
  const char* stage = "mpi BatchHasher::hash";
  if (world_.rank != 0) throw Error(Errc::invalid_argument, stage, "only rank 0 gives batches; other ranks serve()");
  if (finished_) throw Error(Errc::invalid_argument, stage, "hash() after finish()");
  if (offsets.empty()) throw Error(Errc::invalid_argument, stage, "offsets must hold count + 1 entries");
  const std::size_t count = offsets.size() - 1;
  if (digests.size() != count * ops::sha256_digest_bytes)
    throw Error(Errc::invalid_argument, stage,
                "digests hold " + std::to_string(digests.size()) + " bytes for " + std::to_string(count) + " messages");
  for (std::size_t i = 0; i < count; ++i)
    if (offsets[i] > offsets[i + 1])
      throw Error(Errc::invalid_argument, stage, "offsets decrease at message " + std::to_string(i));
  if (offsets.back() > data.size())
    throw Error(Errc::invalid_argument, stage, "offsets run past the data's " + std::to_string(data.size()) + " bytes");
  if (count == 0) return;
  as_count(offsets.back() - offsets.front(), "a batch of bytes");
  as_count(count, "a batch of messages");

  const auto ranks = static_cast<std::size_t>(world_.size);
  const std::vector<std::size_t> bounds = split(offsets, world_.size);
  std::vector<std::uint64_t> header(1 + 2 * ranks);
  std::vector<int> message_counts(ranks), message_displs(ranks), byte_counts(ranks), byte_displs(ranks);
  header[0] = batch_flag;
  for (std::size_t q = 0; q < ranks; ++q) {
    header[1 + q] = bounds[q + 1] - bounds[q];
    header[1 + ranks + q] = offsets[bounds[q + 1]] - offsets[bounds[q]];
    message_counts[q] = static_cast<int>(header[1 + q]);
    message_displs[q] = static_cast<int>(bounds[q]);
    byte_counts[q] = static_cast<int>(header[1 + ranks + q]);
    byte_displs[q] = static_cast<int>(offsets[bounds[q]] - offsets.front());
  }
  std::vector<std::uint64_t> lengths(count);
  for (std::size_t i = 0; i < count; ++i) lengths[i] = offsets[i + 1] - offsets[i];

  MPI_Bcast(header.data(), static_cast<int>(header.size()), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Scatterv(lengths.data(), message_counts.data(), message_displs.data(), MPI_UINT64_T, MPI_IN_PLACE, 0,
               MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Scatterv(data.data() + offsets.front(), byte_counts.data(), byte_displs.data(), MPI_BYTE, MPI_IN_PLACE, 0,
               MPI_BYTE, 0, MPI_COMM_WORLD);
  hash_run(data, offsets.first(bounds[1] + 1), digests.first(bounds[1] * ops::sha256_digest_bytes));
  const DigestType digest;
  MPI_Gatherv(MPI_IN_PLACE, 0, digest.get(), digests.data(), message_counts.data(), message_displs.data(), digest.get(),
              0, MPI_COMM_WORLD);
}

void BatchHasher::finish() {
  if (world_.rank != 0 || finished_) return;
  finished_ = true;
  std::vector<std::uint64_t> header(1 + 2 * static_cast<std::size_t>(world_.size), 0);
  header[0] = finished_flag;
  MPI_Bcast(header.data(), static_cast<int>(header.size()), MPI_UINT64_T, 0, MPI_COMM_WORLD);
}

void BatchHasher::serve() {
  if (world_.rank == 0) throw Error(Errc::invalid_argument, "mpi BatchHasher::serve", "rank 0 gives the batches");
  const auto ranks = static_cast<std::size_t>(world_.size);
  const auto me = static_cast<std::size_t>(world_.rank);
  std::vector<std::uint64_t> header(1 + 2 * ranks), lengths, offsets;
  std::vector<std::uint8_t> data, digests;
  const DigestType digest;
  for (;;) {
    MPI_Bcast(header.data(), static_cast<int>(header.size()), MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (header[0] == finished_flag) return;
    const std::uint64_t count = header[1 + me], bytes = header[1 + ranks + me];
    lengths.resize(count);
    data.resize(bytes);
    MPI_Scatterv(nullptr, nullptr, nullptr, MPI_UINT64_T, lengths.data(), static_cast<int>(count), MPI_UINT64_T, 0,
                 MPI_COMM_WORLD);
    MPI_Scatterv(nullptr, nullptr, nullptr, MPI_BYTE, data.data(), static_cast<int>(bytes), MPI_BYTE, 0,
                 MPI_COMM_WORLD);
    offsets.assign(count + 1, 0);
    for (std::size_t i = 0; i < count; ++i) offsets[i + 1] = offsets[i] + lengths[i];
    digests.resize(count * ops::sha256_digest_bytes);
    hash_run(data, offsets, digests);
    MPI_Gatherv(digests.data(), static_cast<int>(count), digest.get(), nullptr, nullptr, nullptr, digest.get(), 0,
                MPI_COMM_WORLD);
  }
}

}  // namespace opkit::mpi
