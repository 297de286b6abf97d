// Assertion helpers shared by the CPU tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
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

// Element-wise |actual - expected| <= rel * max(1, |expected|).
inline void expect_close(const std::vector<double>& actual, const std::vector<double>& expected, double rel = 1e-12) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], rel * std::max(1.0, std::abs(expected[i]))) << "at index " << i;
}

}  // namespace sb::test
