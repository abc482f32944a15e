#include "util/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace kubesched::util {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path FreshDir() {
  fs::path dir = fs::temp_directory_path() / ("kubesched-atomic-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(WriteFileAtomicallyTest, ReplacesWholeAndLeavesNothingElse) {
  const fs::path dir = FreshDir();
  const fs::path file = dir / "out.txt";
  ASSERT_TRUE(WriteFileAtomically(file.string(), "first"));
  ASSERT_TRUE(WriteFileAtomically(file.string(), "second, longer"));
  EXPECT_EQ(Read(file), "second, longer");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(WriteFileAtomicallyTest, ModeLessTheUmask) {
  const fs::path dir = FreshDir();
  const fs::path file = dir / "secret";
  const mode_t old = umask(022);
  ASSERT_TRUE(WriteFileAtomically(file.string(), "x", 0600));
  ASSERT_TRUE(WriteFileAtomically((dir / "doc").string(), "x", 0666));
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir / "doc").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  fs::remove_all(dir);
}

TEST(WriteFileAtomicallyTest, ErrorsNameThePathAndLeaveTheOldFile) {
  const fs::path dir = FreshDir();
  auto missing = WriteFileAtomically((dir / "no" / "such.txt").string(), "x");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("such.txt: cannot create a file in"), std::string::npos) << missing.error();
  EXPECT_NE(missing.error().find("No such file or directory"), std::string::npos) << missing.error();
  // A directory in the way: the rename fails, the temporary file is removed.
  fs::create_directories(dir / "taken" / "inside");
  auto taken = WriteFileAtomically((dir / "taken").string(), "x");
  ASSERT_FALSE(taken);
  EXPECT_NE(taken.error().find("cannot replace the file"), std::string::npos) << taken.error();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  EXPECT_FALSE(WriteFileAtomically("", "x"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kubesched::util
