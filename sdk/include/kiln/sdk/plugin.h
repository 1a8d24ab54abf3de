/* kiln plugin boundary: the only contract between kiln's core and a plugin.
 *
 * A plugin is a shared library that exports three C functions (below) and nothing else. The core
 * loads it at run time, asks it to describe itself (kiln_plugin_query, no side effects), asks
 * whether it can run on this machine (kiln_plugin_probe), and lets it register what it provides
 * (kiln_plugin_init) through a table of host functions (kiln_host). A plugin does not link
 * against the core.
 *
 * What a device plugin registers:
 *   - a device type by name ("cpu", "cuda", "mydev") with its device operations
 *     (kiln_device_ops: count, describe, alloc, free, copy to and from host memory);
 *   - kernels, one per (operator, device type). A kernel receives a kiln_call: input and output
 *     tensors as plain strided descriptors (like DLPack) plus the operator's non-tensor arguments
 *     (attributes). The core has already checked the arguments, promoted dtypes, broadcast the
 *     inputs and allocated the outputs on the device; the kernel only does the arithmetic.
 *     docs/writing-a-device-plugin.md lists each primitive operator with its inputs, outputs and
 *     attributes.
 *
 * Rules:
 *   - Only plain C types cross the boundary: no C++ object, no exception, no STL type. A kernel
 *     that fails calls host->set_error(message) and returns a non-zero kiln_status; the core
 *     raises kiln::Error with the message, the operator and the device.
 *   - Each side frees what it allocated.
 *   - Structs that either side fills start with struct_size, so tables grow by appending: a reader
 *     checks struct_size before it touches an entry added in a later minor version.
 *   - ABI versions: a plugin built for another major version is refused, and so is one built for a
 *     newer minor version than the core's. Older minors load.
 *
 * The C++ helpers in kiln/sdk/kernel.hpp sit on top of this header so a kernel author writes
 * ordinary C++; nothing in them is needed to be a valid plugin. */
#ifndef KILN_SDK_PLUGIN_H
#define KILN_SDK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define KILN_ABI_MAJOR 1
#define KILN_ABI_MINOR 0

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. The values are part of the ABI. */
typedef enum kiln_dtype {
  KILN_BOOL = 0,
  KILN_U8 = 1,
  KILN_I8 = 2,
  KILN_I16 = 3,
  KILN_I32 = 4,
  KILN_I64 = 5,
  KILN_F16 = 6,
  KILN_BF16 = 7,
  KILN_F32 = 8,
  KILN_F64 = 9
} kiln_dtype;
#define KILN_NUM_DTYPES 10

/* Device type of plain host memory that the core allocated itself (the other side of a copy). */
#define KILN_DEVICE_HOST (-1)

typedef struct kiln_device {
  int32_t type;  /* the id register_device returned, or KILN_DEVICE_HOST */
  int32_t index; /* cuda:1 -> 1 */
} kiln_device;

/* A strided view of memory, like DLPack's DLTensor. */
typedef struct kiln_tensor {
  void* data; /* the first element: the view's offset is already applied */
  int32_t dtype; /* a kiln_dtype */
  int32_t ndim;
  const int64_t* sizes;
  const int64_t* strides; /* in elements; 0 for a broadcast dimension; never negative */
  kiln_device device;
} kiln_tensor;

/* Non-tensor arguments of an operator, in the order the operator documents; each is named. */
typedef enum kiln_attr_kind {
  KILN_ATTR_I64 = 0,
  KILN_ATTR_F64 = 1,
  KILN_ATTR_BOOL = 2,
  KILN_ATTR_I64S = 3,
  KILN_ATTR_NONE = 4 /* an optional argument that was not given */
} kiln_attr_kind;

typedef struct kiln_attr {
  const char* name;
  int32_t kind; /* a kiln_attr_kind */
  union {
    int64_t i;
    double f;
    struct {
      const int64_t* v;
      int32_t n;
    } list;
  } value;
} kiln_attr;

/* One kernel call. Outputs are allocated; a kernel writes every element of each output. */
typedef struct kiln_call {
  uint32_t struct_size;
  const char* op; /* the operator's name, for messages */
  const kiln_tensor* inputs;
  int32_t n_inputs;
  const kiln_tensor* outputs;
  int32_t n_outputs;
  const kiln_attr* attrs;
  int32_t n_attrs;
  void* stream; /* the device's current stream for this thread, or NULL */
} kiln_call;

typedef int32_t kiln_status; /* 0: ok; otherwise the plugin called host->set_error first */
typedef kiln_status (*kiln_kernel_fn)(const kiln_call* call, void* user);

/* What a device type provides. `self` is the pointer the plugin passed to register_device.
 * Entries marked optional may be NULL. */
typedef struct kiln_device_ops {
  uint32_t struct_size;
  /* Number of devices of this type on this machine (0 is allowed: the type exists, no device). */
  int32_t (*count)(void* self);
  /* One line for kiln-info (name, memory, ...), written into buf; optional. */
  void (*describe)(void* self, int32_t index, char* buf, size_t len);
  /* Allocate bytes on device `index`; NULL (after set_error) when out of memory. */
  void* (*alloc)(void* self, int32_t index, size_t bytes);
  void (*free)(void* self, int32_t index, void* ptr);
  /* Copy src into dst: same dtype, same sizes. One side is on this device; the other is on this
   * device too or is host memory (KILN_DEVICE_HOST, always contiguous). The device side may be
   * any strided view. */
  kiln_status (*copy)(void* self, const kiln_tensor* dst, const kiln_tensor* src);
  /* Wait for all work queued on device `index`; optional. */
  kiln_status (*synchronize)(void* self, int32_t index);
  /* 1 when the device's memory is ordinary host memory that the core may read and write. */
  int32_t host_accessible;
  /* The lower-precision dtype autocast uses on this device (KILN_F16 or KILN_BF16). */
  int32_t autocast_dtype;
  /* 1: operators without a kernel here run on the CPU device (copy in, run, copy out), with a
   * warning once per operator. 0: they raise an error. */
  int32_t cpu_fallback;
  /* default_device() picks the available device type with the highest priority (cpu: 0). */
  int32_t priority;
} kiln_device_ops;

/* Log levels for host->log. */
#define KILN_LOG_DEBUG 0
#define KILN_LOG_INFO 1
#define KILN_LOG_WARN 2
#define KILN_LOG_ERROR 3

/* What the core offers a plugin during probe and init, and for the plugin's lifetime. */
typedef struct kiln_host {
  uint32_t struct_size;
  uint16_t abi_major, abi_minor;
  /* Registers a device type; returns its id (>= 0), or -1 after setting an error (name taken,
   * bad ops). `ops` and `self` must stay valid while the plugin is loaded. */
  int32_t (*register_device)(const char* name, const kiln_device_ops* ops, void* self);
  /* Registers the kernel of operator `op` for a device type this plugin registered. Returns
   * non-zero (with an error set) for an unknown operator or a kernel registered twice. */
  kiln_status (*register_kernel)(const char* op, int32_t device_type, kiln_kernel_fn fn,
                                 void* user);
  /* Sets this thread's error message; the core reads it when a call returns non-zero. */
  void (*set_error)(const char* message);
  void (*log)(int32_t level, const char* message);
} kiln_host;

/* What kiln_plugin_query returns: static data owned by the plugin. */
typedef struct kiln_plugin_info {
  uint32_t struct_size;
  uint16_t abi_major, abi_minor; /* KILN_ABI_MAJOR and KILN_ABI_MINOR the plugin was built with */
  const char* name;              /* "cpu" */
  const char* version;           /* the plugin's own version, "1.2.0" */
  const char* summary;           /* one line for kiln-info */
} kiln_plugin_info;

#if defined(_WIN32)
#define KILN_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KILN_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The symbols a plugin exports. */
KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void); /* no side effects */
/* 1: can run here; 0: cannot (reason via host->set_error): the plugin is listed, not used. */
KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host);
/* Registers devices and kernels. Non-zero (with an error set): the plugin is refused. */
KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_SDK_PLUGIN_H */
