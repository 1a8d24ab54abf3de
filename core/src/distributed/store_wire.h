// The wire format of kiln's TCPStore (tcp_store.cpp), as functions over a byte source so that
// the fuzz harness (tests/distributed/fuzz_store_wire.cpp) feeds them buffers: the server's
// request parser and its handling, and the client's parsers of replies. Both ends are kiln's, but
// the bytes come from another process (or anything that connects to the port): every field is
// validated, with a message naming it, before it sizes a buffer.
//
// A request: an opcode byte, a u32 key length and the key, a u64 value length and the value. The
// reply depends on the opcode: set, hello and bye answer one byte 0; get answers a byte (1 found,
// 0 not) and, when found, a u64 length and the value; add answers the new value (i64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln::distributed::detail::wire {

enum Op : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kHello = 4, kBye = 5 };

inline constexpr uint32_t kMaxKeyBytes = 1u << 16;             // 64 KiB
inline constexpr uint64_t kMaxValueBytes = uint64_t{1} << 30;  // 1 GiB
inline constexpr int64_t kMaxRank = int64_t{1} << 30;

// Where bytes come from: a socket or a buffer. read() fills all `size` bytes or returns false
// (closed, failed or timed out).
class ByteReader {
 public:
  virtual ~ByteReader() = default;
  virtual bool read(void* data, size_t size) = 0;
};

// Bytes of a buffer (the fuzz harness, the tests).
class BufferReader : public ByteReader {
 public:
  BufferReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool read(void* out, size_t size) override;
  size_t remaining() const { return size_ - offset_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

struct Request {
  uint8_t op = 0;
  std::string key, value;
};

enum class ReadStatus { kOk, kClosed, kBad };

// Reads one request. kClosed: the stream ended (cleanly or not); kBad: a field is out of range,
// `error` names it (the client is not kiln, or the bytes are corrupted).
ReadStatus read_request(ByteReader& in, Request& r, std::string& error);

// The state of one client's connection on the server.
struct Session {
  int64_t rank = -1;  // from hello
  bool said_bye = false;
};

// Applies a request to the server's map and appends the reply's bytes to `reply`. Returns "" or,
// for a request that is not kiln's protocol (the client is then dropped), what is wrong.
std::string serve_request(std::map<std::string, std::string>& data, Session& session,
                          const Request& r, std::string& reply);

// The client's side: the request's bytes, and the replies' parsers. A parser returns "" or what is
// wrong with the reply (naming the field); `closed` is set when the bytes ran out.
std::string encode_request(uint8_t op, const std::string& key, const std::string& value);
std::string read_done_reply(ByteReader& in, bool& closed);
std::string read_get_reply(ByteReader& in, std::optional<std::string>& value, bool& closed);
std::string read_add_reply(ByteReader& in, int64_t& value, bool& closed);

// The FileStore's file (file_store.cpp): records "u32 key size, key, u64 value size, value"
// appended under a lock; the last record of a key is its value. A record cut short at the end
// (a process killed while appending) is ignored; a length over the caps is an error naming the
// field and the record's offset (not a file store, or a corrupted one): "" when the file is good.
std::string parse_file_records(const std::string& bytes, std::map<std::string, std::string>& out);

}  // namespace kiln::distributed::detail::wire
