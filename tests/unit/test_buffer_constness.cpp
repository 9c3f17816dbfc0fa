// Compile-time checks of the buffer API's const-correctness: a const DeviceBuffer can be read but
// not written, and a view of const elements cannot be written either. These are static_asserts:
// the test binary does not build if the API lets a const buffer be written again.
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "opkit/buffer.hpp"

namespace {

using opkit::BufferView;
using opkit::DeviceBuffer;
using Buffer = DeviceBuffer<std::uint32_t>;

template <class B>
concept fillable = requires(B& b) {
  b.fill(std::uint32_t{1});
};
template <class B>
concept uploadable = requires(B& b, std::span<const std::uint32_t> host) {
  b.copy_from(host);
};
template <class B>
concept downloadable = requires(B& b, std::span<std::uint32_t> host) {
  b.copy_to(host);
};
template <class B>
concept mutable_view = requires(B& b) {
  BufferView<std::uint32_t>(b.view());
};

static_assert(std::is_same_v<decltype(std::declval<const Buffer&>().data()), const std::uint32_t*>);
static_assert(std::is_same_v<decltype(std::declval<Buffer&>().data()), std::uint32_t*>);
static_assert(std::is_same_v<decltype(std::declval<const Buffer&>().view()), BufferView<const std::uint32_t>>);

static_assert(fillable<Buffer> && uploadable<Buffer> && downloadable<Buffer>);
static_assert(!fillable<const Buffer> && !uploadable<const Buffer>, "a const DeviceBuffer must not be writable");
static_assert(downloadable<const Buffer>, "reading a const DeviceBuffer stays allowed");
static_assert(mutable_view<Buffer> && !mutable_view<const Buffer>);
static_assert(!std::is_convertible_v<const Buffer&, BufferView<std::uint32_t>>);
static_assert(std::is_convertible_v<const Buffer&, BufferView<const std::uint32_t>>);

// A view's constness is its element type's, as with std::span.
static_assert(fillable<BufferView<std::uint32_t>> && fillable<const BufferView<std::uint32_t>>);
static_assert(!fillable<BufferView<const std::uint32_t>> && !uploadable<BufferView<const std::uint32_t>>);
static_assert(downloadable<BufferView<const std::uint32_t>>);

// Launch arguments keep the buffer's constness: a const buffer passes as a const pointer.
static_assert(
    std::is_same_v<decltype(opkit::LaunchArg<Buffer>::convert(std::declval<const Buffer&>())), const std::uint32_t*>);
static_assert(std::is_same_v<decltype(opkit::LaunchArg<Buffer>::convert(std::declval<Buffer&>())), std::uint32_t*>);

}  // namespace
