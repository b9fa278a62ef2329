/* SPDX-License-Identifier: Apache-2.0 */
/* The C API of kjit, for C programs and foreign-function interfaces (ctypes, cffi, ...). Every
 * call returns a kjit_status; on failure kjit_last_error() describes it (per thread). */
#ifndef KJIT_KJIT_H
#define KJIT_KJIT_H

#include <stddef.h>
#include <stdint.h>

/* The version of these headers (the build reads it from here). kjit_version() gives the loaded
 * library's, which a binding compares with KJIT_VERSION_STRING. */
#define KJIT_VERSION_MAJOR 0
#define KJIT_VERSION_MINOR 1
#define KJIT_VERSION_PATCH 0
#define KJIT_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kjit_status {
  KJIT_SUCCESS = 0,
  KJIT_ERROR_INVALID_ARGUMENT = 1,
  KJIT_ERROR_NO_DRIVER = 2,
  KJIT_ERROR_DRIVER = 3,
  KJIT_ERROR_COMPILE = 4,
  KJIT_ERROR_LOAD = 5,
  KJIT_ERROR_LAUNCH = 6,
  KJIT_ERROR_OUT_OF_RESOURCES = 7,
  KJIT_ERROR_INVALID_CONFIG = 8,
  KJIT_ERROR_CACHE_IO = 9,
  KJIT_ERROR_NOT_FOUND = 10,
  KJIT_ERROR_INTERNAL = 11
} kjit_status;

typedef enum kjit_dtype {
  KJIT_F32 = 0,
  KJIT_F16 = 1,
  KJIT_BF16 = 2,
  KJIT_I32 = 3,
  KJIT_I64 = 4
} kjit_dtype;

typedef struct kjit_runtime kjit_runtime;

/* The loaded library's version, e.g. "0.1.0". */
const char* kjit_version(void);

/* How tuning records are used (KJIT_TUNE). */
typedef enum kjit_tune_mode {
  KJIT_TUNE_OFF = 0,       /* heuristics only */
  KJIT_TUNE_CACHED = 1,    /* a tuning record where there is one, else the heuristics */
  KJIT_TUNE_FIRST_USE = 2  /* tune a new problem class on its first call (blocking) */
} kjit_tune_mode;

/* Every runtime knob, as kjit::RuntimeOptions. `size` is sizeof(kjit_options) where the caller
 * was compiled: fields are only ever added at the end, and a library newer than the caller's
 * header gives the fields past `size` their defaults. kjit_options_init fills in everything.
 * Strings are copied when the runtime is created. */
typedef struct kjit_options {
  size_t size;
  const char* cache_dir;     /* cubin cache folder; NULL or "": no disk cache */
  const char* cache_bundle;  /* read-only bundle consulted first; NULL or "": none */
  int32_t disk_cache;        /* 0: keep compiled kernels in memory only */
  int32_t jit;               /* 0: a kernel missing from the caches is an error, never a compile */
  kjit_tune_mode tune;
  const char* log_level;     /* trace, debug, info, warn, error, off; NULL or "": leave as is */
  uint64_t cache_max_bytes;  /* size cap of the disk cache (0: none) */
  int32_t dependent_launch;  /* 0: every kernel waits for the one before it (KJIT_PDL=0) */
} kjit_options;

/* Fills `options` with the environment's settings (KJIT_* variables, as kjit_runtime_create
 * reads them) and sets its size. The strings stay valid until the next call in this thread. */
kjit_status kjit_options_from_environment(kjit_options* options);

/* Creates a runtime; options come from the environment (KJIT_* variables). */
kjit_status kjit_runtime_create(kjit_runtime** rt);
/* Creates a runtime with these options; the environment is not read. */
kjit_status kjit_runtime_create_with_options(kjit_runtime** rt, const kjit_options* options);
/* Destroys a runtime made by kjit_runtime_create (NULL is allowed). */
void kjit_runtime_destroy(kjit_runtime* rt);

/* Compiles (or finds in the caches) and loads the kernel a call needs on the current device,
 * launching nothing, so that later calls, those captured into a CUDA graph too, start at once.
 * With KJIT_TUNE_FIRST_USE it also tunes the call's class, as a first call would. `call` is a
 * JSON object that describes the call without buffers: {"op": "softmax", "dtype": "bf16",
 * "rows": 64, "cols": 4096}, with "out_dtype" for the row-wise ops, "k", "index_dtype" for
 * softmax_topk, and {"op": "attention", "dtype", "batch", "heads", "m", "n", "d", "dv",
 * "bias_dtype", "mask_dtype" ("none" or a dtype), "mask_windows", "causal"} for attention;
 * buffers are taken as contiguous and 16-byte aligned, as allocators give them. */
kjit_status kjit_prepare(kjit_runtime* rt, const char* call);
/* kjit_prepare, then what was chosen as a JSON object (kernel, config, arch, registers, shared
 * memory, spills, cubin size, compile time) written into `report`, truncated to `capacity` bytes
 * with the NUL; `length` (may be NULL) receives the full length, NUL not counted, so a caller
 * can retry with a buffer large enough. */
kjit_status kjit_explain(kjit_runtime* rt, const char* call, char* report, size_t capacity,
                         size_t* length);

/* Levels of kjit's log lines. */
typedef enum kjit_log_level {
  KJIT_LOG_TRACE = 0,
  KJIT_LOG_DEBUG = 1,
  KJIT_LOG_INFO = 2,
  KJIT_LOG_WARN = 3,
  KJIT_LOG_ERROR = 4,
  KJIT_LOG_CRITICAL = 5
} kjit_log_level;

/* Receives one log line (without a trailing newline). Called from whichever thread logs, so it
 * must be thread-safe; it must not call back into kjit. */
typedef void (*kjit_log_callback)(kjit_log_level level, const char* message, void* user_data);

/* Sends kjit's log lines to `callback` instead of stderr, process-wide; NULL restores stderr.
 * Which lines are made is set by KJIT_LOG_LEVEL or the options' log_level. */
void kjit_set_log_callback(kjit_log_callback callback, void* user_data);

/* out = softmax(in) per row. Strides are in elements; stream is a CUstream (NULL: default). */
kjit_status kjit_softmax(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                         int64_t out_row_stride, int64_t rows, int64_t cols, kjit_dtype in_dtype,
                         kjit_dtype out_dtype, void* stream);
/* out = log_softmax(in) per row. */
kjit_status kjit_log_softmax(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                             int64_t out_row_stride, int64_t rows, int64_t cols,
                             kjit_dtype in_dtype, kjit_dtype out_dtype, void* stream);
/* out = in / max|in| per row (zeros stay zeros); scale_out (may be NULL) gets max|in| per row. */
kjit_status kjit_reduce_scale(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                              int64_t out_row_stride, float* scale_out, int64_t rows,
                              int64_t cols, kjit_dtype in_dtype, kjit_dtype out_dtype,
                              void* stream);

/* Flags of kjit_softmax_topk. */
#define KJIT_TOPK_LOGPROBS 1u /* write log-probabilities instead of probabilities */
#define KJIT_TOPK_RENORM 2u   /* renormalize the k probabilities of each row to sum to 1 */
/* Largest k kjit_softmax_topk accepts. */
#define KJIT_MAX_TOPK 4096

/* Fused softmax + top-K for sampling. For each of `rows` rows of `cols` logits (fp32, fp16 or
 * bf16; rows `row_stride` elements apart): p = softmax(logits / temperature) over the whole row,
 * then the k largest p, sorted descending, equal values in ascending index order. probs_out is
 * [rows, k] fp32 and idx_out [rows, k] of KJIT_I32 or KJIT_I64, both contiguous. k_per_row (a
 * device array of `rows` values, may be NULL) gives each row its own k (clamped to [0, k]); the
 * slots past it get index -1 and probability 0 (-inf with KJIT_TOPK_LOGPROBS). -inf logits have
 * probability 0; a row with a NaN gives NaN probabilities (indices stay valid: NaN ranks above
 * +inf); a row of only -inf logits gives NaN probabilities, as softmax does. */
kjit_status kjit_softmax_topk(kjit_runtime* rt, const void* logits, int64_t row_stride,
                              int64_t rows, int64_t cols, kjit_dtype in_dtype, int32_t k,
                              const int32_t* k_per_row, float temperature, uint32_t flags,
                              float* probs_out, void* idx_out, kjit_dtype idx_dtype, void* stream);

/* Batched attention over many small problems (batch x heads of them), one call:
 *   O[b,h] = softmax(Q[b,h] K[b,h]^T * scale + bias[h] + mask[b % mask_windows]) V[b,h]
 * with Q [m, d], K [n, d], V [n, dv], O [m, dv] per problem; the softmax runs in fp32, and with
 * `causal` key j > query i is masked. A row with every key masked (-inf) gives zeros, not NaN.
 * m, n in 1..256; d, dv in 16, 32, 64 or 128; q, k, v, o of `dtype` (KJIT_F16 or KJIT_BF16);
 * bias [heads, m, n] and mask [mask_windows, m, n] additive, of f32, f16 or bf16, each may be
 * NULL. Strides are in elements (batch, head, row; the last dimension is contiguous), so
 * [B, H, N, D] and [B, N, H, D] layouts both work; q, k, v and o must start on 16 bytes and
 * have strides that are multiples of 8 elements. o must not overlap an input. */
typedef struct kjit_attention_args {
  size_t struct_size; /* sizeof(kjit_attention_args) of the caller; lets the struct grow */
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const void* bias; /* [heads, m, n] additive, shared by the batch; may be NULL */
  const void* mask; /* [mask_windows, m, n] additive, problem b uses b % mask_windows; may be NULL */
  int64_t batch, heads, m, n, d, dv, mask_windows;
  int64_t q_strides[3], k_strides[3], v_strides[3], o_strides[3]; /* elements: batch, head, row; the last dim is contiguous */
  int64_t bias_strides[2], mask_strides[2];                       /* elements: head (window), row */
  kjit_dtype dtype, bias_dtype, mask_dtype; /* dtype f16 or bf16; bias/mask f32, f16 or bf16 */
  float scale;
  int causal;
} kjit_attention_args;

/* Runs the attention `args` describes on `stream` (a CUstream; NULL: the default stream).
 * args->struct_size must be at least sizeof(kjit_attention_args) as this header declares it. */
kjit_status kjit_attention(kjit_runtime* rt, const kjit_attention_args* args, void* stream);

/* The message of this thread's last failed call ("" if none). Valid until the next kjit call. */
const char* kjit_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KJIT_KJIT_H */
