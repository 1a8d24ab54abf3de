// libFuzzer target for the rendezvous stores' formats (core/src/distributed/store_wire.h; built
// with clang when it is installed, see CMakeLists.txt). The first byte picks the side: 0 mod 3,
// the TCP store's server reads the rest as a client's requests and answers them, and every answer
// must parse back through the client's parsers; 1, the client reads the rest as the server's
// answers to a get, a set and an add, in turn; 2, the rest is a FileStore's file. Any outcome but a
// crash, a hang, a sanitizer report or an answer the client rejects is a pass.
#include "../../core/src/distributed/store_wire.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace wire = kiln::distributed::detail::wire;

namespace {

void check_reply(uint8_t op, const std::string& reply) {
  wire::BufferReader in(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
  bool closed = false;
  std::string bad;
  if (op == wire::kGet) {
    std::optional<std::string> value;
    bad = wire::read_get_reply(in, value, closed);
  } else if (op == wire::kAdd) {
    int64_t value = 0;
    bad = wire::read_add_reply(in, value, closed);
  } else {
    bad = wire::read_done_reply(in, closed);
  }
  if (!bad.empty() || closed || in.remaining() != 0) std::abort();  // the server's answer is bad
}

void serve(const uint8_t* data, size_t size) {
  wire::BufferReader in(data, size);
  std::map<std::string, std::string> store;
  wire::Session session;
  wire::Request r;
  std::string error;
  for (int i = 0; i < 10000; ++i) {
    wire::ReadStatus status = wire::read_request(in, r, error);
    if (status == wire::ReadStatus::kClosed) return;
    if (status == wire::ReadStatus::kBad) {
      if (error.empty()) std::abort();  // a rejection names its field
      return;
    }
    std::string reply;
    error = wire::serve_request(store, session, r, reply);
    if (!error.empty()) return;
    check_reply(r.op, reply);
    // the client's encoding of the same request parses back to it
    std::string again = wire::encode_request(r.op, r.key, r.value);
    wire::BufferReader back(reinterpret_cast<const uint8_t*>(again.data()), again.size());
    wire::Request copy;
    std::string e2;
    if (wire::read_request(back, copy, e2) != wire::ReadStatus::kOk || copy.key != r.key ||
        copy.value != r.value || copy.op != r.op) {
      std::abort();
    }
  }
}

void answer(const uint8_t* data, size_t size) {
  wire::BufferReader in(data, size);
  for (int i = 0; i < 10000; ++i) {
    bool closed = false;
    std::optional<std::string> value;
    std::string bad = wire::read_get_reply(in, value, closed);
    if (closed || !bad.empty()) return;
    bad = wire::read_done_reply(in, closed);
    if (closed || !bad.empty()) return;
    int64_t counter = 0;
    bad = wire::read_add_reply(in, counter, closed);
    if (closed || !bad.empty()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 3 == 0) {
    serve(data + 1, size - 1);
  } else if (data[0] % 3 == 1) {
    answer(data + 1, size - 1);
  } else {
    std::map<std::string, std::string> records;
    std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    (void)wire::parse_file_records(bytes, records);
  }
  return 0;
}
