// Distributed training, as PyTorch's torch.distributed (libtorch's c10d): process groups whose
// collectives run on a communication backend ("gloo", "mpi", or one a plugin adds through the
// SDK's kiln_comm_ops), free functions on tensors returning a Work handle.
//
//   kiln::distributed::init_process_group(
//       kiln::distributed::InitProcessGroupOptions().backend("gloo").init_method("env://"));
//   kiln::distributed::all_reduce(grad, kiln::distributed::ReduceOp::SUM);
//
// init_method: "env://" reads MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as torchrun and
// kiln-launch set them; rank and world_size given in the options win; under OpenMPI's mpirun,
// RANK and WORLD_SIZE default to OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE); "tcp://host:port"
// takes rank and world_size from the options; "file:///path" rendezvous through a file every rank
// reaches (it must not be left over from an earlier job). See Note [Rendezvous stores].
//
// Every collective is called by every rank of the group in the same order. Tensors may have any
// dtype and live on any device (a device the backend cannot read is staged through host memory);
// a collective whose sizes or dtypes differ across ranks fails with kiln::Error on the ranks
// involved instead of moving bytes. No wait is unbounded: the group's timeout bounds creation and
// every operation, and a rank that dies or stops answering makes the others raise kiln::Error
// naming the operation, the group and the rank. docs/distributed.md is the guide.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options.h>
#include <kiln/tensor.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace kiln::distributed {

// The reductions of all_reduce and reduce_scatter. AVG divides the sum by the group's size and
// takes floating dtypes only. On bool tensors SUM and MAX are "or", PRODUCT and MIN are "and".
enum class ReduceOp { SUM, AVG, MIN, MAX, PRODUCT };

// 30 minutes, as PyTorch's default_pg_timeout.
inline constexpr std::chrono::milliseconds kDefaultTimeout{30 * 60 * 1000};

struct KILN_API InitProcessGroupOptions {
  // A registered backend's name; comm_backends() lists them.
  KILN_ARG(std::string, backend) = "gloo";
  KILN_ARG(std::string, init_method) = "env://";
  // -1: from RANK / WORLD_SIZE (env://); required with tcp:// and file://.
  KILN_ARG(int64_t, rank) = -1;
  KILN_ARG(int64_t, world_size) = -1;
  // Bounds the rendezvous and every operation of the default group and of new_group's groups.
  KILN_ARG(std::chrono::milliseconds, timeout) = kDefaultTimeout;
};

// A group of ranks. Obtained from new_group(); null everywhere means the default group.
class KILN_API ProcessGroup {
 public:
  struct Impl;
  explicit ProcessGroup(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // This process's rank in the group; -1 when it is not a member.
  int rank() const;
  int size() const;
  // "default", "group 1", ...
  const std::string& name() const;
  const std::string& backend() const;
  // The global ranks of the members, in group-rank order.
  const std::vector<int>& ranks() const;
  std::chrono::milliseconds timeout() const;
  Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

// The handle of one operation. A blocking call (async_op false) returns a completed Work.
class KILN_API Work {
 public:
  struct State;
  explicit Work(std::shared_ptr<State> state) : state_(std::move(state)) {}
  // Waits for the operation, at most `timeout` (0: the group's timeout) and always bounded;
  // throws the operation's kiln::Error when it failed or timed out (again on every later call).
  // Returns true. A tensor staged through host memory is written back here.
  bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // Whether the operation has finished (successfully or not); never blocks.
  bool is_completed();
  // Finished without an error (false while it runs).
  bool is_success();
  // The error of a failed operation, or null.
  std::exception_ptr exception();

 private:
  std::shared_ptr<State> state_;
};
using WorkPtr = std::shared_ptr<Work>;

// Joins the default group: every rank of the job calls it. Throws kiln::Error (ValueError for a
// bad argument or environment variable, naming it) when the rendezvous fails or times out,
// naming the ranks that never joined.
KILN_API void init_process_group(const InitProcessGroupOptions& options = {});
KILN_API bool is_initialized();
// Whether any communication backend is registered (PyTorch's is_available).
KILN_API bool is_available();
// Leaves `group`, or every group when null (then is_initialized() is false again).
KILN_API void destroy_process_group(const ProcessGroupPtr& group = nullptr);
// This process's rank in `group` (the default group when null), and the group's size.
KILN_API int get_rank(const ProcessGroupPtr& group = nullptr);
KILN_API int get_world_size(const ProcessGroupPtr& group = nullptr);
KILN_API std::string get_backend(const ProcessGroupPtr& group = nullptr);
// A group of some global ranks (all when empty). Every rank of the default group calls it, in the
// same order, members or not; a non-member gets a group whose rank() is -1.
KILN_API ProcessGroupPtr new_group(const std::vector<int>& ranks = {});

// In place: every rank's tensor becomes the reduction of all ranks' tensors.
KILN_API WorkPtr all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM,
                            const ProcessGroupPtr& group = nullptr, bool async_op = false);
// Every rank's tensor becomes the tensor of global rank `src`.
KILN_API WorkPtr broadcast(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr,
                           bool async_op = false);
// tensor_list[r] gets group rank r's tensor (tensor_list is resized; its tensors are reused
// when they have the right size, dtype and device).
KILN_API WorkPtr all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor,
                            const ProcessGroupPtr& group = nullptr, bool async_op = false);
// output [size * n, ...] gets every rank's input [n, ...] along dimension 0.
KILN_API WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input,
                                        const ProcessGroupPtr& group = nullptr,
                                        bool async_op = false);
// output gets the reduction over ranks of their input_list[rank] (input_list has one tensor per
// rank, each of output's shape).
KILN_API WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list,
                                ReduceOp op = ReduceOp::SUM, const ProcessGroupPtr& group = nullptr,
                                bool async_op = false);
// output [n, ...] gets part `rank` of the reduction of every rank's input [size * n, ...].
KILN_API WorkPtr reduce_scatter_tensor(Tensor& output, const Tensor& input,
                                       ReduceOp op = ReduceOp::SUM,
                                       const ProcessGroupPtr& group = nullptr,
                                       bool async_op = false);
// Completes when every rank of the group has called it.
KILN_API WorkPtr barrier(const ProcessGroupPtr& group = nullptr, bool async_op = false);
// Point to point with global rank dst / src, matched by tag; send and recv block, isend and
// irecv return the Work. recv returns src.
KILN_API void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group = nullptr,
                   int tag = 0);
KILN_API int recv(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr, int tag = 0);
KILN_API WorkPtr isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group = nullptr,
                       int tag = 0);
KILN_API WorkPtr irecv(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr,
                       int tag = 0);

// A communication backend as kiln-info lists it: registered ones are available; "gloo" and "mpi"
// are listed too when no loaded plugin provides them, with the reason.
struct CommBackendInfo {
  std::string name;
  std::string plugin;  // the plugin file that registered it ("" when none)
  bool available = false;
  std::string reason;  // why it is not available
};
KILN_API std::vector<CommBackendInfo> comm_backends();

KILN_API const char* reduce_op_name(ReduceOp op);  // "SUM"

}  // namespace kiln::distributed
