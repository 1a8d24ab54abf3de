// A per-thread pool for the two small objects every tensor allocates (its TensorImpl and its
// Storage, each with its shared_ptr control block). See Note [Small object pool].
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace kiln::detail {

// Note [Small object pool]: `x + y` on small tensors allocates a TensorImpl and a Storage through
// make_shared; glibc's malloc and free cost about 230 instructions a pair (callgrind, a 1-element
// add), a tenth of the whole operator. allocate_shared with PoolAllocator keeps freed blocks of
// each control-block type in a thread-local list of up to kPoolBlocks and hands them out again in
// a few instructions. A block freed on another thread than the one that allocated it joins the
// freeing thread's list (blocks are plain memory). A thread's list is given back to malloc when
// the thread exits; a block freed after that goes straight to operator delete. Builds with
// AddressSanitizer skip the pool so that use-after-free stays visible.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kPoolEnabled = false;
#else
inline constexpr bool kPoolEnabled = true;
#endif
inline constexpr uint32_t kPoolBlocks = 256;

template <size_t Size>
class SizePool {
 public:
  static void* take() {
    List& l = list();
    if (l.head == nullptr) return ::operator new(Size);
    Node* n = l.head;
    l.head = n->next;
    --l.count;
    return n;
  }
  static void give(void* p) {
    List& l = list();
    if (l.count >= kPoolBlocks || l.closed) {
      ::operator delete(p, Size);
      return;
    }
    if (!l.reaper_armed) arm(l);
    auto* n = static_cast<Node*>(p);
    n->next = l.head;
    l.head = n;
    ++l.count;
  }

 private:
  struct Node {
    Node* next;
  };
  // Trivially destructible, so it needs no guard on access; Reaper empties it at thread exit.
  struct List {
    Node* head = nullptr;
    uint32_t count = 0;
    bool reaper_armed = false;
    bool closed = false;
  };
  struct Reaper {
    ~Reaper() {
      List& l = list();
      l.closed = true;
      while (l.head != nullptr) {
        Node* n = l.head;
        l.head = n->next;
        ::operator delete(n, Size);
      }
      l.count = 0;
    }
  };
  static List& list() {
    static thread_local List l __attribute__((tls_model("initial-exec")));
    return l;
  }
  static void arm(List& l) {
    static thread_local Reaper reaper;
    (void)reaper;
    l.reaper_armed = true;
  }
};

// A std allocator over SizePool, for std::allocate_shared (which rebinds it to its control
// block type, so each block type gets its own pool).
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(size_t n) {
    static_assert(sizeof(T) >= sizeof(void*));
    if (!kPoolEnabled || n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(SizePool<sizeof(T)>::take());
  }
  void deallocate(T* p, size_t n) noexcept {
    if (!kPoolEnabled || n != 1) {
      ::operator delete(p, n * sizeof(T));
      return;
    }
    SizePool<sizeof(T)>::give(p);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace kiln::detail
