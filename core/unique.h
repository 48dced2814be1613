// A list without repeats, in order of first appearance: the sweep's lists (harness/case.cpp)
// and app/lists.h's parse_int_list. Header-only plain C++, below every layer.
#pragma once

#include <set>
#include <utility>
#include <vector>

namespace rb {

// Values added one at a time, each kept at its first appearance. O(log n) an add through a set
// of those seen: --H 1:100000:+1 is a legal list, and the linear search per item this replaced
// made planning such a sweep quadratic (3.7 s in Release, 21 s under ASan, before a shard of it
// was picked).
template <class T>
class UniqueList {
 public:
  void add(const T& x) {
    if (seen_.insert(x).second) out_.push_back(x);
  }
  std::vector<T> take() && { return std::move(out_); }

 private:
  std::set<T> seen_;
  std::vector<T> out_;
};

template <class T>
std::vector<T> unique_in_order(const std::vector<T>& v) {
  UniqueList<T> u;
  for (const T& x : v) u.add(x);
  return std::move(u).take();
}

}  // namespace rb
