#include "api/manifest_sources.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kubesched::api {
namespace {

// Standard input replaced by `text` for the life of the object.
class FakeStdin {
 public:
  explicit FakeStdin(std::string text) : buffer_(std::move(text)), saved_(std::cin.rdbuf(buffer_.rdbuf())) {}
  ~FakeStdin() {
    std::cin.rdbuf(saved_);
    std::cin.clear();
  }

 private:
  std::istringstream buffer_;
  std::streambuf* saved_;
};

TEST(ReadFileTest, SourcesPastTheLimitAreRefusedWithoutBeingReadWhole) {
  const auto path = std::filesystem::temp_directory_path() / "kubesched_read_file_test.yaml";
  {
    std::ofstream f(path, std::ios::binary);
    f << std::string(3 << 20, 'x');
  }
  std::string out;
  EXPECT_EQ(ReadFile(path.string(), out, 3 << 20), std::nullopt);
  EXPECT_EQ(out.size(), size_t{3} << 20);
  EXPECT_EQ(ReadFile(path.string(), out, 2 << 20),
            std::optional<std::string>("the file is larger than 2 MiB (the most kubesched reads from one source)"));
  EXPECT_TRUE(out.empty());
  std::filesystem::remove(path);

  // Standard input has no size to look at: it is read in pieces and refused once past the limit.
  {
    FakeStdin in(std::string((2 << 20) + 1, 'y'));
    EXPECT_EQ(
        ReadFile("-", out, 2 << 20),
        std::optional<std::string>("standard input is larger than 2 MiB (the most kubesched reads from one source)"));
    EXPECT_TRUE(out.empty());
  }
  {
    FakeStdin in(std::string(2 << 20, 'y'));
    EXPECT_EQ(ReadFile("-", out, 2 << 20), std::nullopt);
    EXPECT_EQ(out.size(), size_t{2} << 20);
  }
  EXPECT_EQ(ReadFile("/nonexistent/kubesched.yaml", out),
            std::optional<std::string>("cannot open file: No such file or directory"));
}

}  // namespace
}  // namespace kubesched::api
