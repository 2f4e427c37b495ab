// summarizeRaceReports (magnetoc check --racecheck): what it keeps of ThreadSanitizer's reports,
// on the real output of tests/gpu/racecheck_cases.cpp's block_reduce_broken case (a copy of the
// runtime's blockReduce with its loop barrier removed), paths shortened to REPO/.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "magneto/driver/commands.h"

namespace {

std::string readReport() {
  std::ifstream f(std::string(MAGNETO_SOURCE_DIR) + "/tests/data/racecheck/block_reduce_broken.tsan.txt");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(RaceReport, NamesBothAccessesTheirLinesAndTheEmulatedThreads) {
  const std::string raw = readReport();
  ASSERT_NE(raw.find("WARNING: ThreadSanitizer: data race"), std::string::npos);
  const std::string s = magneto::driver::summarizeRaceReports(raw);
  EXPECT_NE(s.find("race check: ThreadSanitizer: data race"), std::string::npos) << s;
  EXPECT_NE(s.find("Write of size 4"), std::string::npos) << s;
  EXPECT_NE(s.find("Previous read of size 4"), std::string::npos) << s;
  EXPECT_NE(s.find("blockReduceBroken(float const*, float*) REPO/tests/gpu/racecheck_cases.cpp:47:23\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("'block (0,0,0) thread (0,0,0)'"), std::string::npos) << s;
  EXPECT_EQ(s.find("BuildId"), std::string::npos) << s;  // module noise cut
  EXPECT_EQ(s.find("created by"), std::string::npos) << s;
  EXPECT_EQ(s.find("std::__invoke"), std::string::npos) << s;  // only the innermost frame
  EXPECT_NE(s.find("race check: 2 data race report(s) between emulated GPU threads [FAIL]"), std::string::npos)
      << s;
}

TEST(RaceReport, NothingWithoutAReport) {
  EXPECT_EQ(magneto::driver::summarizeRaceReports("output output: max_abs_err=0 ok\n"), "");
}

TEST(RaceReport, ShowsAtMostFiveReports) {
  const std::string one = readReport();
  std::string many;
  for (int i = 0; i < 4; ++i) many += one;  // 8 reports
  const std::string s = magneto::driver::summarizeRaceReports(many);
  size_t shown = 0;
  for (size_t p = s.find("race check: ThreadSanitizer"); p != std::string::npos;
       p = s.find("race check: ThreadSanitizer", p + 1))
    ++shown;
  EXPECT_EQ(shown, 5u);
  EXPECT_NE(s.find("race check: 8 data race report(s) between emulated GPU threads (5 shown) [FAIL]"),
            std::string::npos)
      << s;
}

}  // namespace
