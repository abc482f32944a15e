#include "server/tls.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace kubesched::server {
namespace {

std::string OpenSslError(std::string_view step) {
  std::string out(step);
  unsigned long code = ERR_get_error();
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    out += ": ";
    out += buf;
  }
  return out;
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

std::expected<TlsIdentity, std::string> GenerateSelfSignedIdentity(int days) {
  std::shared_ptr<EVP_PKEY> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) return std::unexpected(OpenSslError("generating the P-256 key"));
  std::shared_ptr<X509> cert(X509_new(), X509_free);
  if (!cert) return std::unexpected(OpenSslError("allocating the certificate"));

  X509_set_version(cert.get(), 2);  // v3
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return std::unexpected(OpenSslError("drawing the serial"));
  serial_bytes[0] &= 0x7f;  // positive
  BIGNUM* serial_bn = BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr);
  ASN1_INTEGER* serial = BN_to_ASN1_INTEGER(serial_bn, X509_get_serialNumber(cert.get()));
  BN_free(serial_bn);
  if (serial == nullptr) return std::unexpected(OpenSslError("setting the serial"));
  // Valid from an hour ago, so clocks a little apart do not reject it.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(days) * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("kubesched"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("kubesched-apiserver"),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !AddExtension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !AddExtension(cert.get(), NID_subject_key_identifier, "hash") ||
      !AddExtension(cert.get(), NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost")) {
    return std::unexpected(OpenSslError("adding the certificate's extensions"));
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return std::unexpected(OpenSslError("signing the certificate"));

  TlsIdentity id;
  {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    if (!bio || PEM_write_bio_X509(bio.get(), cert.get()) != 1)
      return std::unexpected(OpenSslError("encoding the certificate"));
    id.certificate_pem = BioText(bio.get());
  }
  {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
      return std::unexpected(OpenSslError("encoding the private key"));
    }
    id.private_key_pem = BioText(bio.get());
  }
  id.certificate = std::move(cert);
  id.private_key = std::move(key);
  return id;
}

namespace {

std::expected<std::string, std::string> ReadPemFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(fmt::format("cannot read {} \"{}\": {}", what, path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::expected<TlsIdentity, std::string> LoadIdentity(const std::string& certificate_file,
                                                     const std::string& private_key_file) {
  auto cert_pem = ReadPemFile(certificate_file, "--tls-cert-file");
  if (!cert_pem) return std::unexpected(cert_pem.error());
  auto key_pem = ReadPemFile(private_key_file, "--tls-private-key-file");
  if (!key_pem) return std::unexpected(key_pem.error());
  TlsIdentity id;
  {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(cert_pem->data(), static_cast<int>(cert_pem->size())),
                                                  BIO_free);
    X509* cert = bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr;
    if (cert == nullptr) {
      return std::unexpected(OpenSslError(fmt::format("--tls-cert-file \"{}\": no PEM certificate", certificate_file)));
    }
    id.certificate = std::shared_ptr<X509>(cert, X509_free);
  }
  {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())),
                                                  BIO_free);
    EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
    if (key == nullptr) {
      return std::unexpected(
          OpenSslError(fmt::format("--tls-private-key-file \"{}\": no PEM private key", private_key_file)));
    }
    id.private_key = std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
  }
  if (X509_check_private_key(id.certificate.get(), id.private_key.get()) != 1) {
    return std::unexpected(fmt::format("--tls-private-key-file \"{}\" is not the key of --tls-cert-file \"{}\"",
                                       private_key_file, certificate_file));
  }
  id.certificate_pem = std::move(*cert_pem);
  id.private_key_pem = std::move(*key_pem);
  return id;
}

}  // namespace kubesched::server
