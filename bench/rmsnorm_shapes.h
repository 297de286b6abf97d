// RMSNorm problem shapes: the named sets (from real models) and the --shapes grammar.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sb::bench {

struct RmsNormShape {
  int64_t rows;
  int64_t hidden;
  std::string name() const;  // "t4096_h8192": the shape field of a case name
  bool operator==(const RmsNormShape& o) const { return rows == o.rows && hidden == o.hidden; }
};

// --shapes=SPEC: a comma-separated list of items, each a named set or one shape,
//   ROWSxHIDDEN (4096x8192) or tROWS_hHIDDEN (t4096_h8192), rows in [1, 2^31-1], hidden in [1, 2^30].
// Duplicates are dropped, order kept. Throws UsageError naming the bad item.
std::vector<RmsNormShape> parse_rmsnorm_shapes(const std::string& spec);
// The named sets: "default", "anchors", "smoke", "edge".
std::vector<RmsNormShape> rmsnorm_shape_set(const std::string& name);
std::string rmsnorm_shapes_grammar();  // the paragraph for --help

}  // namespace sb::bench
