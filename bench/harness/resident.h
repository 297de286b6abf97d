// What the cases of a shape share (its inputs, a decoder layer), kept on the device across cases within a
// byte budget, the least recently used dropped first. The repetitions run interleaved in random order, so a
// shape's cases run far apart; with only one shape's inputs kept at a time, nearly every repetition would
// rebuild them, and set-up would dominate the run's wall time.
// Plain C++ (no CUDA), so that its bookkeeping is tested without a GPU (tests/test_harness_cpu.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <utility>

namespace sb::bench {

// The budget of a bench binary's resident set: --keep-inputs=GIB, or, without the flag (keep_inputs_gib < 0),
// `default_share` of the device's memory: a third for bench_rmsnorm and bench_e2e, none for bench_attention
// (bench_attention.cpp says why).
inline constexpr double kResidentShare = 1.0 / 3.0;
std::size_t resident_budget_bytes(double keep_inputs_gib, std::size_t device_total_bytes,
                                  double default_share = kResidentShare);

template <typename T>
class ResidentSet {
 public:
  // `on_drop(key, object)` runs before an object is dropped (to keep what outlives it: its references).
  using OnDrop = std::function<void(const std::string&, T&)>;
  explicit ResidentSet(std::size_t budget_bytes, OnDrop on_drop = {})
      : budget_(budget_bytes), on_drop_(std::move(on_drop)) {}

  // The object kept for `key`, now the most recently used; null if none is.
  T* find(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().object.get();
      }
    return nullptr;
  }
  // Drops the least recently used objects until `bytes` more fit the budget (all of them if `bytes` alone
  // does not: one object over the budget is still kept while it is used).
  void make_room(std::size_t bytes) {
    while (!entries_.empty() && resident_ + bytes > budget_) drop_last();
  }
  // Keeps `object` (`bytes` of device memory) as the most recently used, dropping others as make_room does.
  T* insert(const std::string& key, std::unique_ptr<T> object, std::size_t bytes) {
    make_room(bytes);
    entries_.push_front(Entry{key, std::move(object), bytes});
    resident_ += bytes;
    return entries_.front().object.get();
  }
  // The object kept for `key`, else the one make() returns (a std::unique_ptr<T> holding `bytes` of device
  // memory), made after the room for it (so that the dropped objects' memory is free for it) and kept.
  template <typename Make>
  T& find_or_make(const std::string& key, std::size_t bytes, Make&& make) {
    if (T* kept = find(key)) return *kept;
    make_room(bytes);
    return *insert(key, make(), bytes);
  }
  void clear() {
    while (!entries_.empty()) drop_last();
  }
  std::size_t size() const { return entries_.size(); }
  std::size_t resident_bytes() const { return resident_; }
  ~ResidentSet() = default;  // at exit: no on_drop (nothing outlives the process)

 private:
  struct Entry {
    std::string key;
    std::unique_ptr<T> object;
    std::size_t bytes;
  };
  void drop_last() {
    Entry& e = entries_.back();
    if (on_drop_) on_drop_(e.key, *e.object);
    resident_ -= e.bytes;
    entries_.pop_back();
  }
  std::size_t budget_;
  OnDrop on_drop_;
  std::list<Entry> entries_;  // most recently used first
  std::size_t resident_ = 0;
};

}  // namespace sb::bench
