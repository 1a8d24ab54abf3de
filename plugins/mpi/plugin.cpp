// The "mpi" communication backend: kiln's collectives on MPI (Debian's OpenMPI), for jobs
// started with mpirun. Every collective is a non-blocking MPI call on the group's communicator
// (a world rank list made through the rendezvous store, MPI_Comm_create_group); wait polls
// MPI_Test until done or the timeout. Before a collective moves data, its ranks compare a header
// (operation, dtype, elements, root or reduction) with a bounded MPI_Iallgather, so sizes or
// dtypes that differ are an error naming the rank. All MPI calls are serialised by one mutex
// (whatever thread level the library gives). A peer that dies usually makes mpirun end the
// whole job; one that stops answering ends in the timeout.
#include <kiln/sdk/comm.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/host.hpp>
#include <kiln/sdk/plugin.h>

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::mutex& mpi_mutex() {
  static std::mutex m;
  return m;
}

const size_t kDtypeSizes[KILN_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string(what) + ": " + mpi_error(code));
}

// float16 and bfloat16 reduce through float (MPI has no 16-bit float type).
template <class T, int Op>
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  T* a = static_cast<T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) {
    float x = a[i], y = b[i];
    b[i] = T(Op == 0 ? x + y : Op == 1 ? std::min(x, y) : Op == 2 ? std::max(x, y) : x * y);
  }
}

struct Ops {
  MPI_Op half[4], bf16[4];
};

Ops& custom_ops() {
  static Ops ops = [] {
    Ops o;
    MPI_Op_create(half_op<kiln::sdk::Half, 0>, 1, &o.half[0]);
    MPI_Op_create(half_op<kiln::sdk::Half, 1>, 1, &o.half[1]);
    MPI_Op_create(half_op<kiln::sdk::Half, 2>, 1, &o.half[2]);
    MPI_Op_create(half_op<kiln::sdk::Half, 3>, 1, &o.half[3]);
    MPI_Op_create(half_op<kiln::sdk::BFloat16, 0>, 1, &o.bf16[0]);
    MPI_Op_create(half_op<kiln::sdk::BFloat16, 1>, 1, &o.bf16[1]);
    MPI_Op_create(half_op<kiln::sdk::BFloat16, 2>, 1, &o.bf16[2]);
    MPI_Op_create(half_op<kiln::sdk::BFloat16, 3>, 1, &o.bf16[3]);
    return o;
  }();
  return ops;
}

MPI_Datatype mpi_type(int32_t dtype) {
  switch (dtype) {
    case KILN_BOOL: return MPI_C_BOOL;
    case KILN_U8: return MPI_UINT8_T;
    case KILN_I8: return MPI_INT8_T;
    case KILN_I16: return MPI_INT16_T;
    case KILN_I32: return MPI_INT32_T;
    case KILN_I64: return MPI_INT64_T;
    case KILN_F16:
    case KILN_BF16: return MPI_UINT16_T;
    case KILN_F32: return MPI_FLOAT;
    default: return MPI_DOUBLE;
  }
}

// 0 sum, 1 min, 2 max, 3 product
int op_index(int32_t op) {
  switch (op) {
    case KILN_REDUCE_MIN: return 1;
    case KILN_REDUCE_MAX: return 2;
    case KILN_REDUCE_PRODUCT: return 3;
    default: return 0;  // SUM, AVG
  }
}

MPI_Op mpi_op(int32_t dtype, int32_t op) {
  int k = op_index(op);
  if (dtype == KILN_F16) return custom_ops().half[k];
  if (dtype == KILN_BF16) return custom_ops().bf16[k];
  if (dtype == KILN_BOOL) return (k == 0 || k == 2) ? MPI_LOR : MPI_LAND;
  const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD};
  return ops[k];
}

void divide(void* p, int32_t dtype, size_t n, int size) {
  for (size_t i = 0; i < n; ++i) {
    if (dtype == KILN_F64) static_cast<double*>(p)[i] /= size;
    if (dtype == KILN_F32) static_cast<float*>(p)[i] /= static_cast<float>(size);
    if (dtype == KILN_F16) {
      auto* v = static_cast<kiln::sdk::Half*>(p);
      v[i] = kiln::sdk::Half(float(v[i]) / float(size));
    }
    if (dtype == KILN_BF16) {
      auto* v = static_cast<kiln::sdk::BFloat16*>(p);
      v[i] = kiln::sdk::BFloat16(float(v[i]) / float(size));
    }
  }
}

// Polls `req` until it completes or `deadline`; false on timeout.
bool poll(MPI_Request& req, Clock::time_point deadline, int& code) {
  while (true) {
    int done = 0;
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      code = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
    if (code != MPI_SUCCESS || done) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Ranks whose calls differ: reported as KILN_ERROR_VALUE.
struct MismatchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Group {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::chrono::milliseconds timeout{0};
};

struct Work {
  std::vector<MPI_Request> requests;   // completed in order
  std::function<std::string()> after;  // runs once all are done (AVG's division, a recv's data)
  std::vector<int64_t> header;         // a send's or recv's header
  bool done = false;
  std::string error;
  int32_t kind = KILN_ERROR_OTHER;
};

// The header exchange before a collective (bounded); throws naming the odd rank.
void check_headers(Group& g, int64_t kind, int64_t dtype, int64_t numel, int64_t arg) {
  kiln::sdk::comm::Header mine{kind, dtype, numel, arg};
  std::vector<kiln::sdk::comm::Header> all(static_cast<size_t>(g.size));
  MPI_Request req;
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    check(MPI_Iallgather(&mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, g.comm, &req),
          "MPI_Iallgather");
  }
  int code = 0;
  if (!poll(req, Clock::now() + g.timeout, code)) {
    throw std::runtime_error("no answer within " + std::to_string(g.timeout.count()) +
                             " ms from the other ranks (a rank is stuck or called another "
                             "operation)");
  }
  check(code, "MPI_Iallgather");
  std::string bad = kiln::sdk::comm::compare_headers(all.data(), g.size);
  if (!bad.empty()) throw MismatchError(bad);
}

int64_t numel_of(const kiln_tensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->sizes[d];
  return n;
}

template <class F>
void* guarded(F&& f) {
  try {
    return f();
  } catch (const MismatchError& e) {
    kiln::sdk::set_error(KILN_ERROR_VALUE, e.what());
  } catch (const std::exception& e) {
    kiln::sdk::set_error(e.what());
  }
  return nullptr;
}

void finalize_at_exit() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void* create_group(void*, const kiln_comm_group_options* o) {
  return guarded([&]() -> void* {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init");
      std::atexit(finalize_at_exit);  // MPI wants every process that initialised to finalise
    }
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    // the group's members by their MPI world rank, through the store
    std::string me = std::to_string(world_rank);
    std::string key = "mpi/" + std::to_string(o->rank);
    if (o->store->set(o->store->self, key.c_str(), me.data(), me.size()) != 0) return nullptr;
    std::vector<int> members(static_cast<size_t>(o->world_size));
    for (int r = 0; r < o->world_size; ++r) {
      std::string value;
      auto emit = [](void* ctx, const void* data, uint64_t size) {
        static_cast<std::string*>(ctx)->assign(static_cast<const char*>(data), size);
      };
      std::string k = "mpi/" + std::to_string(r);
      if (o->store->get(o->store->self, k.c_str(), o->timeout_ms, emit, &value) != 0) {
        return nullptr;
      }
      members[r] = std::stoi(value);
    }
    MPI_Group world, part;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, o->world_size, members.data(), &part);
    auto g = std::make_unique<Group>();
    check(MPI_Comm_create_group(MPI_COMM_WORLD, part, 0, &g->comm), "MPI_Comm_create_group");
    MPI_Group_free(&part);
    MPI_Group_free(&world);
    MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->size);
    g->timeout = std::chrono::milliseconds(o->timeout_ms);
    if (g->rank != o->rank) {
      throw std::runtime_error("MPI gives this process rank " + std::to_string(g->rank) +
                               " in the group, but kiln's rank is " + std::to_string(o->rank) +
                               ": launch with mpirun and let RANK follow MPI's rank");
    }
    return g.release();
  });
}

void destroy_group(void* group) {
  auto* g = static_cast<Group*>(group);
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    MPI_Comm_free(&g->comm);
  }
  delete g;
}

// Launches `start` (which posts MPI requests into the work) after the header check.
template <class Start>
void* collective(void* group, int64_t kind, int64_t dtype, int64_t numel, int64_t arg,
                 Start start) {
  return guarded([&]() -> void* {
    Group& g = *static_cast<Group*>(group);
    // MPI counts are int (every rank has the same sizes, so every rank fails alike)
    if (kiln::sdk::comm::payload_bytes(dtype < 0 ? 0 : dtype, numel) > INT32_MAX) {
      throw std::runtime_error(std::string(kiln::sdk::comm::kind_name(kind)) + " of " +
                               std::to_string(numel) + " elements: over MPI's int count of " +
                               "bytes (2 GiB); split the tensor");
    }
    check_headers(g, kind, dtype, numel, arg);
    auto w = std::make_unique<Work>();
    std::lock_guard<std::mutex> lock(mpi_mutex());
    start(g, *w);
    return w.release();
  });
}

void* all_reduce(void* group, const kiln_tensor* t, int32_t op) {
  int64_t n = numel_of(t);
  return collective(group, kiln::sdk::comm::kAllReduce, t->dtype, n, op, [&](Group& g, Work& w) {
    w.requests.emplace_back();
    check(MPI_Iallreduce(MPI_IN_PLACE, t->data, static_cast<int>(n), mpi_type(t->dtype),
                         mpi_op(t->dtype, op), g.comm, &w.requests.back()),
          "MPI_Iallreduce");
    if (op == KILN_REDUCE_AVG) {
      void* p = t->data;
      int32_t dtype = t->dtype;
      int size = g.size;
      w.after = [p, dtype, n, size] {
        divide(p, dtype, static_cast<size_t>(n), size);
        return std::string();
      };
    }
  });
}

void* broadcast(void* group, const kiln_tensor* t, int32_t root) {
  int64_t n = numel_of(t);
  return collective(group, kiln::sdk::comm::kBroadcast, t->dtype, n, root, [&](Group& g, Work& w) {
    w.requests.emplace_back();
    check(MPI_Ibcast(t->data, static_cast<int>(n * kDtypeSizes[t->dtype]), MPI_BYTE, root, g.comm,
                     &w.requests.back()),
          "MPI_Ibcast");
  });
}

void* all_gather(void* group, const kiln_tensor* out, const kiln_tensor* in) {
  int64_t n = numel_of(in);
  return collective(group, kiln::sdk::comm::kAllGather, in->dtype, n, 0, [&](Group& g, Work& w) {
    int bytes = static_cast<int>(n * kDtypeSizes[in->dtype]);
    w.requests.emplace_back();
    check(MPI_Iallgather(in->data, bytes, MPI_BYTE, out->data, bytes, MPI_BYTE, g.comm,
                         &w.requests.back()),
          "MPI_Iallgather");
  });
}

void* reduce_scatter(void* group, const kiln_tensor* out, const kiln_tensor* in, int32_t op) {
  int64_t n = numel_of(out);
  return collective(group, kiln::sdk::comm::kReduceScatter, in->dtype, n, op,
                    [&](Group& g, Work& w) {
                      w.requests.emplace_back();
                      check(MPI_Ireduce_scatter_block(in->data, out->data, static_cast<int>(n),
                                                      mpi_type(in->dtype), mpi_op(in->dtype, op),
                                                      g.comm, &w.requests.back()),
                            "MPI_Ireduce_scatter_block");
                      if (op == KILN_REDUCE_AVG) {
                        void* p = out->data;
                        int32_t dtype = out->dtype;
                        int size = g.size;
                        w.after = [p, dtype, n, size] {
                          divide(p, dtype, static_cast<size_t>(n), size);
                          return std::string();
                        };
                      }
                    });
}

void* barrier(void* group) {
  return collective(group, kiln::sdk::comm::kBarrier, -1, 0, 0, [&](Group& g, Work& w) {
    w.requests.emplace_back();
    check(MPI_Ibarrier(g.comm, &w.requests.back()), "MPI_Ibarrier");
  });
}

void* send(void* group, const kiln_tensor* t, int32_t peer, int32_t tag) {
  return guarded([&]() -> void* {
    Group& g = *static_cast<Group*>(group);
    auto w = std::make_unique<Work>();
    int64_t n = numel_of(t);
    w->header = {t->dtype, n};
    std::lock_guard<std::mutex> lock(mpi_mutex());
    w->requests.resize(2);
    check(MPI_Isend(w->header.data(), 2, MPI_INT64_T, peer, 2 * tag, g.comm, &w->requests[0]),
          "MPI_Isend");
    check(MPI_Isend(t->data, static_cast<int>(n * kDtypeSizes[t->dtype]), MPI_BYTE, peer,
                    2 * tag + 1, g.comm, &w->requests[1]),
          "MPI_Isend");
    return w.release();
  });
}

void* recv(void* group, const kiln_tensor* t, int32_t peer, int32_t tag) {
  return guarded([&]() -> void* {
    Group& g = *static_cast<Group*>(group);
    auto w = std::make_unique<Work>();
    w->header = {0, 0};
    int64_t n = numel_of(t);
    int32_t dtype = t->dtype;
    void* data = t->data;
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      w->requests.resize(1);
      check(MPI_Irecv(w->header.data(), 2, MPI_INT64_T, peer, 2 * tag, g.comm, &w->requests[0]),
            "MPI_Irecv");
    }
    Work* self = w.get();
    MPI_Comm comm = g.comm;
    auto deadline_ms = g.timeout;
    // after the header: receive the data (into scratch when it does not match, then fail)
    w->after = [self, comm, deadline_ms, n, dtype, data, peer, tag]() -> std::string {
      kiln::sdk::comm::P2pHeader theirs{self->header[0], self->header[1]};
      auto c = kiln::sdk::comm::check_p2p(theirs, dtype, n, peer, tag);
      if (c.malformed) return c.error;
      bool same = c.error.empty();
      // MPI counts are int: a mismatched transfer over 1 GiB is not drained
      constexpr int64_t kMaxDrain = int64_t{1} << 30;
      if (!same && c.drain_bytes > kMaxDrain) {
        self->kind = KILN_ERROR_VALUE;
        return c.error + "; its " + std::to_string(c.drain_bytes) + " bytes are not drained";
      }
      std::vector<char> scratch(same ? 0 : static_cast<size_t>(c.drain_bytes));
      MPI_Request req;
      {
        std::lock_guard<std::mutex> lock(mpi_mutex());
        check(MPI_Irecv(same ? data : scratch.data(),
                        static_cast<int>(same ? n * static_cast<int64_t>(kDtypeSizes[dtype])
                                              : c.drain_bytes),
                        MPI_BYTE, peer, 2 * tag + 1, comm, &req),
              "MPI_Irecv");
      }
      int code = 0;
      if (!poll(req, Clock::now() + deadline_ms, code)) return "no data within the timeout";
      if (code != MPI_SUCCESS) return mpi_error(code);
      if (same) return std::string();
      self->kind = KILN_ERROR_VALUE;
      return c.error;
    };
    return w.release();
  });
}

kiln_status wait(void* work, int64_t timeout_ms) {
  auto* w = static_cast<Work*>(work);
  if (!w->done) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (MPI_Request& req : w->requests) {
      int code = 0;
      if (req == MPI_REQUEST_NULL) continue;
      if (!poll(req, deadline, code)) {
        kiln::sdk::set_error("no answer within " + std::to_string(timeout_ms) + " ms");
        return 1;
      }
      if (code != MPI_SUCCESS) {
        w->error = mpi_error(code);
        break;
      }
    }
    if (w->error.empty() && w->after) {
      try {
        w->error = w->after();
      } catch (const std::exception& e) {
        w->error = e.what();
      }
    }
    w->done = true;
  }
  if (w->error.empty()) return 0;
  kiln::sdk::set_error(static_cast<kiln_error_kind>(w->kind), w->error);
  return 1;
}

int32_t is_completed(void* work) {
  auto* w = static_cast<Work*>(work);
  if (w->done) return 1;
  if (w->after) return 0;  // finished by wait()
  std::lock_guard<std::mutex> lock(mpi_mutex());
  int all = 0;
  MPI_Testall(static_cast<int>(w->requests.size()), w->requests.data(), &all, MPI_STATUSES_IGNORE);
  return all ? 1 : 0;
}

void free_work(void* work) { delete static_cast<Work*>(work); }

const kiln_comm_ops kOps = {
    sizeof(kiln_comm_ops),
    create_group,
    destroy_group,
    all_reduce,
    broadcast,
    all_gather,
    reduce_scatter,
    barrier,
    send,
    recv,
    wait,
    is_completed,
    free_work,
    nullptr,
};

}  // namespace

KILN_COMM_PLUGIN("mpi", "0.1.0", "communication backend \"mpi\": OpenMPI, under mpirun", &kOps)
