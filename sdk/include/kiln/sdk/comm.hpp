// Helpers for communication backends (C++, header-only): the plugin's entry points
// (KILN_COMM_PLUGIN), and the header a backend exchanges before a collective or a point-to-point
// transfer, with its checks. A header comes from another process,
// so it is outside input: every field is validated, with a message naming it, before it is used
// to size a buffer or index a table. See Note [Comm headers].
//
// Note [Comm headers]: before a collective moves data, its ranks all-gather a Header (what each
// called: operation, dtype, elements, root or reduction) and compare them, so that calls that
// differ fail naming the rank before any data moves; a send posts a P2pHeader (dtype, elements)
// before its data, and the receiver checks it against its tensor. The gloo and mpi backends use
// these; tests/distributed/fuzz_comm_header.cpp fuzzes them.
#pragma once

#include <kiln/sdk/host.hpp>
#include <kiln/sdk/kernel.hpp>
#include <kiln/sdk/plugin.h>

#include <cstdint>
#include <string>

namespace kiln::sdk::comm {

enum Kind : int64_t { kAllReduce = 1, kBroadcast, kAllGather, kReduceScatter, kBarrier };

// The largest transfer a header may announce: 2^40 bytes (1 TiB).
inline constexpr int64_t kMaxHeaderBytes = int64_t{1} << 40;

// What one rank called; four int64 on the wire.
struct Header {
  int64_t kind;   // Kind
  int64_t dtype;  // kiln_dtype, -1 for a barrier
  int64_t numel;
  int64_t arg;  // the root (broadcast), the kiln_reduce_op (all_reduce, reduce_scatter), else 0
};
static_assert(sizeof(Header) == 32, "Header is four int64 on the wire");

inline const char* kind_name(int64_t kind) {
  switch (kind) {
    case kAllReduce: return "all_reduce";
    case kBroadcast: return "broadcast";
    case kAllGather: return "all_gather";
    case kReduceScatter: return "reduce_scatter";
    case kBarrier: return "barrier";
  }
  return "an unknown operation";
}

// "all_reduce with 4 elements of float32 (SUM)"; any field may be out of range.
inline std::string describe(const Header& h) {
  std::string out = kind_name(h.kind);
  if (h.kind == kBarrier) return out;
  out += " with " + std::to_string(h.numel) + (h.numel == 1 ? " element of " : " elements of ");
  out += h.dtype >= 0 && h.dtype < KILN_NUM_DTYPES ? dtype_name(static_cast<int32_t>(h.dtype))
                                                   : "dtype code " + std::to_string(h.dtype);
  if (h.kind == kBroadcast) out += " from root " + std::to_string(h.arg);
  if (h.kind == kAllReduce || h.kind == kReduceScatter) {
    static const char* const ops[] = {"SUM", "AVG", "MIN", "MAX", "PRODUCT"};
    out += " (";
    out += h.arg >= 0 && h.arg < 5 ? ops[h.arg] : ("reduction code " + std::to_string(h.arg));
    out += ")";
  }
  return out;
}

// The bytes of `numel` elements of `dtype`, or -1 when the dtype is unknown, numel is negative or
// the size is over kMaxHeaderBytes.
inline int64_t payload_bytes(int64_t dtype, int64_t numel) {
  if (dtype < 0 || dtype >= KILN_NUM_DTYPES || numel < 0) return -1;
  int64_t item = static_cast<int64_t>(dtype_size(static_cast<int32_t>(dtype)));
  if (numel > kMaxHeaderBytes / item) return -1;
  return numel * item;
}

// "" when the header that `rank` sent is well formed for a group of `world_size`; otherwise what
// is wrong, naming the field.
inline std::string validate(const Header& h, int rank, int world_size) {
  std::string from = "the header from rank " + std::to_string(rank) + " has ";
  if (h.kind < kAllReduce || h.kind > kBarrier) {
    return from + "operation code " + std::to_string(h.kind) + " (not 1 to 5)";
  }
  if (h.kind == kBarrier) {
    if (h.dtype != -1 || h.numel != 0 || h.arg != 0) {
      return from + "a barrier with dtype " + std::to_string(h.dtype) + ", numel " +
             std::to_string(h.numel) + ", arg " + std::to_string(h.arg) + " (not -1, 0, 0)";
    }
    return "";
  }
  if (h.dtype < 0 || h.dtype >= KILN_NUM_DTYPES) {
    return from + "dtype code " + std::to_string(h.dtype) + " (not a kiln_dtype)";
  }
  if (payload_bytes(h.dtype, h.numel) < 0) {
    return from + "numel " + std::to_string(h.numel) + " (negative, or over " +
           std::to_string(kMaxHeaderBytes) + " bytes)";
  }
  if (h.kind == kBroadcast && (h.arg < 0 || h.arg >= world_size)) {
    return from + "root " + std::to_string(h.arg) + " (not a rank of the group of " +
           std::to_string(world_size) + ")";
  }
  if ((h.kind == kAllReduce || h.kind == kReduceScatter) &&
      (h.arg < KILN_REDUCE_SUM || h.arg > KILN_REDUCE_PRODUCT)) {
    return from + "reduction code " + std::to_string(h.arg) + " (not a kiln_reduce_op)";
  }
  if ((h.kind == kAllGather) && h.arg != 0) {
    return from + "arg " + std::to_string(h.arg) + " for all_gather (not 0)";
  }
  return "";
}

// The headers of every rank (all[r] from rank r, `world_size` of them): "" when every one is well
// formed and equal to rank 0's; otherwise what is wrong, naming the rank and the field.
inline std::string compare_headers(const Header* all, int world_size) {
  for (int r = 0; r < world_size; ++r) {
    std::string bad = validate(all[r], r, world_size);
    if (!bad.empty()) return bad + " (not kiln's protocol, or a corrupted transfer)";
  }
  for (int r = 1; r < world_size; ++r) {
    const Header& h = all[r];
    if (h.kind == all[0].kind && h.dtype == all[0].dtype && h.numel == all[0].numel &&
        h.arg == all[0].arg) {
      continue;
    }
    return "the ranks called different operations: rank " + std::to_string(r) + " called " +
           describe(h) + ", rank 0 called " + describe(all[0]) +
           " (every rank must call the same collectives in the same order, with the same sizes "
           "and dtypes)";
  }
  return "";
}

// A send's header: two int64.
struct P2pHeader {
  int64_t dtype;
  int64_t numel;
};

// The outcome of checking a received P2pHeader against the receiving tensor.
struct P2pCheck {
  std::string error;         // "" when the transfer matches
  int64_t drain_bytes = -1;  // on a mismatch, the bytes the sender sends (to drain); -1: unknown
  bool malformed = false;    // the header is not valid (the pair cannot be trusted any more)
};

// Checks the header `theirs` from `peer` against this rank's `dtype` x `numel`.
inline P2pCheck check_p2p(const P2pHeader& theirs, int64_t dtype, int64_t numel, int peer,
                          int64_t tag) {
  P2pCheck c;
  std::string from = "rank " + std::to_string(peer) + " (tag " + std::to_string(tag) + ") ";
  if (theirs.dtype < 0 || theirs.dtype >= KILN_NUM_DTYPES) {
    c.malformed = true;
    c.error = "the header from " + from + "has dtype code " + std::to_string(theirs.dtype) +
              " (not a kiln_dtype): not kiln's protocol, or a corrupted transfer";
    return c;
  }
  int64_t bytes = payload_bytes(theirs.dtype, theirs.numel);
  if (bytes < 0) {
    c.malformed = true;
    c.error = "the header from " + from + "has numel " + std::to_string(theirs.numel) +
              " (negative, or over " + std::to_string(kMaxHeaderBytes) +
              " bytes): not kiln's protocol, or a corrupted transfer";
    return c;
  }
  if (theirs.dtype == dtype && theirs.numel == numel) return c;
  c.drain_bytes = bytes;
  c.error = "rank " + std::to_string(peer) + " sent " + std::to_string(theirs.numel) +
            " elements of " + dtype_name(static_cast<int32_t>(theirs.dtype)) +
            ", but this rank receives " + std::to_string(numel) + " elements of " +
            dtype_name(static_cast<int32_t>(dtype)) + " (tag " + std::to_string(tag) + ")";
  return c;
}

// For kiln_plugin_probe: 1 when the core has communication backends (ABI 1.3), else 0 with the
// reason set, so that an older core lists the plugin as "not available" instead of failing.
inline int32_t probe_comm_interface(const kiln_host* host) {
  if (!KILN_HOST_HAS(host, register_comm_backend)) {
    host->set_error("this core has no communication backends (kiln plugin ABI 1.3 or newer)");
    return 0;
  }
  return 1;
}

// For kiln_plugin_init: keeps the host table (kiln::sdk::host()) and registers the backend.
inline kiln_status register_comm_backend(const kiln_host* host, const char* name,
                                         const kiln_comm_ops* ops, void* self = nullptr) {
  kiln::sdk::host() = host;
  if (probe_comm_interface(host) == 0) return 1;
  return host->register_comm_backend(name, ops, self);
}

}  // namespace kiln::sdk::comm

// The three entry points of a plugin that provides one communication backend: NAME, VERSION and
// SUMMARY are string literals for kiln-info (NAME is the backend's name too), OPS a pointer to its
// kiln_comm_ops.
#define KILN_COMM_PLUGIN(NAME, VERSION, SUMMARY, OPS)                                      \
  extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {          \
    static const kiln_plugin_info info = {                                                 \
        sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR, NAME, VERSION, SUMMARY}; \
    return &info;                                                                          \
  }                                                                                        \
  extern "C" KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {         \
    return kiln::sdk::comm::probe_comm_interface(host);                                    \
  }                                                                                        \
  extern "C" KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {      \
    return kiln::sdk::comm::register_comm_backend(host, NAME, OPS);                        \
  }
