// OptionalArrayRef<T>: an ArrayRef<T> or nothing, as libtorch's c10::OptionalArrayRef (the type of
// optional size arguments: `OptionalIntArrayRef dims = std::nullopt`). It binds to what an
// ArrayRef binds to, a single value included, and points into it: like an ArrayRef, it is valid
// while the values it was made from live (for a temporary, the full expression).
#pragma once

#include <kiln/array_ref.h>
#include <kiln/error.h>

#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

namespace kiln {

template <class T>
class OptionalArrayRef {
 public:
  constexpr OptionalArrayRef() noexcept = default;
  constexpr OptionalArrayRef(std::nullopt_t) noexcept {}                                // NOLINT
  constexpr OptionalArrayRef(const std::optional<ArrayRef<T>>& other) : ref_(other) {}  // NOLINT
  // What converts to ArrayRef<T>: a vector, an ArrayRef, a span.
  template <class U>
    requires(!std::is_same_v<std::decay_t<U>, OptionalArrayRef> &&
             !std::is_same_v<std::decay_t<U>, std::nullopt_t> &&
             !std::is_same_v<std::decay_t<U>, std::optional<ArrayRef<T>>> &&
             std::is_convertible_v<U&&, ArrayRef<T>> && !std::is_convertible_v<U&&, T>)
  constexpr OptionalArrayRef(U&& value) : ref_(ArrayRef<T>(value)) {}  // NOLINT
  // One value. A value of another type (an int for int64_t) is converted by the caller, so the
  // temporary lives for the caller's full expression, not only for this constructor.
  constexpr OptionalArrayRef(const T& value) : ref_(ArrayRef<T>(value)) {}  // NOLINT
  // Braces: valid for the full expression that built the list, as ArrayRef's.
  constexpr OptionalArrayRef(std::initializer_list<T> list) : ref_(ArrayRef<T>(list)) {}  // NOLINT

  constexpr bool has_value() const noexcept { return ref_.has_value(); }
  constexpr explicit operator bool() const noexcept { return ref_.has_value(); }
  // The values; throws ValueError when there are none.
  constexpr ArrayRef<T> value() const {
    KILN_CHECK_VALUE(ref_.has_value(), "OptionalArrayRef::value: it holds no array");
    return *ref_;
  }
  constexpr ArrayRef<T> operator*() const { return value(); }
  constexpr const ArrayRef<T>* operator->() const {
    KILN_CHECK_VALUE(ref_.has_value(), "OptionalArrayRef::operator->: it holds no array");
    return &*ref_;
  }
  constexpr ArrayRef<T> value_or(ArrayRef<T> fallback) const { return ref_.value_or(fallback); }
  constexpr void reset() noexcept { ref_.reset(); }

  friend constexpr bool operator==(const OptionalArrayRef& a, std::nullopt_t) {
    return !a.has_value();
  }

 private:
  std::optional<ArrayRef<T>> ref_;
};

using OptionalIntArrayRef = OptionalArrayRef<int64_t>;

}  // namespace kiln
