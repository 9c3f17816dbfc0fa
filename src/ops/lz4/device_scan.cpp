// DeviceFrameScan (device_scan.hpp): FrameScanner reading through the walk's records.
#include "lz4/device_scan.hpp"

#include <algorithm>

#include "lz4/frame_scanner.hpp"

namespace opkit::ops::lz4 {
namespace {

// A complete item whose bytes come from the records that cover each read (the parser reads in
// input order, so a cursor finds them), else from device memory.
class ScannedBytes final : public FrameBytes {
 public:
  ScannedBytes(BufferView<const std::uint8_t> item, std::span<const Lz4ScanRecord> records, std::size_t& fallbacks)
      : item_(item), records_(records), fallbacks_(fallbacks) {}
  std::size_t end() const override { return item_.size(); }
  bool complete() const override { return true; }
  const std::uint8_t* read(std::size_t pos, std::size_t n) override {
    while (next_ + 1 < records_.size() && records_[next_ + 1].at <= pos) ++next_;
    if (next_ < records_.size()) {
      const Lz4ScanRecord& r = records_[next_];
      if (r.at <= pos && pos + n <= r.at + r.len) return r.bytes + (pos - r.at);
    }
    ++fallbacks_;
    const std::size_t len = std::min<std::size_t>(item_.size() - pos, std::max<std::size_t>(n, LZ4K_SCAN_BYTES));
    fallback_.resize(len);
    item_.subview(pos, len).copy_to(std::span<std::uint8_t>(fallback_));
    return fallback_.data();
  }

 private:
  BufferView<const std::uint8_t> item_;
  std::span<const Lz4ScanRecord> records_;
  std::size_t& fallbacks_;
  std::size_t next_ = 0;
  std::vector<std::uint8_t> fallback_;
};

}  // namespace

DeviceFrameScan::DeviceFrameScan(const DeviceLz4& engine, std::span<const BufferView<const std::uint8_t>> items)
    : items_(items) {
  const std::uint8_t* base = lowest(items);
  std::vector<unsigned long long> at(items.size()), size(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    size[i] = items[i].size();
    at[i] = items[i].empty() ? 0 : from_base(base, items[i].data());
  }
  scan_ = engine.scan(base, at, size);
}

ParsedInput DeviceFrameScan::parse(std::size_t item) {
  const std::span<const Lz4ScanRecord> records =
      std::span<const Lz4ScanRecord>(scan_.records)
          .subspan(scan_.first[item], scan_.first[item + 1] - scan_.first[item]);
  ScannedBytes bytes(items_[item], records, fallbacks_);
  return parse_frames(bytes);
}

}  // namespace opkit::ops::lz4
