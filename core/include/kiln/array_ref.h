// IntArrayRef: a non-owning view of int64 values that binds to braces, vectors and spans, like
// libtorch's (`x.view({2, -1})`). SmallVector: the inline-first vector tensors keep their sizes
// and strides in, so a small tensor costs no allocation for its shape.
#pragma once

#include <kiln/error.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <span>
#include <vector>

namespace kiln {

template <class T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
#if defined(__GNUC__) && !defined(__clang__)  // clang has no -Winit-list-lifetime
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  // Valid for the full expression that built the list, as in libtorch: `x.view({2, 3})`.
  constexpr ArrayRef(std::initializer_list<T> list)  // NOLINT
      : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}         // NOLINT
  constexpr ArrayRef(std::span<const T> s) : data_(s.data()), size_(s.size()) {}  // NOLINT
  template <class C, class = decltype(std::declval<const C&>().data()),
            class = std::enable_if_t<!std::is_same_v<C, std::vector<T>>>>
  ArrayRef(const C& c) : data_(c.data()), size_(c.size()) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  constexpr const T* cbegin() const { return data_; }
  constexpr const T* cend() const { return data_ + size_; }
  constexpr std::reverse_iterator<const T*> rbegin() const {
    return std::reverse_iterator<const T*>(end());
  }
  constexpr std::reverse_iterator<const T*> rend() const {
    return std::reverse_iterator<const T*>(begin());
  }
  constexpr const T& front() const {
    KILN_CHECK_INDEX(size_ != 0, "ArrayRef::front: the array is empty");
    return data_[0];
  }
  constexpr const T& back() const {
    KILN_CHECK_INDEX(size_ != 0, "ArrayRef::back: the array is empty");
    return data_[size_ - 1];
  }
  // The element at i, checked (operator[] is not).
  constexpr const T& at(size_t i) const {
    KILN_CHECK_INDEX(i < size_, "ArrayRef::at: index ", i, " is out of range for size ", size_);
    return data_[i];
  }
  // The m elements from the n-th, as libtorch's ArrayRef::slice.
  constexpr ArrayRef slice(size_t n, size_t m) const {
    KILN_CHECK_INDEX(n <= size_ && m <= size_ - n, "ArrayRef::slice: ", m, " elements from ", n,
                     " are out of range for size ", size_);
    return ArrayRef(data_ + n, m);
  }
  // The elements from the n-th on.
  constexpr ArrayRef slice(size_t n) const {
    KILN_CHECK_INDEX(n <= size_, "ArrayRef::slice: start ", n, " is out of range for size ", size_);
    return ArrayRef(data_ + n, size_ - n);
  }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i) {  // sizes are short: a loop, not a call to memcmp
      if (!(data_[i] == other.data_[i])) return false;
    }
    return true;
  }
  bool operator==(ArrayRef other) const { return equals(other); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;

// Prints [2, 3] like PyTorch's lists of sizes.
inline std::ostream& operator<<(std::ostream& out, IntArrayRef a) {
  out << '[';
  for (size_t i = 0; i < a.size(); ++i) out << (i ? ", " : "") << a[i];
  return out << ']';
}

// A vector of int64 with N elements stored inline.
template <size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, int64_t value = 0) { assign(n, value); }
  SmallVector(IntArrayRef a) { assign(a); }  // NOLINT
  SmallVector(std::initializer_list<int64_t> l) { assign(IntArrayRef(l)); }
  SmallVector(const SmallVector& o) { assign(IntArrayRef(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(IntArrayRef(o));
    return *this;
  }
  ~SmallVector() {
    if (data_ != inline_) delete[] data_;
  }

  void assign(IntArrayRef a) {
    reserve(a.size());
    const int64_t* src = a.data();
    if (src >= data_ || src + a.size() <= data_) {
      for (size_t i = 0; i < a.size(); ++i) data_[i] = src[i];  // short: no call to memmove
    } else {
      std::memmove(data_, src, a.size() * sizeof(int64_t));
    }
    size_ = a.size();
  }
  void assign(size_t n, int64_t value) {
    reserve(n);
    std::fill(data_, data_ + n, value);
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    int64_t* bigger = new int64_t[n];
    if (size_ != 0) std::memcpy(bigger, data_, size_ * sizeof(int64_t));
    if (data_ != inline_) delete[] data_;
    data_ = bigger;
    capacity_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    for (size_t i = size_ - 1; i > pos; --i) data_[i] = data_[i - 1];
    data_[pos] = v;
  }
  void erase(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) data_[i] = data_[i + 1];
    --size_;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }

  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data_[i]; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t* begin() { return data_; }
  int64_t* end() { return data_ + size_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  operator IntArrayRef() const { return IntArrayRef(data_, size_); }  // NOLINT
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

 private:
  int64_t inline_[N];
  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

using DimVector = SmallVector<6>;

}  // namespace kiln
