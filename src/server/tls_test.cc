// Loading the secure port's identity from PEM files (--tls-cert-file, --tls-private-key-file).

#include "server/tls.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kubesched::server {
namespace {

namespace fs = std::filesystem;

class LoadIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kubesched-tls-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(LoadIdentityTest, LoadsAGeneratedIdentity) {
  auto id = GenerateSelfSignedIdentity();
  ASSERT_TRUE(id.has_value()) << id.error();
  auto loaded = LoadIdentity(Write("tls.crt", id->certificate_pem), Write("tls.key", id->private_key_pem));
  ASSERT_TRUE(loaded.has_value()) << loaded.error();
  EXPECT_NE(loaded->certificate, nullptr);
  EXPECT_NE(loaded->private_key, nullptr);
  EXPECT_EQ(loaded->certificate_pem, id->certificate_pem);
}

TEST_F(LoadIdentityTest, ErrorsNameTheFile) {
  auto a = GenerateSelfSignedIdentity();
  auto b = GenerateSelfSignedIdentity();
  ASSERT_TRUE(a.has_value() && b.has_value());
  const std::string cert = Write("a.crt", a->certificate_pem);
  const std::string key = Write("a.key", a->private_key_pem);
  const std::string other_key = Write("b.key", b->private_key_pem);
  const std::string garbage = Write("garbage.pem", "not a pem\n");
  const std::string missing = (dir_ / "missing.crt").string();
  struct Case {
    std::string name, cert, key, want;
  };
  const Case cases[] = {
      {"missing certificate", missing, key, "cannot read --tls-cert-file \"" + missing + "\""},
      {"missing key", cert, missing, "cannot read --tls-private-key-file \"" + missing + "\""},
      {"not a certificate", garbage, key, "--tls-cert-file \"" + garbage + "\": no PEM certificate"},
      {"not a key", cert, garbage, "--tls-private-key-file \"" + garbage + "\": no PEM private key"},
      {"another certificate's key", cert, other_key, "is not the key of --tls-cert-file \"" + cert + "\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto loaded = LoadIdentity(c.cert, c.key);
    ASSERT_FALSE(loaded.has_value());
    EXPECT_NE(loaded.error().find(c.want), std::string::npos) << loaded.error();
  }
}

}  // namespace
}  // namespace kubesched::server
