#include "save_safetensors.hpp"

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace attnscope::tools {

namespace {

// Names and metadata here are plain ASCII without quotes or backslashes,
// but escaping keeps the header valid JSON whatever a caller passes.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void save_safetensors(const Gpt2Model& model, const std::map<std::string, std::string>& metadata,
                      const std::string& path) {
  std::string header = "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [key, value] : metadata) {
    header += (first ? "" : ",") + json_string(key) + ":" + json_string(value);
    first = false;
  }
  header += "}";
  std::size_t offset = 0;
  for (const auto& name : model.weight_names()) {
    std::string shape;
    std::size_t size = 1;
    for (const std::size_t d : model.weight_shape(name)) {
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
      size *= d;
    }
    const std::size_t bytes = size * sizeof(float);
    header += "," + json_string(name) + ":{\"dtype\":\"F32\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  // The data starts 8-aligned, as the format recommends.
  while (header.size() % 8 != 0) header += ' ';

  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing");
  const std::uint64_t header_size = header.size();
  unsigned char size_bytes[8];
  for (int i = 0; i < 8; ++i) size_bytes[i] = static_cast<unsigned char>(header_size >> (8 * i));
  out.write(reinterpret_cast<const char*>(size_bytes), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  // The format is little-endian, as are the machines this builds for.
  std::vector<float> values;
  for (const auto& name : model.weight_names()) {
    std::size_t size = 1;
    for (const std::size_t d : model.weight_shape(name)) size *= d;
    values.resize(size);
    model.copy_weight(name, values.data());  // in row order, as the file holds it
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(size * sizeof(float)));
  }
  if (!out) throw std::runtime_error("writing " + path + " failed");
}

}  // namespace attnscope::tools
