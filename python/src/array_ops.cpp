// SPDX-License-Identifier: Apache-2.0
// The ops on any CUDA array that speaks DLPack: arguments checked (each error naming its
// argument, the device last, so every other mistake shows on any machine), missing outputs
// allocated through the input's framework, the call run in the input's device.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "python/src/array_hooks.h"
#include "python/src/array_view.h"
#include "python/src/device_scope.h"
#include "python/src/errors.h"
#include "python/src/log_forwarding.h"
#include "python/src/py_runtime.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

const std::initializer_list<DType> kFloats = {DType::kF32, DType::kF16, DType::kBF16};

std::vector<std::int64_t> leading_shape(const ArrayView& view) {
  return {view.shape.begin(), view.shape.end() - 1};
}

/// An output given or allocated; `allocated` holds the new array to hand back.
struct Output {
  std::optional<ArrayView> view;
  nb::object object;
};

/// `given` checked as an output of `shape` (its dtype among `allowed`), or left to allocate.
Output given_output(nb::handle given, const char* name, const std::vector<std::int64_t>& shape,
                    const std::string& shape_of, std::initializer_list<DType> allowed,
                    bool contiguous) {
  Output output;
  if (given.is_none()) return output;
  output.view = view_rows(given, name, true, allowed);
  require_shape(*output.view, shape, shape_of);
  if (contiguous) require_contiguous(*output.view);
  output.object = nb::borrow(given);
  return output;
}

void allocate_if_missing(Output& output, const ArrayView& like, nb::handle like_object,
                         const char* name, const std::vector<std::int64_t>& shape, DType dtype) {
  if (output.view) return;
  output.object = allocate_like(like_object, shape, dtype);
  output.view = view_rows(output.object, name, true, {dtype});
}

std::optional<DType> requested_dtype(nb::handle dtype, const char* name) {
  if (dtype.is_none()) return std::nullopt;
  return parse_dtype_object(dtype, name);
}

void require_same_dtype(const Output& output, std::optional<DType> requested, const char* name) {
  if (requested && output.view && output.view->dtype != *requested)
    reject(name, std::string(framework_dtype_name(*requested)) + " differs from " +
                     output.view->name + "'s dtype " + framework_dtype_name(output.view->dtype));
}

void run_rowwise(Runtime& runtime, RowOp op, const RowwiseArgs& args, float* scale_out,
                 void* stream) {
  switch (op) {
    case RowOp::kSoftmax: return runtime.softmax(args, stream);
    case RowOp::kLogSoftmax: return runtime.log_softmax(args, stream);
    case RowOp::kReduceScale: return runtime.reduce_scale(args, scale_out, stream);
  }
}

nb::object rowwise(PyRuntime& self, RowOp op, nb::handle x_object, nb::handle out_object,
                   nb::handle out_dtype, nb::handle scale_object, nb::handle stream) {
  LogFlush flush;
  const ArrayView x = view_rows(x_object, "x", false, kFloats);
  const std::optional<DType> requested = requested_dtype(out_dtype, "out_dtype");
  Output out = given_output(out_object, "out", x.shape, "x's shape", kFloats, false);
  require_same_dtype(out, requested, "out_dtype");
  const bool want_scale = !scale_object.is_none() && !scale_object.is(Py_False);
  Output scale;
  if (want_scale && !scale_object.is(Py_True))
    scale = given_output(scale_object, "scale", x.rows == 1 && x.shape.size() == 1
                                                    ? std::vector<std::int64_t>{1}
                                                    : leading_shape(x),
                         "x's shape without its last dimension", {DType::kF32}, true);
  require_cuda(x);
  if (out.view) require_cuda(*out.view, &x);
  if (scale.view) require_cuda(*scale.view, &x);
  allocate_if_missing(out, x, x_object, "out", x.shape, requested.value_or(x.dtype));
  if (want_scale) {
    const auto shape = x.shape.size() == 1 ? std::vector<std::int64_t>{1} : leading_shape(x);
    allocate_if_missing(scale, x, x_object, "scale", shape, DType::kF32);
  }
  const RowwiseArgs args{x.data, x.row_stride, out.view->data, out.view->row_stride,
                         x.rows, x.cols, x.dtype, out.view->dtype};
  void* handle = stream_for(x_object, stream);
  DeviceScope scope(x.device_id);
  float* scale_out = scale.view ? static_cast<float*>(scale.view->data) : nullptr;
  run_rowwise(*self.runtime, op, args, scale_out, handle);
  if (op == RowOp::kReduceScale && want_scale) return nb::make_tuple(out.object, scale.object);
  return out.object;
}

struct TopkOptions {
  int k = 1;
  double temperature = 1.0;
  bool logprobs = false, renorm = false;
};

void check_topk_scalars(const ArrayView& logits, const TopkOptions& options) {
  if (options.k < 1) reject("k", "must be >= 1 (got " + std::to_string(options.k) + ")");
  if (options.k > logits.cols)
    reject("k", std::to_string(options.k) + " is larger than the last dimension of logits (" +
                    std::to_string(logits.cols) + ")");
  if (options.k > kMaxTopK)
    reject("k", std::to_string(options.k) + " is above the maximum of " +
                    std::to_string(kMaxTopK));
  if (!(options.temperature > 0.0) || !std::isfinite(options.temperature))
    reject("temperature", "must be finite and > 0 (got " + std::to_string(options.temperature) + ")");
}

nb::object softmax_topk(PyRuntime& self, nb::handle logits_object, int k, double temperature,
                        nb::handle k_per_row_object, bool logprobs, bool renorm,
                        nb::handle index_dtype, nb::handle probs_object,
                        nb::handle indices_object, nb::handle stream) {
  LogFlush flush;
  const ArrayView logits = view_rows(logits_object, "logits", false, kFloats);
  const TopkOptions options{k, temperature, logprobs, renorm};
  check_topk_scalars(logits, options);
  std::vector<std::int64_t> shape = leading_shape(logits);
  shape.push_back(k);
  const std::string shape_of = "logits' shape with k as its last dimension";
  Output probs = given_output(probs_object, "probs", shape, shape_of, {DType::kF32}, true);
  Output indices =
      given_output(indices_object, "indices", shape, shape_of, {DType::kI32, DType::kI64}, true);
  const std::optional<DType> requested = requested_dtype(index_dtype, "index_dtype");
  if (requested && *requested != DType::kI32 && *requested != DType::kI64)
    reject("index_dtype", std::string(framework_dtype_name(*requested)) +
                              " is not supported; expected int32 or int64");
  require_same_dtype(indices, requested, "index_dtype");
  std::optional<ArrayView> k_per_row;
  if (!k_per_row_object.is_none()) {
    k_per_row = view_rows(k_per_row_object, "k_per_row", false, {DType::kI32});
    require_contiguous(*k_per_row);
    if (k_per_row->rows * k_per_row->cols != logits.rows)
      reject("k_per_row", "has " + std::to_string(k_per_row->rows * k_per_row->cols) +
                              " values for " + std::to_string(logits.rows) + " rows of logits");
  }
  require_cuda(logits);
  if (probs.view) require_cuda(*probs.view, &logits);
  if (indices.view) require_cuda(*indices.view, &logits);
  if (k_per_row) require_cuda(*k_per_row, &logits);
  allocate_if_missing(probs, logits, logits_object, "probs", shape, DType::kF32);
  allocate_if_missing(indices, logits, logits_object, "indices", shape,
                      requested.value_or(DType::kI64));
  TopkArgs args;
  args.logits = logits.data;
  args.row_stride = logits.row_stride;
  args.rows = logits.rows;
  args.cols = logits.cols;
  args.in_dtype = logits.dtype;
  args.k = k;
  args.k_per_row = k_per_row ? static_cast<const std::int32_t*>(k_per_row->data) : nullptr;
  args.temperature = static_cast<float>(temperature);
  args.flags = (logprobs ? kTopkLogProbs : 0u) | (renorm ? kTopkRenorm : 0u);
  args.probs_out = static_cast<float*>(probs.view->data);
  args.idx_out = indices.view->data;
  args.idx_dtype = indices.view->dtype;
  void* handle = stream_for(logits_object, stream);
  DeviceScope scope(logits.device_id);
  self.runtime->softmax_topk(args, handle);
  return nb::make_tuple(probs.object, indices.object);
}

}  // namespace

void bind_array_ops(nb::class_<PyRuntime>& runtime) {
  auto rowwise_op = [](RowOp op) {
    return [op](PyRuntime& self, nb::handle x, nb::handle out, nb::handle out_dtype,
                nb::handle stream) { return rowwise(self, op, x, out, out_dtype, nb::none(), stream); };
  };
  runtime.def("_softmax", rowwise_op(RowOp::kSoftmax), nb::arg("x"), nb::arg("out").none(),
              nb::arg("out_dtype").none(), nb::arg("stream").none());
  runtime.def("_log_softmax", rowwise_op(RowOp::kLogSoftmax), nb::arg("x"),
              nb::arg("out").none(), nb::arg("out_dtype").none(), nb::arg("stream").none());
  runtime.def(
      "_reduce_scale",
      [](PyRuntime& self, nb::handle x, nb::handle out, nb::handle out_dtype, nb::handle scale,
         nb::handle stream) {
        return rowwise(self, RowOp::kReduceScale, x, out, out_dtype, scale, stream);
      },
      nb::arg("x"), nb::arg("out").none(), nb::arg("out_dtype").none(), nb::arg("scale").none(),
      nb::arg("stream").none());
  runtime.def("_softmax_topk", &softmax_topk, nb::arg("logits"), nb::arg("k"),
              nb::arg("temperature"), nb::arg("k_per_row").none(), nb::arg("logprobs"),
              nb::arg("renorm"), nb::arg("index_dtype").none(), nb::arg("probs").none(),
              nb::arg("indices").none(), nb::arg("stream").none());
}

}  // namespace kjit::python
