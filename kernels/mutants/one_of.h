// The mutant launchers' dispatch from a bug value to the kernel compiled for it.
#pragma once

#include <type_traits>

namespace rb::kern {

// Calls f(std::integral_constant<E, V>{}) for the one V among Vs equal to e, so f can use the
// value as a template argument. Returns false, calling nothing, when no V equals e.
template <auto... Vs, class E, class F>
bool one_of(E e, F&& f) {
  return ((e == Vs ? (f(std::integral_constant<E, Vs>{}), true) : false) || ...);
}

}  // namespace rb::kern
