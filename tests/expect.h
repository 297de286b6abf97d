// Assertion helpers shared by the CPU tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace sb::test {

// Runs `call` and expects an exception of type E whose message contains `fragment` (the field or
// item the error must name).
template <typename E, typename F>
void expect_throw_naming(F&& call, const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one naming '" << fragment << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "message: " << e.what();
  }
}

// Each (value, fragment) pair: `parse(value)` throws E naming `fragment` (`flag` names the value in the trace).
template <typename E, typename Parse>
void expect_each_throws_naming(const std::string& flag, Parse&& parse,
                               const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [value, fragment] : cases) {
    SCOPED_TRACE(flag + "=" + value);
    expect_throw_naming<E>([&] { parse(value); }, fragment);
  }
}

// The variant names of a variants.def's SB_VARIANT lines, in file order (empty if the file cannot be read). The
// registry tests compare an op's registry with it.
inline std::vector<std::string> variants_def_names(const std::string& path) {
  std::ifstream def(path);
  std::vector<std::string> names;
  const std::regex line(R"re(^SB_VARIANT\(([a-z0-9_]+),\s*"(.+)"\)\s*$)re");
  for (std::string s; std::getline(def, s);) {
    std::smatch m;
    if (std::regex_match(s, m, line)) names.push_back(m[1]);
  }
  return names;
}

// Element-wise |actual - expected| <= rel * max(1, |expected|).
inline void expect_close(const std::vector<double>& actual, const std::vector<double>& expected, double rel = 1e-12) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], rel * std::max(1.0, std::abs(expected[i]))) << "at index " << i;
}

}  // namespace sb::test
