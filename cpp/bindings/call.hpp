// One call from the TypeScript layer into the engine, in three steps that
// never run JavaScript while C++ code is on the stack:
//   1. the TS layer asks for each input buffer by name (tensor, bytes, counts),
//      fills it itself from arrays it has normalised, and sets numbers and
//      texts by name;
//   2. run(function) computes and keeps the results in the call;
//   3. the TS layer reads the output table, copies every output out, and
//      deletes the call, which frees the inputs and the results at once.
// A JS exception in step 1 or 3 therefore leaks nothing: the TS layer deletes
// the call in `finally`. Every size arrives as a double and is checked here,
// so no JS number can wrap into a size_t.
//
// A new option is a new name: the TS layer sets it (web/lib/engine.ts, e.g.
// numbers: { ropeBase }, texts: { bias: 'alibi' }, tensors: { k } with its own
// shape for GQA), a reader in call.cpp reads it (number_or("ropeBase", 0)),
// and a new result is put under a dotted name ("trace.qRotated"), which the
// TS layer nests as result.trace.qRotated without further code.
// Plain C++ (no Emscripten): cpp/bindings/embind.cpp only registers it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"

namespace attnscope::bindings {

/// Type codes of the output table.
enum class OutputType { kFloat32 = 0, kUint8 = 1, kNumber = 2 };
/// Highest rank of any input or output.
constexpr std::size_t kMaxRank = 4;
/// Doubles per output in the table: type, address, size, number, rank, dims.
constexpr std::size_t kOutputRecord = 5 + kMaxRank;

class Call {
 public:
  /// Address of an uninitialised float buffer for input `name` of shape
  /// (d0, ..., d[rank-1]); 0 when the shape is invalid or memory runs out
  /// (error() says which).
  double tensor(const std::string& name, double rank, double d0, double d1, double d2, double d3);
  /// The same for a 0/1 byte tensor (a boolean mask).
  double bytes(const std::string& name, double rank, double d0, double d1, double d2, double d3);
  /// Address of `n` doubles for a list of counts (mask.lengths), each
  /// checked to be an integer in [0, 2^32) when it is read.
  double counts(const std::string& name, double n);
  void number(const std::string& name, double value);
  void text(const std::string& name, const std::string& value);

  /// Runs an engine function on the inputs; "" on success, else the error.
  std::string run(const std::string& function);
  /// Names of the outputs, one a line, in the order of the table.
  std::string output_names() const;
  /// Address of kOutputRecord doubles per output.
  double output_table() const;
  std::string error() const { return error_; }

  // ---- read by the runners (call.cpp) ----
  TensorView view(const std::string& name) const;
  Tensor tensor_or_empty(const std::string& name) const;
  BoolTensor bool_tensor_or_empty(const std::string& name) const;
  std::vector<std::size_t> counts_or_empty(const std::string& name) const;
  double number_or(const std::string& name, double fallback) const;
  std::size_t size_number(const std::string& name) const;
  std::string text_or(const std::string& name, const std::string& fallback) const;

  void put(const std::string& name, Tensor&& tensor);
  void put(const std::string& name, std::vector<std::uint8_t>&& flags);
  void put(const std::string& name, double number);

 private:
  struct Buffer {
    Shape shape;
    std::size_t size = 0;  // elements
    std::unique_ptr<void, void (*)(void*)> data{nullptr, nullptr};
  };
  struct Output {
    std::string name;
    OutputType type;
    const void* data;
    std::size_t size;
    Shape shape;
    double number;
  };

  double allocate(std::map<std::string, Buffer>& into, const std::string& name, Shape shape,
                  std::size_t element_bytes);
  const Buffer* find(const std::map<std::string, Buffer>& in, const std::string& name) const;

  std::map<std::string, Buffer> floats_, bytes_, counts_;
  std::map<std::string, double> numbers_;
  std::map<std::string, std::string> texts_;
  std::deque<Tensor> kept_tensors_;
  std::deque<std::vector<std::uint8_t>> kept_flags_;
  std::vector<Output> outputs_;
  std::vector<double> table_;
  std::string error_;
};

}  // namespace attnscope::bindings
