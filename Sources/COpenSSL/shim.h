#ifndef TESSERA_COPENSSL_SHIM_H
#define TESSERA_COPENSSL_SHIM_H

// OpenSSL (libssl, libcrypto) for LoopbackServer's TLS and its test certificates. What OpenSSL
// defines as macros (`SSL_CTX_set_min_proto_version`, `SSL_CTX_set_mode`, `BIO_get_mem_data`,
// `EVP_EC_gen`, `X509V3_set_ctx_nodb`) is wrapped here as functions Swift can call, and the ALPN
// choice is a C callback, so no Swift closure crosses into OpenSSL.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <string.h>

/// TLS 1.2 at least; writes may be partial and may be retried from a buffer that moved (Swift
/// arrays do move).
static inline int tessera_ssl_ctx_configure(SSL_CTX *context) {
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

/// ALPN: "h2" when the client offers it and `arg` is non-zero, else "http/1.1" when offered; with
/// neither, no protocol is agreed and the connection goes on as HTTP/1.1.
static int tessera_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                               const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    const unsigned char *http11 = NULL;
    unsigned int index = 0;
    while (index < inlen) {
        unsigned int length = in[index];
        const unsigned char *name = in + index + 1;
        if (index + 1 + length > inlen) break;
        if (arg != NULL && length == 2 && memcmp(name, "h2", 2) == 0) {
            *out = name;
            *outlen = (unsigned char)length;
            return SSL_TLSEXT_ERR_OK;
        }
        if (length == 8 && memcmp(name, "http/1.1", 8) == 0 && http11 == NULL) http11 = name;
        index += 1 + length;
    }
    if (http11 != NULL) {
        *out = http11;
        *outlen = 8;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/// Installs `tessera_alpn_select` on `context`, offering "h2" when `allow_http2`.
static inline void tessera_ssl_ctx_select_alpn(SSL_CTX *context, int allow_http2) {
    SSL_CTX_set_alpn_select_cb(context, tessera_alpn_select, allow_http2 ? (void *)(intptr_t)1 : NULL);
}

/// The protocol ALPN agreed on, copied into `out` (at most `capacity` - 1 bytes, NUL-terminated);
/// its length, 0 when none was.
static inline int tessera_ssl_alpn_selected(const SSL *ssl, char *out, int capacity) {
    const unsigned char *data = NULL;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl, &data, &length);
    if (data == NULL || capacity <= 0) return 0;
    if ((int)length > capacity - 1) length = (unsigned int)(capacity - 1);
    memcpy(out, data, length);
    out[length] = 0;
    return (int)length;
}

/// `MBSTRING_ASC`: a name entry given as ASCII.
static const int TESSERA_MBSTRING_ASC = MBSTRING_ASC;

/// A fresh EC P-256 key pair.
static inline EVP_PKEY *tessera_ec_p256_key(void) {
    return EVP_EC_gen("P-256");
}

/// Adds the X.509 v3 extension `nid` written in OpenSSL's configuration syntax (`value`, e.g.
/// "critical,CA:TRUE" or "IP:127.0.0.1,DNS:localhost") to `certificate`, issued by `issuer` (itself
/// for a self-signed one). 1 on success.
static inline int tessera_x509_add_extension(X509 *certificate, X509 *issuer, int nid, const char *value) {
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, issuer, certificate, NULL, NULL, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &context, nid, value);
    if (extension == NULL) return 0;
    int added = X509_add_ext(certificate, extension, -1);
    X509_EXTENSION_free(extension);
    return added;
}

/// The bytes held by a memory BIO: their length, and `*data` pointing at them (owned by the BIO).
static inline long tessera_bio_contents(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

#endif
