// What plugin.cpp assembles: the device operations, and one KernelTable for the "cpu" device type
// handed to each kernel family's register function below.
#pragma once

#include <kiln/sdk/kernel_table.hpp>
#include <kiln/sdk/plugin.h>

namespace kiln::cpu {

using KernelTable = sdk::KernelTable;  // kiln/sdk/kernel_table.hpp

// The "cpu" device type's operations (device.cpp).
const kiln_device_ops* device_ops();

void register_unary(KernelTable& table);       // unary.cpp
void register_binary(KernelTable& table);      // binary.cpp
void register_compare(KernelTable& table);     // compare.cpp
void register_ternary(KernelTable& table);     // ternary.cpp
void register_copy_fill(KernelTable& table);   // copy_fill.cpp
void register_reduce(KernelTable& table);      // reduce.cpp
void register_reduce_arg(KernelTable& table);  // reduce_arg.cpp
void register_index(KernelTable& table);       // index.cpp
void register_matmul(KernelTable& table);      // matmul.cpp
void register_random(KernelTable& table);      // random.cpp
void register_conv(KernelTable& table);        // conv.cpp
void register_scatter(KernelTable& table);     // scatter.cpp
void register_norm(KernelTable& table);        // norm.cpp
void register_scan(KernelTable& table);        // scan.cpp
void register_resample(KernelTable& table);    // resample.cpp
void register_pool(KernelTable& table);        // pool.cpp
void register_attention(KernelTable& table);   // attention.cpp
void register_sort(KernelTable& table);        // sort.cpp
void register_softmax(KernelTable& table);     // softmax.cpp
// fused_pointwise.cpp
void register_fused_pointwise(KernelTable& table);

}  // namespace kiln::cpu
