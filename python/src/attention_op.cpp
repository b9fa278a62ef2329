// SPDX-License-Identifier: Apache-2.0
// Runtime._attention on any CUDA arrays that speak DLPack: q [B, H, M, D], k [B, H, N, D],
// v [B, H, N, Dv] (or [P, M, D], ... with one head) at any batch, head and row strides, so a
// [B, N, H, D] buffer seen as a permuted view works. Every error names the argument; the device
// is checked last, so every other mistake shows on any machine.
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "python/src/array_hooks.h"
#include "python/src/array_view.h"
#include "python/src/attention_call.h"
#include "python/src/errors.h"
#include "python/src/log_forwarding.h"
#include "python/src/py_runtime.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

const std::initializer_list<DType> kHalves = {DType::kF16, DType::kBF16};
const std::initializer_list<DType> kAddends = {DType::kF32, DType::kF16, DType::kBF16};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  ArrayView shown;
  shown.shape = shape;
  return shown.shape_text();
}

/// One of q, k, v, out read as (batch, heads, rows, cols) with its three strides.
struct Operand {
  ArrayView view;
  std::int64_t batch = 0, heads = 1, rows = 0, cols = 0;
  std::array<std::int64_t, 3> strides{};
};

/// `ndim` 0: 3 or 4 (q's choice); else the dimensions q has.
Operand operand(nb::handle object, const char* name, bool writable, std::size_t ndim) {
  Operand t{view_array(object, name, writable, kHalves)};
  const ArrayView& v = t.view;
  if (ndim == 0 && v.shape.size() != 3 && v.shape.size() != 4)
    reject(name, "expected a 4-d [batch, heads, tokens, dim] or 3-d [problems, tokens, dim] "
                 "array, got shape " + v.shape_text());
  if (ndim == 0) ndim = v.shape.size();
  if (v.shape.size() != ndim)
    reject(name, "expected a " + std::to_string(ndim) + "-d array like q, got shape " +
                     v.shape_text());
  const bool heads = ndim == 4;
  t.batch = v.shape[0];
  t.heads = heads ? v.shape[1] : 1;
  t.rows = v.shape[ndim - 2];
  t.cols = v.shape[ndim - 1];
  t.strides = {v.strides[0], heads ? v.strides[1] : 0, v.strides[ndim - 2]};
  bool empty = false;  // an empty array's strides say nothing (exporters give 0 or anything)
  for (std::int64_t extent : v.shape) empty = empty || extent == 0;
  if (!empty && t.cols > 1 && v.strides[ndim - 1] != 1)
    reject(name, "the last dimension must be contiguous (stride 1), but its stride is " +
                     std::to_string(v.strides[ndim - 1]));
  return t;
}

void require_tokens(const Operand& t, const char* what) {
  if (t.rows < 1 || t.rows > kMaxAttentionTokens)
    reject(t.view.name, std::string(what) + " (dimension -2) must be in 1.." +
                            std::to_string(kMaxAttentionTokens) + " (got " +
                            std::to_string(t.rows) + ")");
}

void require_dim(const Operand& t) {
  if (t.cols != 16 && t.cols != 32 && t.cols != 64 && t.cols != 128)
    reject(t.view.name, "the last dimension must be 16, 32, 64 or 128 (got " +
                            std::to_string(t.cols) + ")");
}

/// k and v agree with q on batch, heads and dtype; k's dim is q's; v's tokens are k's.
void check_operands(const Operand& q, const Operand& k, const Operand& v) {
  if (q.heads < 1) reject("q", "has no heads (dimension 1 is 0)");
  require_tokens(q, "the query count");
  require_dim(q);
  for (const Operand* t : {&k, &v}) {
    if (t->view.dtype != q.view.dtype)
      reject(t->view.name, std::string("dtype ") + framework_dtype_name(t->view.dtype) +
                               " differs from q's " + framework_dtype_name(q.view.dtype));
    if (t->batch != q.batch || t->heads != q.heads)
      reject(t->view.name, "shape " + t->view.shape_text() + " does not match q's " +
                               q.view.shape_text() + " in its leading dimensions");
  }
  require_tokens(k, "the key count");
  if (k.cols != q.cols)
    reject("k", "its last dimension (" + std::to_string(k.cols) + ") differs from q's (" +
                    std::to_string(q.cols) + ")");
  if (v.rows != k.rows)
    reject("v", "has " + std::to_string(v.rows) + " tokens (dimension -2), but k has " +
                    std::to_string(k.rows));
  require_dim(v);
}

/// bias [H, M, N] or mask [W, M, N]: its count (H or W), strides and dtype.
struct Addend {
  std::optional<ArrayView> view;
  std::int64_t count = 1;
  std::array<std::int64_t, 2> strides{};
};

Addend addend(nb::handle object, const char* name, const Operand& q, const Operand& k,
              std::optional<std::int64_t> heads) {
  Addend a;
  if (object.is_none()) return a;
  a.view = view_array(object, name, false, kAddends);
  const ArrayView& v = *a.view;
  const std::string layout = heads ? "[heads, m, n]" : "[windows, m, n]";
  if (v.shape.size() != 3 || v.shape[1] != q.rows || v.shape[2] != k.rows ||
      (heads && v.shape[0] != *heads))
    reject(name, "shape " + v.shape_text() + " does not match " + layout + " = " +
                     shape_text({heads.value_or(v.shape.size() == 3 ? v.shape[0] : 1), q.rows,
                                 k.rows}) +
                     " (from q and k)");
  if (v.shape[0] < 1) reject(name, "has no windows (its first dimension is 0)");
  if (v.shape[2] > 1 && v.strides[2] != 1)
    reject(name, "the last dimension must be contiguous (stride 1), but its stride is " +
                     std::to_string(v.strides[2]));
  a.count = v.shape[0];
  a.strides = {v.strides[0], v.strides[1]};
  return a;
}

std::vector<std::int64_t> output_shape(const Operand& q, const Operand& v) {
  std::vector<std::int64_t> shape = q.view.shape;
  shape.back() = v.cols;
  return shape;
}

float scale_of(nb::handle scale, const Operand& q) {
  if (scale.is_none()) return static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.cols)));
  double value = 0.0;
  if (!nb::try_cast(scale, value))
    reject("scale", std::string("expected a number or None, got ") +
                        nb::type_name(scale.type()).c_str());
  const float narrowed = static_cast<float>(value);
  if (!std::isfinite(narrowed))
    reject("scale", "must be finite in float32 (got " + std::to_string(value) + ")");
  return narrowed;
}

/// The call for the runtime; `o` is filled in once the output exists.
AttentionArgs args_of(const Operand& q, const Operand& k, const Operand& v, const Addend& bias,
                      const Addend& mask, float scale, bool causal) {
  AttentionArgs args;
  args.q = q.view.data;
  args.k = k.view.data;
  args.v = v.view.data;
  args.batch = q.batch;
  args.heads = q.heads;
  args.m = q.rows;
  args.n = k.rows;
  args.d = q.cols;
  args.dv = v.cols;
  args.q_strides = q.strides;
  args.k_strides = k.strides;
  args.v_strides = v.strides;
  args.dtype = q.view.dtype;
  if (bias.view) {
    args.bias = bias.view->data;
    args.bias_dtype = bias.view->dtype;
    args.bias_strides = bias.strides;
  }
  if (mask.view) {
    args.mask = mask.view->data;
    args.mask_dtype = mask.view->dtype;
    args.mask_strides = mask.strides;
    args.mask_windows = mask.count;
  }
  args.scale = scale;
  args.causal = causal;
  return args;
}

nb::object attention(PyRuntime& self, nb::handle q_object, nb::handle k_object,
                     nb::handle v_object, nb::handle bias_object, nb::handle mask_object,
                     nb::handle scale_object, bool causal, nb::handle out_object,
                     nb::handle stream) {
  LogFlush flush;
  const Operand q = operand(q_object, "q", false, 0);
  const std::size_t ndim = q.view.shape.size();
  const Operand k = operand(k_object, "k", false, ndim);
  const Operand v = operand(v_object, "v", false, ndim);
  check_operands(q, k, v);
  const Addend bias = addend(bias_object, "bias", q, k, q.heads);
  const Addend mask = addend(mask_object, "mask", q, k, std::nullopt);
  const float scale = scale_of(scale_object, q);
  const std::vector<std::int64_t> shape = output_shape(q, v);
  std::optional<Operand> out;
  if (!out_object.is_none()) {
    out = operand(out_object, "out", true, ndim);
    if (out->view.shape != shape)
      reject("out", "shape " + out->view.shape_text() + " does not match " + shape_text(shape) +
                        " (q's shape with v's last dimension)");
    if (out->view.dtype != q.view.dtype)
      reject("out", std::string("dtype ") + framework_dtype_name(out->view.dtype) +
                        " differs from q's " + framework_dtype_name(q.view.dtype));
  }
  require_cuda(q.view);
  for (const Operand* t : {&k, &v}) require_cuda(t->view, &q.view);
  if (bias.view) require_cuda(*bias.view, &q.view);
  if (mask.view) require_cuda(*mask.view, &q.view);
  if (out) require_cuda(out->view, &q.view);
  nb::object result = out ? nb::borrow(out_object) : allocate_like(q_object, shape, q.view.dtype);
  if (!out) out = operand(result, "out", true, ndim);
  AttentionArgs args = args_of(q, k, v, bias, mask, scale, causal);
  args.o = out->view.data;
  args.o_strides = out->strides;
  void* handle = stream_for(q_object, stream);
  run_attention(*self.runtime, args, handle, q.view.device_id);
  return result;
}

}  // namespace

void bind_attention_op(nb::class_<PyRuntime>& runtime) {
  runtime.def("_attention", &attention, nb::arg("q"), nb::arg("k"), nb::arg("v"),
              nb::arg("bias").none(), nb::arg("mask").none(), nb::arg("scale").none(),
              nb::arg("causal"), nb::arg("out").none(), nb::arg("stream").none());
}

}  // namespace kjit::python
