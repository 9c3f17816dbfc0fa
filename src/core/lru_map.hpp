// LruMap: a map of bounded size that forgets its least recently used entry first. Not
// thread-safe (its users lock); evicted values are handed back so that a caller can release
// them after unlocking (releasing a module unloads it, which may take a while).
#pragma once

#include <cstddef>
#include <iterator>
#include <list>
#include <map>
#include <utility>
#include <vector>

namespace opkit::detail {

template <class Key, class Value>
class LruMap {
 public:
  // capacity 0 keeps nothing.
  explicit LruMap(std::size_t capacity) : capacity_(capacity) {}

  // The value of `key`, now the most recently used, or nullptr.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    recent_.splice(recent_.begin(), recent_, it->second);
    return &it->second->second;
  }

  // Adds key -> value unless the key is present (the present value wins); returns the value the
  // map now holds for key (`value` itself when the capacity is 0). Values pushed out go to `evicted`.
  Value insert(const Key& key, Value value, std::vector<Value>& evicted) {
    if (Value* present = find(key)) return *present;
    if (capacity_ == 0) return value;
    recent_.emplace_front(key, std::move(value));
    index_.emplace(key, recent_.begin());
    while (recent_.size() > capacity_) {
      index_.erase(recent_.back().first);
      evicted.push_back(std::move(recent_.back().second));
      recent_.pop_back();
    }
    return recent_.front().second;
  }

  std::size_t size() const noexcept { return recent_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  using Entries = std::list<std::pair<Key, Value>>;  // most recently used first
  std::size_t capacity_;
  Entries recent_;
  std::map<Key, typename Entries::iterator> index_;
};

}  // namespace opkit::detail
