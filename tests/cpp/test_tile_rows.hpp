// A guard for the tests that set the register tile's height
// (attnscope/matmul_tile.hpp): the former height again when the scope ends,
// however it ends.
#pragma once

#include <cstddef>

#include "attnscope/matmul_tile.hpp"

namespace attnscope::testing {

class TileRows {
 public:
  explicit TileRows(std::size_t rows) : former_(matmul_tile_rows()) { set_matmul_tile_rows(rows); }
  ~TileRows() { set_matmul_tile_rows(former_); }
  TileRows(const TileRows&) = delete;
  TileRows& operator=(const TileRows&) = delete;

 private:
  std::size_t former_;
};

}  // namespace attnscope::testing
