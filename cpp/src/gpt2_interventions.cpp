// GPT-2's interventions (gpt2.hpp): their checks against the config and the
// sequence, and their translation into what the pass does per layer and head.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "allocate.hpp"
#include "gpt2_internal.hpp"

namespace attnscope::detail {

namespace {

std::string at(const char* list, std::size_t i) {
  return std::string("interventions.") + list + "[" + std::to_string(i) + "]";
}

void check_below(const std::string& fn, const std::string& what, std::size_t value,
                 std::size_t limit, const char* limit_name) {
  if (value >= limit) {
    throw Error(fn + ": " + what + " is " + std::to_string(value) + ", expected below " +
                limit_name + "=" + std::to_string(limit));
  }
}

}  // namespace

void check_gpt2_interventions(const Gpt2Config& c, std::size_t T, const Gpt2Interventions& iv,
                              const char* fn) {
  // Targets seen so far, with the entry that named them first.
  std::set<std::pair<std::size_t, std::size_t>> targeted;
  const auto check_target = [&](const std::string& entry, std::size_t layer, std::size_t head) {
    check_below(fn, entry + ".layer", layer, c.layers, "layers");
    check_below(fn, entry + ".head", head, c.heads, "heads");
    if (!targeted.insert({layer, head}).second) {
      throw Error(std::string(fn) + ": " + entry + " targets layer " + std::to_string(layer) +
                  " head " + std::to_string(head) +
                  " again; a head takes at most one ablate or replace entry");
    }
  };
  for (std::size_t i = 0; i < iv.ablate.size(); ++i) {
    check_target(at("ablate", i), iv.ablate[i].layer, iv.ablate[i].head);
  }
  for (std::size_t i = 0; i < iv.replace.size(); ++i) {
    const Gpt2PatternReplacement& r = iv.replace[i];
    check_target(at("replace", i), r.layer, r.head);
    check_below(fn, at("replace", i) + ".from.layer", r.from_layer, c.layers, "layers");
    check_below(fn, at("replace", i) + ".from.head", r.from_head, c.heads, "heads");
  }
  std::set<std::size_t> masked;
  for (std::size_t i = 0; i < iv.mask_tokens.size(); ++i) {
    check_below(fn, at("maskTokens", i), iv.mask_tokens[i], T, "the sequence's length");
    if (!masked.insert(iv.mask_tokens[i]).second) {
      throw Error(std::string(fn) + ": " + at("maskTokens", i) + " repeats position " +
                  std::to_string(iv.mask_tokens[i]));
    }
  }
}

Gpt2PassEdits gpt2_pass_edits(const Gpt2Config& c, std::size_t T, const Gpt2Interventions& iv,
                              const Gpt2Trace* clean) {
  Gpt2PassEdits edits;
  const std::size_t H = c.heads;
  if (!iv.ablate.empty() || !iv.replace.empty()) edits.heads.resize(c.layers * H);
  for (const Gpt2HeadAblation& a : iv.ablate) {
    edits.heads[a.layer * H + a.head].kind = a.mode == Gpt2HeadAblation::Mode::kZero
                                                 ? Gpt2HeadEdit::Kind::kZero
                                                 : Gpt2HeadEdit::Kind::kMean;
  }
  for (const Gpt2PatternReplacement& r : iv.replace) {
    Gpt2HeadEdit& e = edits.heads[r.layer * H + r.head];
    e.kind = Gpt2HeadEdit::Kind::kPattern;
    e.pattern = clean->attentions[r.from_layer].data.data() + r.from_head * T * T;
  }
  if (iv.mask_tokens.empty()) return edits;
  std::vector<bool> masked(T, false);
  for (std::size_t p : iv.mask_tokens) masked[p] = true;
  edits.allowed.shape = {T, T};
  edits.allowed.data.assign(T * T, 1);
  for (std::size_t i = 0; i < T; ++i) {
    bool any_visible = false;
    for (std::size_t j = 0; j <= i; ++j) {
      edits.allowed.data[i * T + j] = masked[j] ? 0 : 1;
      any_visible = any_visible || !masked[j];
    }
    // Rather than a fully masked row (zero weights, zero output), a query
    // with nothing left to see keeps itself.
    if (!any_visible) edits.allowed.data[i * T + i] = 1;
  }
  return edits;
}

}  // namespace attnscope::detail
