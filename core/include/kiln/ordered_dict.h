// kiln::OrderedDict — a dictionary that keeps insertion order, as libtorch's torch::OrderedDict
// (and Python's OrderedDict). Module::named_parameters(), named_buffers(), named_children() and
// named_modules() return one.
//
//   kiln::OrderedDict<std::string, int> dict = {{"a", 1}, {"b", 2}};
//   dict.insert("c", 3);              // throws if "c" is present: "Key 'c' already defined"
//   dict["a"];                        // 1; throws for a missing key: "Key 'z' is not defined"
//   dict[0].key();                    // "a": items are also reachable by position
//   for (auto& item : dict) item.key(), item.value();
//   for (auto& [key, value] : dict) ...   // items also bind as (key, value)
//
// Copies copy every item (a Tensor value still shares its data, as a Tensor copy does); `insert`
// may invalidate iterators and references to items. The key description ("Key" by default,
// "Parameter", "Buffer", "Submodule" in a Module) starts the messages of the errors, which are
// kiln::ValueError for a duplicate key and kiln::IndexError for a missing key or position.
#pragma once

#include <kiln/error.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln {

namespace detail {
// An OrderedDict's (key, value) pair; OrderedDict<Key, Value>::Item names it.
template <class Key, class Value>
class OrderedDictItem {
 public:
  OrderedDictItem(Key key, Value value) : pair_(std::move(key), std::move(value)) {}

  const Key& key() const noexcept { return pair_.first; }
  Value& value() noexcept { return pair_.second; }
  const Value& value() const noexcept { return pair_.second; }
  const std::pair<Key, Value>& pair() const noexcept { return pair_; }
  // The value, as libtorch's `*item` and `item->`.
  Value& operator*() noexcept { return value(); }
  const Value& operator*() const noexcept { return value(); }
  Value* operator->() noexcept { return &value(); }
  const Value* operator->() const noexcept { return &value(); }

  // Structured bindings: `auto& [key, value] = item` (the key is const).
  template <size_t I>
  decltype(auto) get() & {
    if constexpr (I == 0) {
      return key();
    } else {
      return value();
    }
  }
  template <size_t I>
  decltype(auto) get() const& {
    if constexpr (I == 0) {
      return key();
    } else {
      return value();
    }
  }
  template <size_t I>
  decltype(auto) get() && {
    if constexpr (I == 0) {
      return std::move(pair_.first);
    } else {
      return std::move(pair_.second);
    }
  }

 private:
  std::pair<Key, Value> pair_;
};
}  // namespace detail

template <class Key, class Value>
class OrderedDict {
 public:
  using Item = detail::OrderedDictItem<Key, Value>;
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  // An empty dict whose errors call its keys `key_description`.
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}
  // A dict of these items, in order; throws for a duplicate key.
  OrderedDict(std::initializer_list<Item> items) {  // NOLINT: as libtorch
    reserve(items.size());
    for (const Item& item : items) insert(item.key(), item.value());
  }

  const std::string& key_description() const noexcept { return key_description_; }

  // --- access ----------------------------------------------------------------------------
  // The first and the last item; throw when the dict is empty.
  Item& front() { return items_.at(checked_end("front")); }
  const Item& front() const { return items_.at(checked_end("front")); }
  Item& back() { return items_.at(checked_end("back") + items_.size() - 1); }
  const Item& back() const { return items_.at(checked_end("back") + items_.size() - 1); }
  // The item at `index` (insertion order); throws IndexError past the end.
  Item& operator[](size_t index) { return items_[checked_index(index)]; }
  const Item& operator[](size_t index) const { return items_[checked_index(index)]; }
  // The value of `key`; throws IndexError "<description> '<key>' is not defined".
  Value& operator[](const Key& key) { return at(key); }
  const Value& operator[](const Key& key) const { return at(key); }
  Value& at(const Key& key) { return items_[checked_position(key)].value(); }
  const Value& at(const Key& key) const { return items_[checked_position(key)].value(); }
  // The item at `index`, as operator[] (so that at(0) is never read as a null key).
  Item& at(size_t index) { return items_[checked_index(index)]; }
  const Item& at(size_t index) const { return items_[checked_index(index)]; }
  // The value of `key`, or null when absent.
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

  // --- iteration (items in insertion order) ---------------------------------------------------
  Iterator begin() { return items_.begin(); }
  ConstIterator begin() const { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator end() const { return items_.end(); }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  void reserve(size_t capacity) {
    index_.reserve(capacity);
    items_.reserve(capacity);
  }

  // --- modification ---------------------------------------------------------------------------
  // Appends (key, value) and returns the stored value; throws ValueError
  // "<description> '<key>' already defined" when the key is present.
  template <class K, class V>
  Value& insert(K&& key, V&& value) {
    KILN_CHECK_VALUE(index_.count(key) == 0, key_description_, " '", key, "' already defined");
    items_.emplace_back(Key(key), Value(std::forward<V>(value)));
    index_.emplace(std::forward<K>(key), items_.size() - 1);
    return items_.back().value();
  }
  Value& insert(Key key, Value&& value) {
    return insert<Key, Value>(std::move(key), std::move(value));
  }
  // Inserts every item of `other`, in its order; throws on the first key already present.
  void update(const OrderedDict& other) {
    reserve(size() + other.size());
    for (const Item& item : other) insert(item.key(), item.value());
  }
  void update(OrderedDict&& other) {
    reserve(size() + other.size());
    for (Item& item : other) insert(item.key(), std::move(item.value()));
  }
  // Removes `key`'s item and returns its value; throws IndexError when absent.
  Value pop(const Key& key) {
    size_t position = checked_position(key);
    Value value = std::move(items_[position].value());
    remove_at(position);
    return value;
  }
  // Removes `key`'s item; throws IndexError "<description> '<key>' doesn't exist" when absent.
  void erase(const Key& key) {
    auto it = index_.find(key);
    KILN_CHECK_INDEX(it != index_.end(), key_description_, " '", key, "' doesn't exist");
    remove_at(it->second);
  }
  void clear() {
    index_.clear();
    items_.clear();
  }

  // --- copies -----------------------------------------------------------------------------
  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(size());
    for (const Item& item : items_) out.push_back(item.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(size());
    for (const Item& item : items_) out.push_back(item.value());
    return out;
  }
  std::vector<std::pair<Key, Value>> pairs() const {
    std::vector<std::pair<Key, Value>> out;
    out.reserve(size());
    for (const Item& item : items_) out.push_back(item.pair());
    return out;
  }

 private:
  // 0 when the dict is not empty (for front/back); throws otherwise.
  size_t checked_end(const char* what) const {
    KILN_CHECK_INDEX(!items_.empty(), "Called ", what, "() on an empty OrderedDict");
    return 0;
  }
  size_t checked_index(size_t index) const {
    KILN_CHECK_INDEX(index < items_.size(), "Index ", index, " is out of bounds (the ",
                     "OrderedDict has ", items_.size(), " items)");
    return index;
  }
  size_t checked_position(const Key& key) const {
    auto it = index_.find(key);
    KILN_CHECK_INDEX(it != index_.end(), key_description_, " '", key, "' is not defined");
    return it->second;
  }
  void remove_at(size_t position) {
    index_.erase(items_[position].key());
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(position));
    for (auto& entry : index_) {
      if (entry.second > position) --entry.second;
    }
  }

  std::unordered_map<Key, size_t> index_;
  std::vector<Item> items_;
  std::string key_description_ = "Key";
};

// Both hold the same keys with equal values in the same order.
template <class Key, class Value>
bool operator==(const OrderedDict<Key, Value>& a, const OrderedDict<Key, Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].key() == b[i].key()) || !(a[i].value() == b[i].value())) return false;
  }
  return true;
}

}  // namespace kiln

// Structured bindings on an OrderedDict item: (const Key, Value).
template <class Key, class Value>
struct std::tuple_size<kiln::detail::OrderedDictItem<Key, Value>>
    : std::integral_constant<size_t, 2> {};
template <class Key, class Value>
struct std::tuple_element<0, kiln::detail::OrderedDictItem<Key, Value>> {
  using type = const Key;
};
template <class Key, class Value>
struct std::tuple_element<1, kiln::detail::OrderedDictItem<Key, Value>> {
  using type = Value;
};
