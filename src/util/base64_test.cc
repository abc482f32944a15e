#include "util/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace kubesched::util {
namespace {

TEST(Base64Test, EncodesWithPaddingAsGoStdEncoding) {
  // RFC 4648 section 10's test vectors.
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\xfb\xff\0", 3)), "+/8A");
}

TEST(Base64Test, DecodesWhatItEncodesWithEveryByteValue) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); n += 37) {
    std::string data = all.substr(0, n);
    EXPECT_EQ(Base64Decode(Base64Encode(data)), data) << n;
  }
  EXPECT_EQ(Base64Decode("Zm9vYg=="), "foob");
  EXPECT_EQ(Base64Decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(Base64Decode(""), "");
}

TEST(Base64Test, SkipsLineBreaksAndSpaces) {
  EXPECT_EQ(Base64Decode("Zm9v\nYmFy\r\n"), "foobar");
  EXPECT_EQ(Base64Decode(" Zm9v\tYg==\n"), "foob");
}

TEST(Base64Test, RefusesWhatGoStdEncodingRefuses) {
  EXPECT_EQ(Base64Decode("Zm9vYg"), std::nullopt);    // padding missing
  EXPECT_EQ(Base64Decode("Zm9"), std::nullopt);       // length
  EXPECT_EQ(Base64Decode("Zm9v!mFy"), std::nullopt);  // outside the alphabet
  EXPECT_EQ(Base64Decode("-_8A"), std::nullopt);      // the URL alphabet is another encoding
  EXPECT_EQ(Base64Decode("Zg==Zm9v"), std::nullopt);  // padding in the middle
  EXPECT_EQ(Base64Decode("not base64!"), std::nullopt);
}

}  // namespace
}  // namespace kubesched::util
