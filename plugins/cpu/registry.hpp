// What plugin.cpp assembles: the device operations, and one KernelTable for the "cpu" device type
// handed to each kernel family's register function below.
#pragma once

#include <kiln/sdk/plugin.h>

namespace kiln::cpu {

class KernelTable {
 public:
  KernelTable(const kiln_host* host, int32_t device_type) : host_(host), type_(device_type) {}

  // Registers fn as the kernel of `op`. After a failure (the host has set the error) later calls
  // do nothing, and status() returns the failing status.
  void add(const char* op, kiln_kernel_fn fn) {
    if (status_ != 0) return;
    status_ = host_->register_kernel(op, type_, fn, nullptr);
    ++count_;
  }
  kiln_status status() const { return status_; }
  int count() const { return count_; }

 private:
  const kiln_host* host_;
  int32_t type_;
  kiln_status status_ = 0;
  int count_ = 0;
};

// The "cpu" device type's operations (device.cpp).
const kiln_device_ops* device_ops();

void register_unary(KernelTable& table);      // unary.cpp
void register_binary(KernelTable& table);     // binary.cpp
void register_compare(KernelTable& table);    // compare.cpp
void register_ternary(KernelTable& table);    // ternary.cpp
void register_copy_fill(KernelTable& table);  // copy_fill.cpp
void register_reduce(KernelTable& table);     // reduce.cpp
void register_reduce_arg(KernelTable& table); // reduce_arg.cpp
void register_index(KernelTable& table);      // index.cpp
void register_matmul(KernelTable& table);     // matmul.cpp
void register_random(KernelTable& table);     // random.cpp
void register_conv(KernelTable& table);       // conv.cpp
void register_scatter(KernelTable& table);    // scatter.cpp
void register_norm(KernelTable& table);       // norm.cpp

}  // namespace kiln::cpu
