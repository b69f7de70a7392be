// Attention on several threads (set_threads), the fast path and the traced
// one, gives the one-thread result bit for bit, for every mask and variant,
// with 1, 2, 3 and the hardware's thread count, and under many concurrent
// calls; so do self-attention's projections and linear().
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"
#include "test_one_thread_after.hpp"

using namespace attnscope;
using attnscope::testing::OneThreadAfter;
using attnscope::testing::random_tensor;
using attnscope::testing::same_bits;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  std::string name;
  Tensor q, k, v;
  AttentionOptions options;
};

// The dimensions of one case: B, H, Hkv, Tq, Tk, d_k, d_v.
struct Dims {
  std::size_t B, H, Hkv, Tq, Tk, d_k, d_v;
};

Case make_case(const std::string& name, const Dims& d, std::mt19937& rng) {
  Case c;
  c.name = name + " B" + std::to_string(d.B) + " H" + std::to_string(d.H) + "/" +
           std::to_string(d.Hkv) + " Tq" + std::to_string(d.Tq) + " Tk" + std::to_string(d.Tk) +
           " d" + std::to_string(d.d_k);
  c.q = random_tensor(rng, {d.B, d.H, d.Tq, d.d_k});
  c.k = random_tensor(rng, {d.B, d.Hkv, d.Tk, d.d_k});
  c.v = random_tensor(rng, {d.B, d.Hkv, d.Tk, d.d_v});
  AttentionOptions& o = c.options;
  o.trace = false;
  if (name == "causal") o.mask.causal = true;
  if (name == "padding") o.mask.lengths.assign(d.B, (d.Tk * 2 + 2) / 3);
  if (name == "additive") {
    o.mask.additive = random_tensor(rng, {d.B, d.H, d.Tq, d.Tk}, -2.0f, 2.0f);
    for (std::size_t i = 0; i < o.mask.additive.data.size(); i += 7)
      o.mask.additive.data[i] = -kInf;
  }
  if (name == "boolean") {
    o.mask.allowed.shape = {d.Tq, d.Tk};
    std::bernoulli_distribution keep(0.7);
    for (std::size_t i = 0; i < d.Tq * d.Tk; ++i) o.mask.allowed.data.push_back(keep(rng));
  }
  if (name == "rope") o.rope.enabled = true;
  if (name == "alibi") o.bias.alibi = true;
  if (name == "bias") o.bias.values = random_tensor(rng, {d.H, d.Tq, d.Tk}, -1.0f, 1.0f);
  if (name == "window" || name == "window+sinks") o.mask.window = std::int64_t(d.Tk / 5 + 1);
  if (name == "window+sinks") o.mask.sinks = 3;
  if (name == "all") {
    o.mask.causal = true;
    o.mask.lengths.assign(d.B, d.Tk - 1);
    o.mask.window = std::int64_t(d.Tk / 3 + 1);
    o.mask.sinks = 2;
    o.rope.enabled = true;
    o.bias.alibi = true;
  }
  if (name == "large rows") {
    // Queries far larger in the last rows: the in-range exp pass is then off
    // for the whole head, though the first rows alone would allow it.
    for (std::size_t i = c.q.data.size() * 3 / 4; i < c.q.data.size(); ++i) c.q.data[i] *= 40.0f;
  }
  return c;
}

std::vector<Case> all_cases() {
  std::mt19937 rng(2025);
  const char* const kNames[] = {"none",    "causal",       "padding", "additive",
                                "boolean", "rope",         "alibi",   "bias",
                                "window",  "window+sinks", "all",     "large rows"};
  // Lengths below, at and above the 16-row tiles and 128-row blocks; one
  // head at T = 256; GQA and MQA; a KV cache (Tq < Tk) and a decode step.
  const Dims kDims[] = {{1, 1, 1, 256, 256, 64, 64}, {2, 4, 2, 130, 130, 16, 12},
                        {1, 4, 1, 37, 300, 8, 8},    {2, 2, 2, 17, 17, 8, 6},
                        {1, 8, 2, 1, 70, 16, 16},    {3, 2, 1, 300, 300, 32, 32}};
  std::vector<Case> cases;
  for (const char* name : kNames) {
    for (const Dims& d : kDims) cases.push_back(make_case(name, d, rng));
  }
  return cases;
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.shape == b.shape && same_bits(a.data, b.data);
}

// Every tensor of two traces (attention's or self-attention's) against each other.
template <class Trace>
void check_same_trace(const Trace& threaded, const Trace& single) {
  CHECK(same_tensor(threaded.scores, single.scores));
  CHECK(same_tensor(threaded.scaled, single.scaled));
  CHECK(same_tensor(threaded.masked, single.masked));
  CHECK(same_tensor(threaded.weights, single.weights));
  CHECK(same_tensor(threaded.bias, single.bias));
  CHECK(same_tensor(threaded.q_rotated, single.q_rotated));
  CHECK(same_tensor(threaded.k_rotated, single.k_rotated));
}

}  // namespace

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)

TEST_CASE("a WebAssembly build without threads accepts only one", "[threads]") {
  CHECK(hardware_threads() == 1);
  CHECK_THROWS_WITH(set_threads(2), Catch::Contains("set_threads: threads is 2, expected 1 to 1"));
  CHECK(thread_count() == 1);
  set_threads(1);
}

#else

TEST_CASE("set_threads: bad counts are refused and the count stays", "[threads]") {
  OneThreadAfter restore;
  set_threads(2);
  CHECK_THROWS_AS(set_threads(0), Error);
  CHECK_THROWS_WITH(set_threads(0),
                    Catch::Contains("set_threads: threads is 0, expected 1 to 256"));
  CHECK_THROWS_WITH(set_threads(kMaxThreads + 1), Catch::Contains("threads is 257"));
  CHECK(thread_count() == 2);
  CHECK(hardware_threads() >= 1);
}

TEST_CASE("attention on 1, 2, 3 and every hardware thread gives one thread's bits", "[threads]") {
  OneThreadAfter restore;
  const std::vector<Case> cases = all_cases();
  set_threads(1);
  std::vector<AttentionResult> single;
  for (const Case& c : cases) single.push_back(attention(c.q, c.k, c.v, c.options));
  const std::size_t counts[] = {1, 2, 3, std::max<std::size_t>(2, hardware_threads())};
  for (std::size_t threads : counts) {
    set_threads(threads);
    REQUIRE(thread_count() == threads);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      INFO(c.name << ", " << threads << " threads");
      const AttentionResult r = attention(c.q, c.k, c.v, c.options);
      CHECK(same_bits(r.output.data, single[i].output.data));
      CHECK(r.fully_masked == single[i].fully_masked);
      CHECK(r.fully_masked_count == single[i].fully_masked_count);
    }
  }
}

TEST_CASE("many concurrent calls, while the thread count changes, give one thread's bits",
          "[threads]") {
  OneThreadAfter restore;
  std::vector<Case> cases = all_cases();
  set_threads(1);
  std::vector<std::vector<float> > single;
  for (const Case& c : cases) single.push_back(attention(c.q, c.k, c.v, c.options).output.data);
  set_threads(3);
  constexpr std::size_t kCallers = 6, kRounds = 3;
  std::vector<std::size_t> mismatches(kCallers, 0);
  std::vector<std::thread> callers;
  for (std::size_t t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      for (std::size_t round = 0; round < kRounds; ++round) {
        for (std::size_t i = t; i < cases.size(); i += 2) {
          const Case& c = cases[i];
          if (!same_bits(attention(c.q, c.k, c.v, c.options).output.data, single[i])) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  // set_threads waits for the call on the pool, then restarts it.
  for (std::size_t n : {2, 4, 1, 3}) set_threads(n);
  for (std::thread& caller : callers) caller.join();
  for (std::size_t t = 0; t < kCallers; ++t) {
    INFO("caller " << t);
    CHECK(mismatches[t] == 0);
  }
}

TEST_CASE("a call right after set_threads, while the new threads start, gives one thread's bits",
          "[threads]") {
  OneThreadAfter restore;
  std::mt19937 rng(11);
  const Case c = make_case("causal", {1, 4, 4, 150, 150, 16, 16}, rng);
  set_threads(1);
  const std::vector<float> single = attention(c.q, c.k, c.v, c.options).output.data;
  // Each restart begins a pool whose threads may still be starting when the
  // first call hands out its tasks; many calls came before it.
  std::size_t mismatches = 0;
  for (std::size_t round = 0; round < 40; ++round) {
    set_threads(2 + round % 2);
    if (!same_bits(attention(c.q, c.k, c.v, c.options).output.data, single)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("the traced path on threads gives one thread's bits, every intermediate", "[threads]") {
  OneThreadAfter restore;
  std::vector<Case> cases = all_cases();
  for (Case& c : cases) c.options.trace = true;
  set_threads(1);
  std::vector<AttentionResult> single;
  for (const Case& c : cases) single.push_back(attention(c.q, c.k, c.v, c.options));
  for (std::size_t threads : {std::size_t{2}, std::size_t{3}, hardware_threads()}) {
    set_threads(std::max<std::size_t>(2, threads));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      INFO(c.name << ", " << thread_count() << " threads");
      const AttentionResult r = attention(c.q, c.k, c.v, c.options);
      CHECK(same_tensor(r.output, single[i].output));
      CHECK(r.fully_masked == single[i].fully_masked);
      CHECK(r.fully_masked_count == single[i].fully_masked_count);
      REQUIRE(r.trace.has_value());
      check_same_trace(*r.trace, *single[i].trace);
    }
  }
}

TEST_CASE("self-attention's projections, traced or not, on threads give one thread's bits",
          "[threads]") {
  OneThreadAfter restore;
  std::mt19937 rng(19);
  struct Shape3 {
    std::size_t B, T, C, H, Hkv, d;
  };
  // Rows split into blocks below, at and above 16 and 64; GQA; one sequence.
  for (const Shape3 s : {Shape3{2, 150, 24, 4, 2, 6}, Shape3{1, 64, 40, 4, 4, 10},
                         Shape3{3, 37, 33, 3, 1, 8}, Shape3{1, 200, 64, 2, 2, 32}}) {
    const Tensor x = random_tensor(rng, {s.B, s.T, s.C});
    SelfAttentionWeights w;
    w.heads = s.H;
    w.kv_heads = s.Hkv;
    w.wq = random_tensor(rng, {s.C, s.H * s.d});
    w.wk = random_tensor(rng, {s.C, s.Hkv * s.d});
    w.wv = random_tensor(rng, {s.C, s.Hkv * s.d});
    w.bq = random_tensor(rng, {s.H * s.d});
    w.bk = random_tensor(rng, {s.Hkv * s.d});
    w.bv = random_tensor(rng, {s.Hkv * s.d});
    w.wo = random_tensor(rng, {s.H * s.d, s.C + 5});
    w.bo = random_tensor(rng, {s.C + 5});
    for (const bool trace : {false, true}) {
      INFO("B" << s.B << " T" << s.T << " C" << s.C << " H" << s.H << "/" << s.Hkv
               << (trace ? ", traced" : ", fast path"));
      AttentionOptions o;
      o.trace = trace;
      o.mask.causal = true;
      o.rope.enabled = true;
      set_threads(1);
      const SelfAttentionResult single = self_attention(x, w, o);
      set_threads(std::max<std::size_t>(2, hardware_threads()));
      const SelfAttentionResult threaded = self_attention(x, w, o);
      CHECK(same_tensor(threaded.output, single.output));
      CHECK(threaded.fully_masked == single.fully_masked);
      REQUIRE(threaded.trace.has_value() == trace);
      if (!trace) continue;
      const SelfAttentionTrace &a = *threaded.trace, &b = *single.trace;
      CHECK(same_tensor(a.q, b.q));
      CHECK(same_tensor(a.k, b.k));
      CHECK(same_tensor(a.v, b.v));
      CHECK(same_tensor(a.head_outputs, b.head_outputs));
      CHECK(same_tensor(a.concat, b.concat));
      check_same_trace(a, b);
    }
  }
}

TEST_CASE("linear on threads gives one thread's bits, wide or narrow, with or without bias",
          "[threads]") {
  OneThreadAfter restore;
  std::mt19937 rng(23);
  for (const std::size_t out : {std::size_t{40}, std::size_t{200}, std::size_t{333}}) {
    const Tensor x = random_tensor(rng, {3, 70, 48});
    Linear layer{random_tensor(rng, {48, out}), random_tensor(rng, {out})};
    for (const bool bias : {true, false}) {
      INFO("out " << out << (bias ? ", bias" : ", no bias"));
      Linear l = layer;
      if (!bias) l.bias = Tensor();
      set_threads(1);
      const Tensor single = linear(x, l);
      set_threads(std::max<std::size_t>(2, hardware_threads()));
      CHECK(same_tensor(linear(x, l), single));
    }
  }
}

#endif
