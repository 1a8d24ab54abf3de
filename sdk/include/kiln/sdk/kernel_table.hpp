// Registering a device type's kernels without an error check after every call:
//
//   kiln::sdk::KernelTable table(host, my_type);
//   table.add("add", kiln::sdk::kernel<add_kernel>);
//   table.add("mul", kiln::sdk::kernel<mul_kernel>);
//   if (table.status() != 0) return table.status();  // the host has set the error
//
// The first failing registration (an unknown operator, a second kernel for one operator and
// device type) stops the rest: later add() calls do nothing and status() keeps the failure, whose
// message host->register_kernel has already set.
#pragma once

#include <kiln/sdk/plugin.h>

namespace kiln::sdk {

class KernelTable {
 public:
  KernelTable(const kiln_host* host, int32_t device_type) : host_(host), type_(device_type) {}

  // Registers fn as the kernel of `op` for this table's device type, unless an earlier
  // registration failed.
  void add(const char* op, kiln_kernel_fn fn) {
    if (status_ != 0) return;
    status_ = host_->register_kernel(op, type_, fn, nullptr);
    ++count_;
  }
  // 0, or the status of the registration that failed.
  kiln_status status() const { return status_; }
  // How many registrations were attempted (the failing one included).
  int count() const { return count_; }

 private:
  const kiln_host* host_;
  int32_t type_;
  kiln_status status_ = 0;
  int count_ = 0;
};

}  // namespace kiln::sdk
