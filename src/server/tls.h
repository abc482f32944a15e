#pragma once
// The test bed's TLS identity: a self-signed certificate made at start-up (ECDSA P-256, valid for
// 127.0.0.1, ::1 and localhost, CA:TRUE so that the kubeconfig can name it as its own
// certificate authority and kubectl verifies the server with it).

#include <expected>
#include <memory>
#include <string>

typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;

namespace kubesched::server {

struct TlsIdentity {
  std::string certificate_pem;
  std::string private_key_pem;
  std::shared_ptr<X509> certificate;
  std::shared_ptr<EVP_PKEY> private_key;
};

//! A fresh key and self-signed certificate, valid from an hour ago for `days` days; the error
//! says which OpenSSL step failed.
std::expected<TlsIdentity, std::string> GenerateSelfSignedIdentity(int days = 365);

//! A certificate and its private key from PEM files (--tls-cert-file, --tls-private-key-file):
//! the first certificate of the file is served. The error names the file that cannot be read or
//! parsed, or says that the key does not match the certificate.
std::expected<TlsIdentity, std::string> LoadIdentity(const std::string& certificate_file,
                                                     const std::string& private_key_file);

}  // namespace kubesched::server
