// The call frame between the TypeScript layer and the engine (see call.hpp),
// and one runner per engine function: each reads its inputs by name, calls
// the core and puts its results by name ("trace.scores" nests as
// result.trace.scores on the JS side).
#include "call.hpp"

#include "models.hpp"
#include "training.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>
#include <utility>

namespace attnscope::bindings {
namespace {

/// Largest count or dimension accepted: anything larger cannot be held in a
/// 32-bit address space as floats anyway.
constexpr double kMaxCount = 4294967295.0;

/// `value` as a size_t when it is an integer in [min, kMaxCount].
std::size_t checked_size(double value, double min, const std::string& what) {
  if (!(value >= min && value <= kMaxCount) || std::floor(value) != value) {
    throw Error(what + " must be an integer in [" + std::to_string(static_cast<long long>(min)) +
                ", 2^32), got " + std::to_string(value));
  }
  return static_cast<std::size_t>(value);
}

Shape checked_shape(const std::string& name, double rank, const double (&dims)[kMaxRank]) {
  const std::size_t n = checked_size(rank, 0, name + ": rank");
  if (n > kMaxRank) throw Error(name + ": rank " + std::to_string(n) + " is above 4");
  Shape shape(n);
  for (std::size_t i = 0; i < n; ++i) {
    shape[i] = checked_size(dims[i], 1, name + ": dimension " + std::to_string(i));
  }
  return shape;
}

/// Runs `body`, turning every C++ exception into a message.
template <class F>
std::string guarded(F&& body) {
  try {
    body();
    return {};
  } catch (const std::bad_alloc&) {
    return "out of memory: the request needs more WebAssembly memory than is available";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown C++ exception";
  }
}

// ---- readers of the common arguments -------------------------------------------

AttentionOptions attention_options(const Call& c) {
  AttentionOptions options;
  const std::string scale = c.text_or("scaleMode", "inv_sqrt_dk");
  if (scale == "none") {
    options.scale = Scale::none();
  } else if (scale == "custom") {
    options.scale = Scale::custom(static_cast<float>(c.number_or("scaleFactor", 1.0)));
  } else {
    options.scale = Scale::inv_sqrt_dk();
  }
  options.mask.causal = c.number_or("causal", 0) != 0;
  options.mask.lengths = c.counts_or_empty("lengths");
  options.mask.additive = c.tensor_or_empty("additive");
  options.mask.allowed = c.bool_tensor_or_empty("allowed");
  // The TS layer has checked these; the core checks them again against the shapes.
  const double window = c.number_or("window", 0);
  if (window != 0) options.mask.window = static_cast<std::int64_t>(window);
  options.mask.sinks = static_cast<std::size_t>(c.number_or("sinks", 0));
  const double rope_base = c.number_or("ropeBase", 0);
  if (rope_base != 0) options.rope = Rope{true, rope_base};
  options.bias.alibi = c.text_or("bias", "") == "alibi";
  options.bias.values = c.tensor_or_empty("biasValues");
  options.trace = c.number_or("trace", 1) != 0;
  return options;
}

SelfAttentionWeights self_attention_weights(const Call& c) {
  SelfAttentionWeights w;
  w.wq = c.tensor_or_empty("wq");
  w.wk = c.tensor_or_empty("wk");
  w.wv = c.tensor_or_empty("wv");
  w.bq = c.tensor_or_empty("bq");
  w.bk = c.tensor_or_empty("bk");
  w.bv = c.tensor_or_empty("bv");
  w.wo = c.tensor_or_empty("wo");
  w.bo = c.tensor_or_empty("bo");
  w.heads = c.size_number("heads");
  w.kv_heads = static_cast<std::size_t>(c.number_or("kvHeads", 0));
  return w;
}

Activation activation(const Call& c) {
  return c.text_or("activation", "relu") == "gelu" ? Activation::GELU : Activation::ReLU;
}

// ---- writers of the results ---------------------------------------------------------

/** The rotated q and k (with rope) and the bias (with one): only when computed. */
template <class Trace>
void put_variant_trace(Call& c, const std::string& prefix, Trace&& t) {
  if (!t.q_rotated.empty()) c.put(prefix + "qRotated", std::move(t.q_rotated));
  if (!t.k_rotated.empty()) c.put(prefix + "kRotated", std::move(t.k_rotated));
  if (!t.bias.empty()) c.put(prefix + "bias", std::move(t.bias));
}

void put_trace(Call& c, const std::string& prefix, AttentionTrace&& t) {
  c.put(prefix + "scores", std::move(t.scores));
  c.put(prefix + "scaled", std::move(t.scaled));
  c.put(prefix + "masked", std::move(t.masked));
  c.put(prefix + "weights", std::move(t.weights));
  put_variant_trace(c, prefix, std::move(t));
}

void put_trace(Call& c, const std::string& prefix, SelfAttentionTrace&& t) {
  c.put(prefix + "q", std::move(t.q));
  c.put(prefix + "k", std::move(t.k));
  c.put(prefix + "v", std::move(t.v));
  c.put(prefix + "scores", std::move(t.scores));
  c.put(prefix + "scaled", std::move(t.scaled));
  c.put(prefix + "masked", std::move(t.masked));
  c.put(prefix + "weights", std::move(t.weights));
  c.put(prefix + "headOutputs", std::move(t.head_outputs));
  c.put(prefix + "concat", std::move(t.concat));
  put_variant_trace(c, prefix, std::move(t));
}

/// AttentionResult and SelfAttentionResult share their layout; only the trace differs.
template <class Result>
void put_attention(Call& c, const std::string& prefix, Result&& r) {
  c.put(prefix + "output", std::move(r.output));
  c.put(prefix + "fullyMasked", std::move(r.fully_masked));
  c.put(prefix + "fullyMaskedCount", static_cast<double>(r.fully_masked_count));
  if (r.trace) put_trace(c, prefix + "trace.", std::move(*r.trace));
}

// ---- the runners ----------------------------------------------------------------------

void run_attention(Call& c) {
  if (c.number_or("logSumExp", 0) == 0) {
    put_attention(c, "", attention(c.view("q"), c.view("k"), c.view("v"), attention_options(c)));
    return;
  }
  AttentionResult r =
      attention_with_log_sum_exp(c.view("q"), c.view("k"), c.view("v"), attention_options(c));
  c.put("logSumExp", std::move(r.log_sum_exp));
  put_attention(c, "", std::move(r));
}

void run_attention_backward(Call& c) {
  // "savedForward": the forward's output and logSumExp are given.
  AttentionGradients g =
      c.number_or("savedForward", 0) != 0
          ? attention_backward(c.view("q"), c.view("k"), c.view("v"), c.view("dOutput"),
                               SavedForward{c.view("output"), c.view("logSumExp")},
                               attention_options(c))
          : attention_backward(c.view("q"), c.view("k"), c.view("v"), c.view("dOutput"),
                               attention_options(c));
  c.put("dq", std::move(g.dq));
  c.put("dk", std::move(g.dk));
  c.put("dv", std::move(g.dv));
}

void run_self_attention(Call& c) {
  put_attention(
      c, "",
      self_attention(c.tensor_or_empty("x"), self_attention_weights(c), attention_options(c)));
}

void run_positional_encoding(Call& c) {
  c.put("output", positional_encoding(c.size_number("length"), c.size_number("dim"),
                                      static_cast<float>(c.number_or("base", 10000))));
}

void run_linear(Call& c) {
  c.put("output", linear(c.tensor_or_empty("x"),
                         Linear{c.tensor_or_empty("weight"), c.tensor_or_empty("bias")}));
}

void run_layer_norm(Call& c) {
  c.put("output",
        layer_norm(c.tensor_or_empty("x"), c.tensor_or_empty("gamma"), c.tensor_or_empty("beta"),
                   static_cast<float>(c.number_or("eps", 1e-5))));
}

void run_feed_forward(Call& c) {
  c.put(
      "output",
      feed_forward(c.tensor_or_empty("x"), Linear{c.tensor_or_empty("w1"), c.tensor_or_empty("b1")},
                   Linear{c.tensor_or_empty("w2"), c.tensor_or_empty("b2")}, activation(c)));
}

void run_residual_add(Call& c) {
  c.put("output", residual_add(c.tensor_or_empty("a"), c.tensor_or_empty("b")));
}

void run_transformer_block(Call& c) {
  BlockWeights w;
  w.attention = self_attention_weights(c);
  w.norm1_gamma = c.tensor_or_empty("norm1Gamma");
  w.norm1_beta = c.tensor_or_empty("norm1Beta");
  w.norm2_gamma = c.tensor_or_empty("norm2Gamma");
  w.norm2_beta = c.tensor_or_empty("norm2Beta");
  w.ff1 = Linear{c.tensor_or_empty("ff1Weight"), c.tensor_or_empty("ff1Bias")};
  w.ff2 = Linear{c.tensor_or_empty("ff2Weight"), c.tensor_or_empty("ff2Bias")};
  w.activation = activation(c);
  w.eps = static_cast<float>(c.number_or("eps", 1e-5));
  w.norm_first = c.number_or("normFirst", 0) != 0;
  BlockResult r = transformer_block(c.tensor_or_empty("x"), w, attention_options(c));
  c.put("output", std::move(r.output));
  put_attention(c, "attention.", std::move(r.trace.attention));
  c.put("attentionResidual", std::move(r.trace.attention_residual));
  c.put("norm1", std::move(r.trace.norm1));
  c.put("ffHidden", std::move(r.trace.ff_hidden));
  c.put("ffOutput", std::move(r.trace.ff_output));
  c.put("ffResidual", std::move(r.trace.ff_residual));
  c.put("norm2", std::move(r.trace.norm2));
}

/// A Linear read from "<prefix>Weight" and "<prefix>Bias".
Linear linear_named(const Call& c, const std::string& prefix) {
  return Linear{c.tensor_or_empty(prefix + "Weight"), c.tensor_or_empty(prefix + "Bias")};
}

void run_rms_norm(Call& c) {
  c.put("output", rms_norm(c.tensor_or_empty("x"), c.tensor_or_empty("gamma"),
                           static_cast<float>(c.number_or("eps", 1e-6))));
}

void run_swiglu(Call& c) {
  c.put("output", swiglu(c.tensor_or_empty("x"), linear_named(c, "gate"), linear_named(c, "up"),
                         linear_named(c, "down")));
}

void run_llama_block(Call& c) {
  LlamaBlockWeights w;
  w.attention = self_attention_weights(c);
  w.attention_norm = c.tensor_or_empty("attentionNorm");
  w.ffn_norm = c.tensor_or_empty("ffnNorm");
  w.gate = linear_named(c, "gate");
  w.up = linear_named(c, "up");
  w.down = linear_named(c, "down");
  w.eps = static_cast<float>(c.number_or("eps", 1e-6));
  LlamaBlockResult r = llama_block(c.tensor_or_empty("x"), w, attention_options(c));
  c.put("output", std::move(r.output));
  c.put("attentionNorm", std::move(r.trace.attention_norm));
  put_attention(c, "attention.", std::move(r.trace.attention));
  c.put("attentionResidual", std::move(r.trace.attention_residual));
  c.put("ffnNorm", std::move(r.trace.ffn_norm));
  c.put("ffnOutput", std::move(r.trace.ffn_output));
}

struct Runner {
  const char* name;
  void (*run)(Call&);
};

// A plain array, not a map: a static container would stay allocated after
// the first call, and tests check that calls leave the heap as they found it.
constexpr Runner kRunners[] = {
    {"attention", run_attention},
    {"self_attention", run_self_attention},
    {"positional_encoding", run_positional_encoding},
    {"linear", run_linear},
    {"layer_norm", run_layer_norm},
    {"feed_forward", run_feed_forward},
    {"residual_add", run_residual_add},
    {"transformer_block", run_transformer_block},
    {"rms_norm", run_rms_norm},
    {"swiglu", run_swiglu},
    {"llama_block", run_llama_block},
    {"gpt2_create", run_gpt2_create},
    {"gpt2_weight", run_gpt2_weight},
    {"gpt2_finish", run_gpt2_finish},
    {"gpt2_forward", run_gpt2_forward},
    {"gpt2_cache", run_gpt2_cache},
    {"gpt2_step", run_gpt2_step},
    {"gpt2_extend", run_gpt2_extend},
    {"gpt2_free", run_gpt2_free},
    {"attention_backward", run_attention_backward},
    {"gpt2_init", run_gpt2_init},
    {"gpt2_trainer", run_gpt2_trainer},
    {"gpt2_train_step", run_gpt2_train_step},
    {"gpt2_gradient", run_gpt2_gradient},
};

}  // namespace

// ---- inputs -----------------------------------------------------------------------------

double Call::allocate(std::map<std::string, Buffer>& into, const std::string& name, Shape shape,
                      std::size_t element_bytes) {
  std::size_t n = 1;
  for (std::size_t d : shape) {
    if (d > SIZE_MAX / element_bytes / n) throw std::bad_alloc();
    n *= d;
  }
  Buffer buffer;
  buffer.shape = std::move(shape);
  buffer.size = n;
  // Uninitialised: the TS layer writes every element before run().
  buffer.data = {std::malloc(n * element_bytes > 0 ? n * element_bytes : 1), &std::free};
  if (!buffer.data) throw std::bad_alloc();
  const double address = static_cast<double>(reinterpret_cast<std::uintptr_t>(buffer.data.get()));
  into.erase(name);
  into.emplace(name, std::move(buffer));
  return address;
}

double Call::tensor(const std::string& name, double rank, double d0, double d1, double d2,
                    double d3) {
  double address = 0;
  error_ = guarded([&] {
    address = allocate(floats_, name, checked_shape(name, rank, {d0, d1, d2, d3}), sizeof(float));
  });
  return address;
}

double Call::bytes(const std::string& name, double rank, double d0, double d1, double d2,
                   double d3) {
  double address = 0;
  error_ = guarded([&] {
    address = allocate(bytes_, name, checked_shape(name, rank, {d0, d1, d2, d3}), 1);
  });
  return address;
}

double Call::counts(const std::string& name, double n) {
  double address = 0;
  error_ = guarded([&] {
    address = allocate(counts_, name, Shape{checked_size(n, 0, name + ": count")}, sizeof(double));
  });
  return address;
}

void Call::number(const std::string& name, double value) { numbers_[name] = value; }
void Call::text(const std::string& name, const std::string& value) { texts_[name] = value; }

// ---- run and outputs ----------------------------------------------------------------------

std::string Call::run(const std::string& function) {
  outputs_.clear();
  kept_tensors_.clear();
  kept_flags_.clear();
  error_ = guarded([&] {
    const Runner* runner = nullptr;
    for (const Runner& r : kRunners) {
      if (function == r.name) runner = &r;
    }
    if (!runner) throw Error("unknown engine function " + function);
    runner->run(*this);
    table_.assign(outputs_.size() * kOutputRecord, 0.0);
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const Output& o = outputs_[i];
      double* record = table_.data() + i * kOutputRecord;
      record[0] = static_cast<double>(o.type);
      record[1] = static_cast<double>(reinterpret_cast<std::uintptr_t>(o.data));
      record[2] = static_cast<double>(o.size);
      record[3] = o.number;
      record[4] = static_cast<double>(o.shape.size());
      for (std::size_t d = 0; d < o.shape.size() && d < kMaxRank; ++d) {
        record[5 + d] = static_cast<double>(o.shape[d]);
      }
    }
  });
  if (!error_.empty()) outputs_.clear();
  return error_;
}

std::string Call::output_names() const {
  std::string names;
  for (const Output& o : outputs_) names += o.name + "\n";
  return names;
}

double Call::output_table() const {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(table_.data()));
}

void Call::put(const std::string& name, Tensor&& tensor) {
  if (tensor.rank() > kMaxRank) throw Error(name + ": output rank above 4");
  kept_tensors_.push_back(std::move(tensor));
  const Tensor& t = kept_tensors_.back();
  outputs_.push_back({name, OutputType::kFloat32, t.data.data(), t.size(), t.shape, 0.0});
}

void Call::put(const std::string& name, std::vector<std::uint8_t>&& flags) {
  kept_flags_.push_back(std::move(flags));
  const auto& f = kept_flags_.back();
  outputs_.push_back({name, OutputType::kUint8, f.data(), f.size(), Shape{f.size()}, 0.0});
}

void Call::put(const std::string& name, double number) {
  outputs_.push_back({name, OutputType::kNumber, nullptr, 0, Shape{}, number});
}

// ---- readers -------------------------------------------------------------------------------

const Call::Buffer* Call::find(const std::map<std::string, Buffer>& in,
                               const std::string& name) const {
  const auto it = in.find(name);
  return it == in.end() ? nullptr : &it->second;
}

TensorView Call::view(const std::string& name) const {
  const Buffer* b = find(floats_, name);
  if (!b) throw Error(name + " is required");
  return TensorView(b->shape, static_cast<const float*>(b->data.get()), b->size);
}

Tensor Call::tensor_or_empty(const std::string& name) const {
  const Buffer* b = find(floats_, name);
  if (!b) return {};
  const float* data = static_cast<const float*>(b->data.get());
  return Tensor(b->shape, std::vector<float>(data, data + b->size));
}

BoolTensor Call::bool_tensor_or_empty(const std::string& name) const {
  BoolTensor t;
  const Buffer* b = find(bytes_, name);
  if (!b) return t;
  const auto* data = static_cast<const std::uint8_t*>(b->data.get());
  t.shape = b->shape;
  t.data.assign(data, data + b->size);
  return t;
}

std::vector<std::size_t> Call::counts_or_empty(const std::string& name) const {
  const Buffer* b = find(counts_, name);
  if (!b) return {};
  const auto* data = static_cast<const double*>(b->data.get());
  std::vector<std::size_t> out(b->size);
  for (std::size_t i = 0; i < b->size; ++i) {
    out[i] = checked_size(data[i], 0, name + "[" + std::to_string(i) + "]");
  }
  return out;
}

double Call::number_or(const std::string& name, double fallback) const {
  const auto it = numbers_.find(name);
  return it == numbers_.end() ? fallback : it->second;
}

std::size_t Call::size_number(const std::string& name) const {
  const auto it = numbers_.find(name);
  if (it == numbers_.end()) throw Error(name + " is required");
  return checked_size(it->second, 0, name);
}

std::string Call::text_or(const std::string& name, const std::string& fallback) const {
  const auto it = texts_.find(name);
  return it == texts_.end() ? fallback : it->second;
}

}  // namespace attnscope::bindings
