// A GPT-2 decoder (Radford et al. 2019, as in Hugging Face's GPT2LMHeadModel)
// holding its own float32 weights: a forward pass that can keep every
// layer's attention weights and the residual stream, and a key/value cache
// for generating one token after another.
//
// Weights are named as in Hugging Face's files without the "transformer."
// prefix, with their shapes for C = d_model, V = vocab_size, Tmax =
// context_length (Conv1D layout: weights are (in, out), applied as x·W):
//   wte.weight (V, C)   wpe.weight (Tmax, C)   ln_f.weight (C)  ln_f.bias (C)
//   h.{i}.ln_1.{weight,bias} (C)      h.{i}.attn.c_attn.weight (C, 3C), .bias (3C)
//   h.{i}.attn.c_proj.weight (C, C), .bias (C)   h.{i}.ln_2.{weight,bias} (C)
//   h.{i}.mlp.c_fc.weight (C, 4C), .bias (4C)   h.{i}.mlp.c_proj.weight (4C, C), .bias (C)
// Each block is pre-norm: x += Attn(LN1(x)), then x += MLP(LN2(x)), with
// causal attention, GELU in its tanh form and LayerNorm eps 1e-5. The logits
// are LN_f(x)·wteᵀ (the embedding is tied to the output layer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {

namespace detail {
struct Gpt2Weights;
}

struct Gpt2Config {
  std::size_t layers = 0;
  std::size_t heads = 0;
  std::size_t d_model = 0;  // C, a multiple of heads
  std::size_t vocab_size = 0;
  std::size_t context_length = 0;  // Tmax: positions in wpe
};

/// What a traced forward keeps besides the logits.
struct Gpt2Trace {
  /// One per layer: the softmax weights (H, T, T), rows = queries.
  std::vector<Tensor> attentions;
  /// layers + 1 entries of (T, C): the residual stream before each block,
  /// then the output of the final LayerNorm.
  std::vector<Tensor> hidden;
};

/// Ablation of one head: its output (the head's weights·V, before c_proj)
/// replaced by zeros, or by its mean over the positions of this sequence
/// (every position gets the same vector, the average over all T, later
/// positions included).
struct Gpt2HeadAblation {
  enum class Mode { kZero, kMean };
  std::size_t layer = 0, head = 0;
  Mode mode = Mode::kZero;
};

/// Head (layer, head) uses the attention weights that head (from_layer,
/// from_head) has in the clean run (no interventions) instead of its own;
/// its values stay its own.
struct Gpt2PatternReplacement {
  std::size_t layer = 0, head = 0, from_layer = 0, from_head = 0;
};

/// Changes to one forward pass. A head is the target of at most one
/// ablation or replacement.
struct Gpt2Interventions {
  std::vector<Gpt2HeadAblation> ablate;
  /// Positions no query may attend to, in every layer and head. A query
  /// whose every visible key is masked attends to itself alone (instead of
  /// a fully masked row).
  std::vector<std::size_t> mask_tokens;
  std::vector<Gpt2PatternReplacement> replace;
  bool empty() const { return ablate.empty() && mask_tokens.empty() && replace.empty(); }
};

/// Which rows of logits a forward computes. The LM head (V × C) is a large
/// share of a forward's work; a next-token view reads only the last row.
enum class Gpt2Logits {
  kAll,   // (T, V): every position's
  kLast,  // (1, V): the last position's only
};

struct Gpt2ForwardOptions {
  /// Keep attentions and hidden; without it attention runs the fast path.
  bool trace = true;
  /// kLast: the logits (and the diff's) of the last position only, equal bit
  /// for bit to the last row that kAll gives.
  Gpt2Logits logits = Gpt2Logits::kAll;
  Gpt2Interventions interventions;
  /// Attention rollout and value-norm weighted attention (needs trace).
  bool attribution = false;
  /// The logit lens's top tokens per layer and position; 0 = none (needs trace).
  std::size_t logit_lens_top_k = 0;
  /// false: the last block's output projection and MLP run on the last
  /// position alone. Only the final LayerNorm's rows read the others, and
  /// with logits kLast and no logit lens only the trace's last hidden entry
  /// holds them: it is then (1, C), the last position's row. Everything else
  /// is the same bit for bit. Needs logits kLast and no logit lens.
  bool last_block_every_row = true;
};

/// The run with interventions minus the clean run.
struct Gpt2Diff {
  Tensor logits;                   // (T, V), or (1, V) with Gpt2Logits::kLast
  std::vector<Tensor> attentions;  // with trace: one per layer (H, T, T)
};

struct Gpt2Attribution {
  /// Abnar & Zuidema's rollout after each layer (T, T): per layer the
  /// head-averaged weights plus the identity, rows renormalised to sum 1,
  /// multiplied through the layers (R_0 = A_0, R_l = A_l · R_{l-1}).
  std::vector<Tensor> rollout;
  /// Kobayashi et al.'s norms per layer (H, T, T): α_hij · ‖v_hj · W_O,h‖,
  /// W_O,h being head h's rows of attn.c_proj.weight (its share of the
  /// output projection, bias left out).
  std::vector<Tensor> value_norms;
};

/// The residual stream after each block decoded through ln_f and wteᵀ:
/// per layer and position the top-k tokens by probability (ties: lower id
/// first). The last layer's entry is the model's own prediction.
struct Gpt2LogitLens {
  Tensor ids;            // (layers, T, k), token ids held as floats
  Tensor probabilities;  // (layers, T, k), softmax of the decoded logits
};

struct Gpt2Output {
  Tensor logits;                   // (T, V), or (1, V) with Gpt2Logits::kLast
  std::optional<Gpt2Trace> trace;  // present iff the forward was traced
  std::optional<Gpt2Diff> diff;    // present iff there were interventions
  std::optional<Gpt2Attribution> attribution;
  std::optional<Gpt2LogitLens> logit_lens;
};

/// Keys and values of the positions seen so far, per layer (H, capacity,
/// d_k) each, so that a step computes only its new tokens. Create it from a
/// model's config; step() appends to it.
class Gpt2Cache {
 public:
  /// capacity: the most positions it will hold, 1..context_length.
  Gpt2Cache(const Gpt2Config& config, std::size_t capacity);

  std::size_t length() const { return length_; }
  std::size_t capacity() const { return capacity_; }
  /// Forgets every position (keeps the memory).
  void reset() { length_ = 0; }
  /// Forgets the positions from `length` on (keeps the memory); a length
  /// beyond length() is an Error.
  void truncate(std::size_t length);

 private:
  friend class Gpt2Model;
  std::size_t heads_ = 0, head_dim_ = 0, capacity_ = 0, length_ = 0;
  std::vector<Tensor> keys_, values_;  // per layer (H, capacity, d_k)
};

class Gpt2Model;

/// An 8-bit copy of a model's token embedding (the matrix of its LM head)
/// with each row's scale, rounding error, and norm, for greedy decoding:
/// Gpt2Model::step_greedy() reads it instead of the float32 embedding, a
/// quarter of the bytes, and then computes in float32 only the logits that
/// the copy's error bound cannot rule out, so the token is the one step()
/// would give. It is a copy of the weights as they are: once they change,
/// make it again.
class Gpt2GreedyHead {
 public:
  /// Throws ResourceError when there is no memory for it (about a quarter of
  /// the embedding's size).
  explicit Gpt2GreedyHead(const Gpt2Model& model);

 private:
  friend class Gpt2Model;
  /// The argmax of hidden · wteᵀ (the lowest id among equal logits), or
  /// nothing where the bound cannot decide it (a logit that is not finite).
  std::optional<std::int64_t> argmax(const float* hidden, const float* wte) const;

  /// What the bound needs of one row w of the embedding, whose copy is q·scale.
  struct RowTerms {
    double scale;      // max |w_i| / 127
    double error;      // ≥ max |w_i − q_i·scale|
    double magnitude;  // Σ |q_i·scale|
    double norm;       // ‖w‖₂
  };

  const Gpt2Model* model_;
  std::uint64_t weights_version_;
  std::size_t vocab_, channels_, stride_;  // stride_: channels padded to kernels' 16
  std::int32_t hidden_levels_;             // |q| of the hidden row's copy stays ≤ this
  std::vector<std::int8_t> rows_;          // vocab_ × stride_, zeros past channels_
  std::vector<RowTerms> terms_;            // per row
};

/// What step_greedy() gives: the token, or when the bound could not decide
/// it, every logit for the caller to look at.
struct Gpt2GreedyStep {
  /// The argmax of the step's logits (the lowest id among equal ones), or -1.
  std::int64_t token = -1;
  /// With token -1: the logits (V), as step() gives them.
  Tensor logits;
};

class Gpt2Model {
 public:
  /// Allocates every weight (zeros). Throws Error naming the field for a
  /// zero size or d_model not divisible by heads, ResourceError when the
  /// weights do not fit in memory.
  explicit Gpt2Model(const Gpt2Config& config);

  const Gpt2Config& config() const { return config_; }

  /// The weight names, in a fixed order (wte, wpe, the blocks, ln_f).
  std::vector<std::string> weight_names() const;
  /// Shape of weight `name`; throws Error for a name that is not one.
  const Shape& weight_shape(const std::string& name) const;
  /// The weight's own storage, product(shape) floats in row order, for a
  /// loader to write into directly; marks it as filled. Throws Error naming
  /// an unknown tensor.
  float* weight_data(const std::string& name);
  /// The weight in row order, read-only (valid as long as the model). A
  /// block's matrix that finish() stored in the kernel's panels is put back
  /// in row order in place (so not while a forward runs); the passes read it
  /// either way, and finish() stores it in panels again. Throws
  /// ResourceError when there is no memory to reorder it.
  TensorView weight(const std::string& name);
  /// Copies the weight, in row order, into `out` (product(shape) floats)
  /// without changing how it is stored.
  void copy_weight(const std::string& name, float* out) const;
  /// Whether finish() stored the weight in the products' panels.
  bool in_panels(const std::string& name) const;

  /// Checks that every weight was handed out by weight_data() and holds
  /// only finite values; throws Error naming the first that does not.
  /// forward() and step() need it to have succeeded. Then stores the
  /// blocks' matrices in the panels the products read (where there is
  /// memory to reorder them; in row order otherwise).
  void finish();
  bool finished() const { return finished_; }

  /// The whole sequence at positions 0..T-1: logits (T, V), and with
  /// `trace` the attention weights and residual stream. Without trace the
  /// attention runs the fast path and no T×T tensor is made. Throws Error
  /// for no tokens, T > context_length or a token outside [0, V).
  Gpt2Output forward(const std::vector<std::int64_t>& tokens, bool trace) const;

  /// forward() with interventions (then also the diff against the clean
  /// run, which is run first), attribution and the logit lens. Throws Error
  /// naming the argument for a layer, head or position out of range, a head
  /// targeted twice, a duplicated masked position, or attribution / logit
  /// lens without trace (or top k outside 1..vocab_size).
  Gpt2Output forward(const std::vector<std::int64_t>& tokens,
                     const Gpt2ForwardOptions& options) const;

  /// Runs `tokens` at positions cache.length() .. and appends their keys
  /// and values to the cache; returns the logits (V) of the last of them.
  /// Throws Error (before changing the cache) when they do not fit in it,
  /// for a cache made for another config, or a bad token.
  Tensor step(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens) const;

  /// step() for greedy decoding: the most likely next token, found through
  /// `head` (see Gpt2GreedyHead), equal to the argmax of step()'s logits.
  /// Throws Error, as step() does, and for a head made from another model
  /// or from this one's weights before they changed.
  Gpt2GreedyStep step_greedy(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens,
                             const Gpt2GreedyHead& head) const;

  /// step() keeping every new row, for a page whose text is edited: the
  /// prefix that did not change stays in the cache (truncate() it to where
  /// the edit begins) and only the tokens after it run. Returns, for the n
  /// new tokens, logits (n, V) (with `logits` kLast: (1, V), the last
  /// token's) and with `trace` each layer's attention rows (H, n, length + n)
  /// and residual rows (n, C) — the rows a forward() of the whole sequence
  /// gives for those positions. With `last_block_every_row` false (logits
  /// kLast only), as Gpt2ForwardOptions says: the last hidden entry is then
  /// the last token's row (1, C). Same checks as step().
  Gpt2Output extend(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens, bool trace,
                    Gpt2Logits logits = Gpt2Logits::kAll, bool last_block_every_row = true) const;

 private:
  struct Slot {
    std::string name;
    Shape shape;
    std::size_t offset = 0, size = 0;  // in floats, within storage_
    bool filled = false;
    bool matrix = false;     // a block's matrix, which finish() stores in panels
    bool in_panels = false;  // stored so (kernels/panel_matrix.hpp), panel_width_ wide
  };
  /// Rewrites slot `s` in place, into panels or back in row order, through a
  /// copy; false (and `s` unchanged) when there is no memory for the copy.
  bool reorder(Slot& s, bool into_panels);
  /// Puts slot `s` in row order if it is in panels.
  void to_row_order(Slot& s, const char* fn);
  /// Stores every block matrix in panels, while there is memory to reorder them.
  void store_in_panels();
  /// finish() without store_in_panels(): the trainer's check after each step.
  void check_weights();
  friend class Gpt2Trainer;
  friend class Gpt2GreedyHead;
  std::size_t index_of(const std::string& name, const char* fn) const;
  /// Pointers to every weight, for the pass (gpt2_pass.cpp).
  detail::Gpt2Weights weights_view() const;
  void check_ready(const char* fn) const;
  Tensor pass_on_cache(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens, Gpt2Trace* trace,
                       bool last_block_every_row, const char* fn) const;

  Gpt2Config config_;
  std::vector<Slot> slots_;
  // Every weight in one allocation: a model of hundreds of MB then grows
  // wasm memory once instead of once per tensor.
  std::vector<float> storage_;
  bool finished_ = false;
  // Counts the hands-out of writable weights (weight_data), so that a copy
  // of them (Gpt2GreedyHead) can tell it is out of date.
  std::uint64_t weights_version_ = 0;
  std::size_t panel_width_ = 0;  // the products' panel width (the CPU's), from finish()
};

}  // namespace attnscope
