// Embind bindings: the only translation unit that sees Emscripten.
//
// Thin and raw on purpose. The TypeScript layer (web/lib) validates and
// normalises arguments into plain objects of the form
//   tensor  = { data: Float32Array, shape: number[] }   (undefined = absent)
// and every bound function returns either { ok: true, value } or
// { ok: false, error: "message" }. No C++ exception ever crosses into JS:
// an escaping exception would skip the JS side's cleanup and, with enough of
// them, leave the module unusable. Results are copied into fresh typed
// arrays, never handed out as views of the wasm heap, which memory growth
// would detach.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/attnscope.hpp"

using emscripten::typed_memory_view;
using emscripten::val;

namespace {

// ---- JS → C++ ---------------------------------------------------------------

bool is_absent(const val& v) { return v.isUndefined() || v.isNull(); }

template <class T>
std::vector<T> copy_typed_array(const val& array) {
  const auto n = array["length"].as<std::size_t>();
  std::vector<T> out(n);
  // One memcpy-like TypedArray.set into the freshly allocated vector; the view
  // is created after the allocation, so growth cannot have detached it.
  if (n > 0) val(typed_memory_view(n, out.data())).call<void>("set", array);
  return out;
}

attnscope::Shape to_shape(const val& array) {
  const auto n = array["length"].as<std::size_t>();
  attnscope::Shape shape(n);
  for (std::size_t i = 0; i < n; ++i) shape[i] = array[i].as<std::size_t>();
  return shape;
}

attnscope::Tensor to_tensor(const val& v) {
  if (is_absent(v)) return {};
  return attnscope::Tensor(to_shape(v["shape"]), copy_typed_array<float>(v["data"]));
}

/// A JS tensor copied into a malloc'd buffer and viewed as a TensorView. A
/// vector would be zero-filled before the copy, and musl's memset stores 8
/// bytes at a time: about 1 % of an attention call at T = 1024.
struct CopiedTensor {
  std::unique_ptr<float, decltype(&std::free)> buffer{nullptr, &std::free};
  attnscope::TensorView view;
};

CopiedTensor to_tensor_copy(const val& v) {
  CopiedTensor t;
  const val data = v["data"];
  const auto n = data["length"].as<std::size_t>();
  if (n > 0) {
    if (n > SIZE_MAX / sizeof(float)) throw std::bad_alloc();
    t.buffer.reset(static_cast<float*>(std::malloc(n * sizeof(float))));
    if (!t.buffer) throw std::bad_alloc();
    val(typed_memory_view(n, t.buffer.get())).call<void>("set", data);
  }
  t.view = attnscope::TensorView(to_shape(v["shape"]), t.buffer.get(), n);
  return t;
}

attnscope::BoolTensor to_bool_tensor(const val& v) {
  if (is_absent(v)) return {};
  attnscope::BoolTensor t;
  t.shape = to_shape(v["shape"]);
  t.data = copy_typed_array<std::uint8_t>(v["data"]);
  return t;
}

attnscope::AttentionOptions to_options(const val& o) {
  attnscope::AttentionOptions options;
  const std::string scale = o["scaleMode"].as<std::string>();
  if (scale == "none") {
    options.scale = attnscope::Scale::none();
  } else if (scale == "custom") {
    options.scale = attnscope::Scale::custom(o["scaleFactor"].as<float>());
  } else {
    options.scale = attnscope::Scale::inv_sqrt_dk();
  }
  options.mask.causal = o["causal"].as<bool>();
  if (!is_absent(o["lengths"])) options.mask.lengths = to_shape(o["lengths"]);
  options.mask.additive = to_tensor(o["additive"]);
  options.mask.allowed = to_bool_tensor(o["allowed"]);
  options.trace = o["trace"].as<bool>();
  return options;
}

attnscope::SelfAttentionWeights to_self_attention_weights(const val& w) {
  attnscope::SelfAttentionWeights weights;
  weights.wq = to_tensor(w["wq"]);
  weights.wk = to_tensor(w["wk"]);
  weights.wv = to_tensor(w["wv"]);
  weights.bq = to_tensor(w["bq"]);
  weights.bk = to_tensor(w["bk"]);
  weights.bv = to_tensor(w["bv"]);
  weights.wo = to_tensor(w["wo"]);
  weights.bo = to_tensor(w["bo"]);
  weights.heads = w["heads"].as<std::size_t>();
  return weights;
}

attnscope::Linear to_linear(const val& layer) {
  return {to_tensor(layer["weight"]), to_tensor(layer["bias"])};
}

attnscope::Activation to_activation(const val& name) {
  return name.as<std::string>() == "gelu" ? attnscope::Activation::GELU
                                          : attnscope::Activation::ReLU;
}

// ---- C++ → JS (always copies) -----------------------------------------------

// TypedArray.prototype.slice of a heap view: one allocation and one copy in
// the engine, several times faster than new Float32Array(n) followed by set()
// for outputs of 128 KiB and more. The view lives only for this call.
template <class T>
val copy_out(const std::vector<T>& data) {
  return val(typed_memory_view(data.size(), data.data())).template call<val>("slice");
}

/// Copies into `into`, a caller's Float32Array (the `out` of attention and
/// linear), when one is given; else into a fresh array. The engine has checked
/// its size; the check here keeps a wrong one from being filled in part (too
/// long) or from raising a JS RangeError through these C++ frames (too short).
val copy_out(const std::vector<float>& data, const val& into) {
  if (is_absent(into)) return copy_out(data);
  if (into["length"].as<std::size_t>() != data.size()) {
    throw std::invalid_argument("out does not have the output's size");
  }
  into.call<void>("set", val(typed_memory_view(data.size(), data.data())));
  return into;
}

val shape_out(const attnscope::Shape& shape) {
  val out = val::array();
  for (std::size_t i = 0; i < shape.size(); ++i) out.set(i, static_cast<double>(shape[i]));
  return out;
}

val tensor_out(const attnscope::Tensor& t, const val& into = val::undefined()) {
  val out = val::object();
  out.set("data", copy_out(t.data, into));
  out.set("shape", shape_out(t.shape));
  return out;
}

val trace_out(const attnscope::AttentionTrace& t) {
  val out = val::object();
  out.set("scores", tensor_out(t.scores));
  out.set("scaled", tensor_out(t.scaled));
  out.set("masked", tensor_out(t.masked));
  out.set("weights", tensor_out(t.weights));
  return out;
}


val trace_out(const attnscope::SelfAttentionTrace& t) {
  val out = val::object();
  out.set("q", tensor_out(t.q));
  out.set("k", tensor_out(t.k));
  out.set("v", tensor_out(t.v));
  out.set("scores", tensor_out(t.scores));
  out.set("scaled", tensor_out(t.scaled));
  out.set("masked", tensor_out(t.masked));
  out.set("weights", tensor_out(t.weights));
  out.set("headOutputs", tensor_out(t.head_outputs));
  out.set("concat", tensor_out(t.concat));
  return out;
}

/// AttentionResult and SelfAttentionResult share their layout; only the trace
/// differs. The output goes into `output_into` when one is given.
template <class Result>
val attention_result_out(const Result& r, const val& output_into = val::undefined()) {
  val out = val::object();
  out.set("output", tensor_out(r.output, output_into));
  out.set("fullyMasked", copy_out(r.fully_masked));
  out.set("fullyMaskedCount", static_cast<double>(r.fully_masked_count));
  if (r.trace) out.set("trace", trace_out(*r.trace));
  return out;
}

val block_out(const attnscope::BlockResult& r) {
  val out = val::object();
  out.set("output", tensor_out(r.output));
  out.set("attention", attention_result_out(r.trace.attention));
  out.set("attentionResidual", tensor_out(r.trace.attention_residual));
  out.set("norm1", tensor_out(r.trace.norm1));
  out.set("ffHidden", tensor_out(r.trace.ff_hidden));
  out.set("ffOutput", tensor_out(r.trace.ff_output));
  out.set("ffResidual", tensor_out(r.trace.ff_residual));
  out.set("norm2", tensor_out(r.trace.norm2));
  return out;
}

// ---- the ok/error envelope ----------------------------------------------------

val failure(const std::string& message) {
  val out = val::object();
  out.set("ok", false);
  out.set("error", message);
  return out;
}

/// Runs `compute` and wraps its value; every C++ exception becomes
/// { ok: false, error }. Copying the result out happens inside the try, so an
/// allocation failure there is reported too.
template <class F>
val guarded(F&& compute) {
  try {
    val value = compute();
    val out = val::object();
    out.set("ok", true);
    out.set("value", value);
    return out;
  } catch (const attnscope::Error& e) {
    return failure(e.what());
  } catch (const std::bad_alloc&) {
    return failure("out of memory: the request needs more WebAssembly memory than is available");
  } catch (const std::exception& e) {
    return failure(e.what());
  } catch (...) {
    return failure("unknown C++ exception");
  }
}

// ---- bound entry points ---------------------------------------------------------

val self_attention(val x, val weights, val options) {
  return guarded([&] {
    return attention_result_out(attnscope::self_attention(
        to_tensor(x), to_self_attention_weights(weights), to_options(options)));
  });
}

val attention(val q, val k, val v, val options) {
  return guarded([&] {
    const CopiedTensor queries = to_tensor_copy(q), keys = to_tensor_copy(k),
                       values = to_tensor_copy(v);
    return attention_result_out(
        attnscope::attention(queries.view, keys.view, values.view, to_options(options)),
        options["out"]);
  });
}

val positional_encoding(double length, double dim, double base) {
  return guarded([&] {
    return tensor_out(attnscope::positional_encoding(static_cast<std::size_t>(length),
                                                     static_cast<std::size_t>(dim),
                                                     static_cast<float>(base)));
  });
}

val linear(val x, val layer, val out) {
  return guarded(
      [&] { return tensor_out(attnscope::linear(to_tensor(x), to_linear(layer)), out); });
}

val layer_norm(val x, val gamma, val beta, double eps) {
  return guarded([&] {
    return tensor_out(attnscope::layer_norm(to_tensor(x), to_tensor(gamma), to_tensor(beta),
                                            static_cast<float>(eps)));
  });
}

val feed_forward(val x, val first, val second, val activation) {
  return guarded([&] {
    return tensor_out(attnscope::feed_forward(to_tensor(x), to_linear(first), to_linear(second),
                                              to_activation(activation)));
  });
}

val residual_add(val a, val b) {
  return guarded([&] { return tensor_out(attnscope::residual_add(to_tensor(a), to_tensor(b))); });
}

val transformer_block(val x, val block, val options) {
  return guarded([&] {
    attnscope::BlockWeights weights;
    weights.attention = to_self_attention_weights(block["attention"]);
    weights.norm1_gamma = to_tensor(block["norm1Gamma"]);
    weights.norm1_beta = to_tensor(block["norm1Beta"]);
    weights.norm2_gamma = to_tensor(block["norm2Gamma"]);
    weights.norm2_beta = to_tensor(block["norm2Beta"]);
    weights.ff1 = to_linear(block["ff1"]);
    weights.ff2 = to_linear(block["ff2"]);
    weights.activation = to_activation(block["activation"]);
    weights.eps = block["eps"].as<float>();
    weights.norm_first = block["normFirst"].as<bool>();
    return block_out(attnscope::transformer_block(to_tensor(x), weights, to_options(options)));
  });
}

std::string version() { return attnscope::version(); }
std::string simd_arch() { return attnscope::simd_arch(); }

/// Bytes currently allocated by malloc: lets tests check that calls,
/// good or rejected, leave nothing behind.
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }
/// Current size of the wasm memory in bytes.
double heap_size() { return static_cast<double>(emscripten_get_heap_size()); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnscope) {
  emscripten::function("_self_attention", &self_attention);
  emscripten::function("_attention", &attention);
  emscripten::function("_positional_encoding", &positional_encoding);
  emscripten::function("_linear", &linear);
  emscripten::function("_layer_norm", &layer_norm);
  emscripten::function("_feed_forward", &feed_forward);
  emscripten::function("_residual_add", &residual_add);
  emscripten::function("_transformer_block", &transformer_block);
  emscripten::function("_version", &version);
  emscripten::function("_simd_arch", &simd_arch);
  emscripten::function("_heap_in_use", &heap_in_use);
  emscripten::function("_heap_size", &heap_size);
}
