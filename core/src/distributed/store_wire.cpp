#include "store_wire.h"

#include <algorithm>
#include <cstring>

namespace kiln::distributed::detail::wire {
namespace {

std::string bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

std::string opname(uint8_t op) {
  switch (op) {
    case kSet: return "set";
    case kGet: return "get";
    case kAdd: return "add";
    case kHello: return "hello";
    case kBye: return "bye";
  }
  return "opcode " + std::to_string(op);
}

// Reads `size` bytes into `out`, growing it as the bytes arrive (a length from outside must not
// allocate before the bytes exist).
bool read_string(ByteReader& in, std::string& out, uint64_t size) {
  constexpr uint64_t kChunk = 1 << 16;
  out.clear();
  while (out.size() < size) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, size - out.size()));
    size_t at = out.size();
    out.resize(at + n);
    if (!in.read(out.data() + at, n)) return false;
  }
  return true;
}

}  // namespace

bool BufferReader::read(void* out, size_t size) {
  if (size > size_ - offset_) return false;
  if (size > 0) std::memcpy(out, data_ + offset_, size);
  offset_ += size;
  return true;
}

ReadStatus read_request(ByteReader& in, Request& r, std::string& error) {
  uint32_t key_size = 0;
  uint64_t value_size = 0;
  if (!in.read(&r.op, 1)) return ReadStatus::kClosed;
  if (r.op < kSet || r.op > kBye) {
    error = "a request's opcode is " + std::to_string(r.op) + " (not 1 to 5)";
    return ReadStatus::kBad;
  }
  if (!in.read(&key_size, 4)) return ReadStatus::kClosed;
  if (key_size > kMaxKeyBytes) {
    error = "a " + opname(r.op) + " request's key length is " + std::to_string(key_size) +
            " bytes (at most " + std::to_string(kMaxKeyBytes) + ")";
    return ReadStatus::kBad;
  }
  if (!read_string(in, r.key, key_size) || !in.read(&value_size, 8)) return ReadStatus::kClosed;
  if (value_size > kMaxValueBytes) {
    error = "a " + opname(r.op) + " request's value length is " + std::to_string(value_size) +
            " bytes (at most " + std::to_string(kMaxValueBytes) + ")";
    return ReadStatus::kBad;
  }
  if (!read_string(in, r.value, value_size)) return ReadStatus::kClosed;
  return ReadStatus::kOk;
}

std::string serve_request(std::map<std::string, std::string>& data, Session& session,
                          const Request& r, std::string& reply) {
  const char done = 0;
  if (r.op == kSet) {
    data[r.key] = r.value;
    reply.push_back(done);
    return "";
  }
  if (r.op == kGet) {
    auto it = data.find(r.key);
    reply.push_back(it != data.end() ? 1 : 0);
    if (it != data.end()) {
      uint64_t size = it->second.size();
      reply += bytes(&size, 8) + it->second;
    }
    return "";
  }
  if (r.op == kAdd) {
    if (r.value.size() != 8) {
      return "an add request's value is " + std::to_string(r.value.size()) +
             " bytes (an int64 is 8)";
    }
    int64_t delta = 0, value = 0;
    std::memcpy(&delta, r.value.data(), 8);
    auto it = data.find(r.key);
    if (it != data.end()) {
      if (it->second.size() != 8) {
        return "add on key '" + r.key.substr(0, 64) + "', whose value is " +
               std::to_string(it->second.size()) + " bytes, not an int64 counter";
      }
      std::memcpy(&value, it->second.data(), 8);
    }
    if (__builtin_add_overflow(value, delta, &value)) {
      return "add on key '" + r.key.substr(0, 64) + "': the counter overflows int64";
    }
    data[r.key] = bytes(&value, 8);
    reply += bytes(&value, 8);
    return "";
  }
  if (r.op == kHello) {
    if (r.value.size() != 8) {
      return "a hello request's rank is " + std::to_string(r.value.size()) +
             " bytes (an int64 is 8)";
    }
    int64_t rank = 0;
    std::memcpy(&rank, r.value.data(), 8);
    if (rank < 0 || rank >= kMaxRank) {
      return "a hello request's rank is " + std::to_string(rank) + " (not 0 to 2^30)";
    }
    if (session.rank >= 0 && session.rank != rank) {
      return "a second hello on one connection, rank " + std::to_string(rank) + " after rank " +
             std::to_string(session.rank);
    }
    session.rank = rank;
    reply.push_back(done);
    return "";
  }
  if (r.op == kBye) {
    session.said_bye = true;
    reply.push_back(done);
    return "";
  }
  return "a request's opcode is " + std::to_string(r.op) + " (not 1 to 5)";
}

std::string encode_request(uint8_t op, const std::string& key, const std::string& value) {
  uint32_t key_size = static_cast<uint32_t>(key.size());
  uint64_t value_size = value.size();
  return bytes(&op, 1) + bytes(&key_size, 4) + key + bytes(&value_size, 8) + value;
}

std::string read_done_reply(ByteReader& in, bool& closed) {
  uint8_t done = 0;
  closed = !in.read(&done, 1);
  if (closed || done == 0) return "";
  return "the store answered " + std::to_string(done) + " where it acknowledges with 0";
}

std::string read_get_reply(ByteReader& in, std::optional<std::string>& value, bool& closed) {
  value.reset();
  uint8_t found = 0;
  closed = !in.read(&found, 1);
  if (closed) return "";
  if (found > 1) return "a get answer's found flag is " + std::to_string(found) + " (not 0 or 1)";
  if (found == 0) return "";
  uint64_t size = 0;
  closed = !in.read(&size, 8);
  if (closed) return "";
  if (size > kMaxValueBytes) {
    return "a get answer's value length is " + std::to_string(size) + " bytes (at most " +
           std::to_string(kMaxValueBytes) + ")";
  }
  std::string v;
  closed = !read_string(in, v, size);
  if (!closed) value = std::move(v);
  return "";
}

std::string read_add_reply(ByteReader& in, int64_t& value, bool& closed) {
  closed = !in.read(&value, 8);
  return "";
}

std::string parse_file_records(const std::string& bytes, std::map<std::string, std::string>& out) {
  BufferReader in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  while (in.remaining() > 0) {
    size_t at = bytes.size() - in.remaining();
    uint32_t key_size = 0;
    uint64_t value_size = 0;
    std::string key, value;
    if (!in.read(&key_size, 4)) return "";
    if (key_size > kMaxKeyBytes) {
      return "the record at byte " + std::to_string(at) + " has a key length of " +
             std::to_string(key_size) + " bytes (at most " + std::to_string(kMaxKeyBytes) + ")";
    }
    if (!read_string(in, key, key_size) || !in.read(&value_size, 8)) return "";
    if (value_size > kMaxValueBytes) {
      return "the record at byte " + std::to_string(at) + " has a value length of " +
             std::to_string(value_size) + " bytes (at most " + std::to_string(kMaxValueBytes) + ")";
    }
    if (!read_string(in, value, value_size)) return "";
    out[std::move(key)] = std::move(value);
  }
  return "";
}

}  // namespace kiln::distributed::detail::wire
