// libFuzzer target for the header exchange of the communication backends
// (sdk/include/kiln/sdk/comm.hpp, used by plugins/gloo and plugins/mpi; built with clang when it
// is installed, see CMakeLists.txt). The first byte gives the world size (1 to 8); then that many
// 32-byte Headers as all-gathered from the ranks, then a 16-byte P2pHeader and the receiving
// tensor's dtype and numel (two int64). Any outcome but a crash, a hang or a sanitizer report is
// a pass, provided a header the checks accept is in range.
#include <kiln/sdk/comm.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace comm = kiln::sdk::comm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int world = data[0] % 8 + 1;
  data += 1;
  size -= 1;
  size_t need = sizeof(comm::Header) * static_cast<size_t>(world);
  if (size < need) return 0;
  std::vector<comm::Header> all(static_cast<size_t>(world));
  std::memcpy(all.data(), data, need);
  data += need;
  size -= need;
  std::string bad = comm::compare_headers(all.data(), world);
  if (bad.empty()) {
    const comm::Header& h = all[0];
    if (h.kind != comm::kBarrier && comm::payload_bytes(h.dtype, h.numel) < 0) std::abort();
  }
  for (const comm::Header& h : all) (void)comm::describe(h);
  if (size < sizeof(comm::P2pHeader) + 16) return 0;
  comm::P2pHeader theirs;
  int64_t mine[2];
  std::memcpy(&theirs, data, sizeof theirs);
  std::memcpy(mine, data + sizeof theirs, 16);
  // the receiving tensor is this rank's own: a valid dtype and a size that fits
  int64_t dtype = (mine[0] % KILN_NUM_DTYPES + KILN_NUM_DTYPES) % KILN_NUM_DTYPES;
  int64_t numel = mine[1] < 0 ? 0 : mine[1] % (int64_t{1} << 32);
  comm::P2pCheck c = comm::check_p2p(theirs, dtype, numel, 1, 7);
  if (c.malformed && c.error.empty()) std::abort();
  if (!c.malformed && !c.error.empty() &&
      (c.drain_bytes < 0 || c.drain_bytes > comm::kMaxHeaderBytes)) {
    std::abort();  // a mismatch the receiver drains has a size in range
  }
  return 0;
}
