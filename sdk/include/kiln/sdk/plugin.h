/* kiln plugin boundary: the only contract between kiln's core and a plugin.
 *
 * A plugin is a shared library that exports three C functions (below), and a data-source plugin
 * may add two optional ones for kiln-plugin-check (kiln_source_sample_shard, kiln_source_fuzz).
 * The core loads it at run time, asks it to describe itself (kiln_plugin_query, no side
 * effects), asks whether it can run on this machine (kiln_plugin_probe), and lets it register
 * what it provides (kiln_plugin_init) through a table of host functions (kiln_host). A plugin
 * does not link against the core.
 *
 * What a data-source plugin registers (ABI 1.1): sources by scheme ("tar") and decoders by file
 * extension ("png"); see "Data sources and decoders" below and docs/writing-a-data-source.md.
 *
 * What a communication plugin registers (ABI 1.3): backends by name ("gloo", "mpi"), each a
 * table of collectives (kiln_comm_ops); see "Communication backends" below and
 * docs/writing-a-comm-backend.md.
 *
 * What a device plugin may add (ABI 1.4): a kernel for the optional primitive `fused_pointwise`,
 * a small pointwise program (inputs, elementwise steps from a versioned op table, outputs) that
 * the graph pass kiln::jit::fuse_pointwise makes from chains of pointwise operators; see
 * kiln/sdk/pointwise_program.hpp and docs/primitives.md. A plugin built for 1.3 or older has no
 * such kernel, loads as before, and its traced graphs run the unfused operators.
 *
 * What a device plugin registers:
 *   - a device type by name ("cpu", "cuda", "mydev") with its device operations
 *     (kiln_device_ops: count, describe, alloc, free, copy to and from host memory);
 *   - kernels, one per (operator, device type). A kernel receives a kiln_call: input and output
 *     tensors as plain strided descriptors (like DLPack) plus the operator's non-tensor arguments
 *     (attributes). The core has already checked the arguments, promoted dtypes, broadcast the
 *     inputs and allocated the outputs on the device; the kernel only does the arithmetic.
 *     docs/primitives.md lists each primitive operator with its inputs, outputs and attributes;
 *     docs/writing-a-device-plugin.md builds a device step by step.
 *
 * Rules:
 *   - Only plain C types cross the boundary: no C++ object, no exception, no STL type. A kernel
 *     that fails calls host->set_error_kind(kind, message) (ABI 1.2; host->set_error(message)
 *     before) and returns a non-zero kiln_status; the core raises the kiln::Error subclass of the
 *     kind (kiln_error_kind) with the message, the operator and the device.
 *   - Each side frees what it allocated.
 *   - Structs that either side fills start with struct_size, so tables grow by appending: a reader
 *     checks struct_size before it touches an entry added in a later minor version.
 *   - ABI versions: a plugin built for another major version is refused, and so is one built for a
 *     newer minor version than the core's. Older minors load.
 *
 * The C++ helpers sit on top of this header so a plugin author writes ordinary C++: kernel.hpp
 * (typed calls, dtype switch, strided loops, exception-safe kernels), source.hpp (a data source
 * as two classes, and its entry points), host.hpp, half.hpp, philox.hpp. Nothing in them is
 * needed to be a valid plugin. */
#ifndef KILN_SDK_PLUGIN_H
#define KILN_SDK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define KILN_ABI_MAJOR 1
#define KILN_ABI_MINOR 4

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
  void* data;    /* the first element: the view's offset is already applied */
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
   * warning once per operator per process (KILN_FALLBACK_WARNINGS=0: none). 0: they raise an
   * error. */
  int32_t cpu_fallback;
  /* default_device() picks the available device type with the highest priority (cpu: 0). */
  int32_t priority;
  /* --- ABI 1.1 (the core reads these only when struct_size covers them) --- */
  /* Page-locked host memory that copies to this device read fastest (the DataLoader's
   * pin_memory); optional: NULL means the device has none, and pinning is a no-op. */
  void* (*host_alloc)(void* self, size_t bytes);
  /* Frees what host_alloc returned; required with host_alloc. */
  void (*host_free)(void* self, void* ptr);
} kiln_device_ops;

/* --- Data sources and decoders (ABI 1.1) -----------------------------------------------------
 *
 * A data-source plugin reads one storage layout (tar shards, a folder of files, ...) and hands the
 * core samples: a key and named byte fields, one per file extension ("jpg", "cls", "seg.png").
 * Everything above one shard is the core's: expanding the user's shard list (brace patterns),
 * splitting shards by rank and by worker, shuffling, decoding, batching, the error policy and
 * resumption. A source therefore only lists shards, opens one, and walks it in order.
 *
 * A decoder turns one field's bytes into a value (a tensor, text, a number, or a nested list or
 * map for formats such as JSON) by calling the kiln_decode_out functions the core hands it; the
 * core picks the decoder by the field name's last extension ("seg.png" -> "png").
 *
 * Threads: open_shard and decoders are called from several DataLoader workers at once; one
 * reader (what open_shard returned) is used by one thread at a time. Errors go through
 * host->set_error on the calling thread, as for kernels; a source's message names the member and
 * its byte offset, and the core adds the shard, the worker and the source. */

/* One field of a sample: a member of the shard. */
typedef struct kiln_field {
  const char* name; /* the extension, lower case, without the key: "jpg", "seg.png" */
  const void* data; /* the member's bytes; valid until the reader's next next() or close() */
  uint64_t size;    /* in bytes */
  uint64_t offset;  /* byte offset of the member's header in the shard, for messages */
} kiln_field;

/* One sample: the fields that share a key. The core sets struct_size before next(); a source
 * fills the entries that struct_size covers. */
typedef struct kiln_sample {
  uint32_t struct_size;
  const char* key;          /* the sample's key (becomes __key__): "train/000123" */
  const kiln_field* fields; /* n_fields fields, valid until the reader's next next() */
  int32_t n_fields;
  uint64_t offset; /* byte offset of the sample's first member, for messages */
} kiln_sample;

/* What kiln_source_ops.next returns. */
#define KILN_SAMPLE_END 0      /* no more samples in this shard */
#define KILN_SAMPLE_OK 1       /* *out holds a sample */
#define KILN_SAMPLE_ERROR (-1) /* the shard cannot be read further (error set) */
#define KILN_SAMPLE_SKIP (-2)  /* this sample is bad (error set), the next one can be read */

/* What a data source provides, registered by scheme ("tar") with host->register_source. `self`
 * is the pointer the plugin passed there. */
typedef struct kiln_source_ops {
  uint32_t struct_size;
  /* Lists the shards of one item of the user's spec (brace patterns already expanded by the
   * core), calling emit(ctx, shard) for each in order; optional: NULL means the item is itself
   * one shard. Returns 0, or non-zero after set_error. */
  kiln_status (*list_shards)(void* self, const char* item,
                             void (*emit)(void* ctx, const char* shard), void* ctx);
  /* Opens one shard; returns a reader, or NULL after set_error (missing file, wrong format). */
  void* (*open_shard)(void* self, const char* shard);
  /* Reads the next sample into *out; returns a KILN_SAMPLE_* code. */
  int32_t (*next)(void* reader, kiln_sample* out);
  /* Closes a reader (after an error too). */
  void (*close)(void* reader);
} kiln_source_ops;

/* Where a decoder writes its value: one call to tensor, text, integer, real, boolean or none, or
 * begin_list/begin_map ... end around nested values (in a map, key before each value). The
 * functions return 0, or non-zero after the core set an error; the decoder then returns it. */
typedef struct kiln_decode_out {
  uint32_t struct_size;
  void* ctx; /* passed back to every function */
  /* A contiguous row-major tensor of this dtype and shape: returns the memory to fill with its
   * bytes (the core may place it straight into a batch), or NULL after setting an error. */
  void* (*tensor)(void* ctx, int32_t dtype, int32_t ndim, const int64_t* sizes);
  kiln_status (*text)(void* ctx, const char* data, uint64_t size); /* UTF-8 */
  kiln_status (*integer)(void* ctx, int64_t value);
  kiln_status (*real)(void* ctx, double value);
  kiln_status (*boolean)(void* ctx, int32_t value);
  kiln_status (*none)(void* ctx);
  kiln_status (*begin_list)(void* ctx);
  kiln_status (*begin_map)(void* ctx);
  kiln_status (*key)(void* ctx, const char* data, uint64_t size); /* the next value's name */
  kiln_status (*end)(void* ctx); /* closes the innermost list or map */
} kiln_decode_out;

/* Decodes one field's bytes. `name` is the field's full extension ("seg.png"). Returns 0, or
 * non-zero after set_error (a message naming what is wrong with the bytes). */
typedef kiln_status (*kiln_decode_fn)(const void* data, uint64_t size, const char* name,
                                      const kiln_decode_out* out, void* user);

/* What kind of failure a plugin reports with host->set_error_kind (ABI 1.2); the core raises the
 * kiln::Error subclass named here. The values are part of the ABI. See Note [Error kinds]. */
typedef enum kiln_error_kind {
  KILN_ERROR_OTHER = 0,           /* kiln::Error: a failure of the device or the plugin */
  KILN_ERROR_VALUE = 1,           /* kiln::ValueError: an argument out of its domain */
  KILN_ERROR_INDEX = 2,           /* kiln::IndexError: an index or dimension out of range */
  KILN_ERROR_TYPE = 3,            /* kiln::TypeError: a dtype the kernel does not take */
  KILN_ERROR_NOT_IMPLEMENTED = 4, /* kiln::NotImplementedError: a case the plugin lacks */
  KILN_ERROR_OUT_OF_MEMORY = 5    /* kiln::OutOfMemoryError: the device's memory is exhausted */
} kiln_error_kind;

/* Note [Error kinds]: a failing call reports its message and its kind with set_error_kind; the
 * core turns the kind into the exception type. set_error(message) reports KILN_ERROR_OTHER,
 * except for the convention of ABI 1.0 and 1.1, which the core still honours so that older
 * plugins keep their exception types: a message that starts with "IndexError: ", "ValueError: ",
 * "TypeError: " or "NotImplementedError: " raises that subclass, without the prefix, whatever
 * the kind. New plugins report the kind instead (kiln/sdk/host.hpp maps C++ exceptions to
 * kinds). An unknown kind raises kiln::Error with a message that names it. */

/* --- Communication backends (ABI 1.3) -------------------------------------------------------
 *
 * A communication backend moves tensors between the processes ("ranks") of a group: the core's
 * kiln::distributed API (process groups, DistributedDataParallel) calls it through
 * kiln_comm_ops. Everything above one group's wire is the core's: the rendezvous store (a file
 * store or a TCP store served by rank 0), sub-groups, dtypes a backend does not reduce (the core
 * widens float16 and bfloat16 to float32 and reduces bool as uint8), tensors on devices whose
 * memory the host cannot read (the core copies them through host memory), and the work handles'
 * exceptions. A backend therefore sees:
 *   - contiguous tensors in host-readable memory (kiln_tensor with row-major strides), of dtypes
 *     bool excepted; reductions only on U8, I8, I16, I32, I64, F32 and F64;
 *   - the same sequence of calls on every rank of a group, from one thread at a time per group.
 * Every call is asynchronous: it returns a work handle at once (the collective may run on the
 * backend's own thread) that the core waits on, always with a bound. A backend must turn every
 * failure into an error, never a hang past the timeout nor a crash: a peer that died or never
 * answers, and sizes or dtypes that differ across ranks (it compares a small header, or its
 * library does), each with a message naming the operation, the group and the rank at fault. */

/* Reductions of all_reduce and reduce_scatter. The values are part of the ABI. */
typedef enum kiln_reduce_op {
  KILN_REDUCE_SUM = 0,
  KILN_REDUCE_AVG = 1, /* the sum divided by the world size (floating dtypes only) */
  KILN_REDUCE_MIN = 2,
  KILN_REDUCE_MAX = 3,
  KILN_REDUCE_PRODUCT = 4
} kiln_reduce_op;

/* The rendezvous store of a group: a key-value store every rank of the group reaches, for the
 * backend to exchange addresses at creation. Keys are already private to the group. Each function
 * returns 0, or non-zero after setting an error (timeout, store lost). */
typedef struct kiln_store {
  uint32_t struct_size;
  void* self; /* passed back to every function */
  kiln_status (*set)(void* self, const char* key, const void* data, uint64_t size);
  /* Waits (at most timeout_ms) until `key` exists, then calls emit(ctx, data, size) once. */
  kiln_status (*get)(void* self, const char* key, int64_t timeout_ms,
                     void (*emit)(void* ctx, const void* data, uint64_t size), void* ctx);
  /* Adds delta to the integer stored at `key` (0 when absent); the new value in *value. */
  kiln_status (*add)(void* self, const char* key, int64_t delta, int64_t* value);
} kiln_store;

/* What the core asks a backend to create a group from. */
typedef struct kiln_comm_group_options {
  uint32_t struct_size;
  int32_t rank;       /* this process's rank in the group, 0 <= rank < world_size */
  int32_t world_size; /* number of ranks */
  int64_t timeout_ms; /* the bound of creation and of every operation of the group */
  const kiln_store* store;
  const char* group_name; /* for messages: "default", "group 1" */
} kiln_comm_group_options;

/* What a backend provides, registered by name with host->register_comm_backend. `self` is the
 * pointer the plugin passed there; a group and a work are the backend's own opaque handles. The
 * collectives return a work, or NULL after set_error (an argument the backend refuses). */
typedef struct kiln_comm_ops {
  uint32_t struct_size;
  /* Joins the group (waits for every rank, at most timeout_ms); NULL after set_error, naming the
   * ranks that never joined. */
  void* (*create_group)(void* self, const kiln_comm_group_options* options);
  /* Leaves the group: works not yet waited for are abandoned. */
  void (*destroy_group)(void* group);
  /* Reduces `tensor` across the ranks in place with a kiln_reduce_op. */
  void* (*all_reduce)(void* group, const kiln_tensor* tensor, int32_t op);
  /* Copies rank `root`'s tensor into the others'. */
  void* (*broadcast)(void* group, const kiln_tensor* tensor, int32_t root);
  /* output (world_size x input's elements, rank r's at r) gets every rank's input. */
  void* (*all_gather)(void* group, const kiln_tensor* output, const kiln_tensor* input);
  /* Reduces input (world_size x output's elements) across ranks; rank r keeps part r. */
  void* (*reduce_scatter)(void* group, const kiln_tensor* output, const kiln_tensor* input,
                          int32_t op);
  /* Completes when every rank has entered it. */
  void* (*barrier)(void* group);
  /* Point to point: to rank `peer` / from rank `peer`, matched by tag. */
  void* (*send)(void* group, const kiln_tensor* tensor, int32_t peer, int32_t tag);
  void* (*recv)(void* group, const kiln_tensor* tensor, int32_t peer, int32_t tag);
  /* Waits for a work at most timeout_ms: 0 done; non-zero failed or timed out (error set, and the
   * work stays failed). May be called again after a failure, and from any thread. */
  kiln_status (*wait)(void* work, int64_t timeout_ms);
  /* 1 when the work has finished (succeeded or failed), 0 while it runs; never blocks. */
  int32_t (*is_completed)(void* work);
  /* Frees a work, finished or not (an unfinished one completes or fails on its own). */
  void (*free_work)(void* work);
  /* 1 when tensors may live on device type `device_type` (a kiln_device.type); optional: NULL
   * means host memory only, and the core stages other tensors through host memory. */
  int32_t (*accepts_device)(void* self, int32_t device_type);
} kiln_comm_ops;

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
  /* --- ABI 1.1 (a plugin checks struct_size before it calls these) --- */
  /* Registers a data source for "scheme:spec" strings; returns non-zero (with an error set) when
   * another plugin has the scheme. `ops` and `self` must stay valid while the plugin is loaded. */
  kiln_status (*register_source)(const char* scheme, const kiln_source_ops* ops, void* self);
  /* Registers the decoder of fields whose last extension is `extension` ("png"); non-zero
   * (with an error set) when another plugin decodes that extension. */
  kiln_status (*register_decoder)(const char* extension, kiln_decode_fn fn, void* user);
  /* --- ABI 1.2 (a plugin checks struct_size before it calls this) --- */
  /* Sets this thread's error message with its kind (a kiln_error_kind), which picks the
   * exception the core raises for a failed kernel or decoder; see Note [Error kinds]. Other
   * entry points may call it too (the core reads their message). */
  void (*set_error_kind)(int32_t kind, const char* message);
  /* --- ABI 1.3 (a plugin checks struct_size before it calls this) --- */
  /* Registers a communication backend by name ("gloo"); non-zero (with an error set) when another
   * plugin has the name. `ops` and `self` must stay valid while the plugin is loaded. */
  kiln_status (*register_comm_backend)(const char* name, const kiln_comm_ops* ops, void* self);
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
/* Registers devices, kernels, sources, decoders and communication backends. Non-zero (with an error
 * set): the plugin is refused and everything it registered is removed. */
KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host);

/* Optional exports of a data-source plugin: its checks, for kiln-plugin-check. The core never
 * calls them, so a plugin without them loads and works as before, on any core; no ABI version
 * changes with them. kiln/sdk/source.hpp's KILN_SOURCE_PLUGIN writes both. `scheme` is one the
 * plugin registers; they are called after kiln_plugin_init, from one thread.
 *
 * The sample corpus: calls emit(ctx, bytes, size) once with the bytes of small valid shard
 * number `index` (0, 1, ...) and returns 1, or returns 0 when there is none. kiln-plugin-check
 * reads each through the source (open_shard on a file holding the bytes) and fuzzes from them. */
KILN_PLUGIN_EXPORT int32_t kiln_source_sample_shard(const char* scheme, int32_t index,
                                                    void (*emit)(void* ctx, const void* data,
                                                                 uint64_t size),
                                                    void* ctx);
/* The fuzz harness: reads `data` as one shard, every sample, and returns 0 (1: unknown scheme).
 * Any outcome but a crash or a hang is a pass; a libFuzzer target may call it too. */
KILN_PLUGIN_EXPORT int32_t kiln_source_fuzz(const char* scheme, const void* data, uint64_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_SDK_PLUGIN_H */
