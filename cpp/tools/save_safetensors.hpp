// Writes a GPT-2 model's weights as a .safetensors file (F32, names as
// gpt2.hpp lists them), with string metadata such as n_head, which a
// reader needs to split C into heads.
#pragma once

#include <map>
#include <string>

#include "attnscope/gpt2.hpp"

namespace attnscope::tools {

/// Throws std::runtime_error naming the path when the file cannot be written.
void save_safetensors(const Gpt2Model& model, const std::map<std::string, std::string>& metadata,
                      const std::string& path);

}  // namespace attnscope::tools
