public import Foundation
internal import COpenSSL

extension LoopbackServer {
    /// What a TLS server presents: its certificate and private key, in PEM. A test identity also
    /// carries the certificate of the authority that signed it, which a client is told to trust.
    /// - Thread: any (a value)
    public struct TLSIdentity: Sendable {
        /// The server's certificate (PEM). Only the first certificate is presented.
        public var certificatePEM: String
        /// The server's private key (PEM, PKCS #8).
        public var privateKeyPEM: String
        /// The authority that signed `certificatePEM` (PEM), for the client to trust; nil when
        /// unknown.
        public var authorityCertificatePEM: String?

        public init(certificatePEM: String, privateKeyPEM: String, authorityCertificatePEM: String? = nil) {
            self.certificatePEM = certificatePEM
            self.privateKeyPEM = privateKeyPEM
            self.authorityCertificatePEM = authorityCertificatePEM
        }

        /// A fresh authority and a server identity it signed, made in this process with OpenSSL
        /// (EC P-256 keys, SHA-256 signatures): the authority's certificate is a CA
        /// (`basicConstraints` CA:TRUE, key usage keyCertSign); the server's names every host in
        /// `hosts` in its subjectAltName (an IP address as IP:, anything else as DNS:) and the first
        /// as its common name, for `serverAuth`. Both are valid from an hour ago for `validDays` days.
        /// - Throws: `LoopbackServerError` with OpenSSL's reason.
        /// - Thread: any
        public static func makeForTesting(hosts: [String] = ["127.0.0.1", "localhost"], validDays: Int = 2) throws -> TLSIdentity {
            precondition(!hosts.isEmpty, "a test identity names at least one host")
            let authorityKey = try TLSCertificates.makeKey()
            defer { EVP_PKEY_free(authorityKey) }
            let authority = try TLSCertificates.makeCertificate(
                commonName: "Tessera loopback test authority", key: authorityKey, issuer: nil, issuerKey: authorityKey,
                validDays: validDays,
                extensions: [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                             (NID_subject_key_identifier, "hash")])
            defer { X509_free(authority) }
            let serverKey = try TLSCertificates.makeKey()
            defer { EVP_PKEY_free(serverKey) }
            let names = hosts.map { host in
                TLSCertificates.isIPAddress(host) ? "IP:\(host)" : "DNS:\(host)"
            }.joined(separator: ",")
            let server = try TLSCertificates.makeCertificate(
                commonName: hosts[0], key: serverKey, issuer: authority, issuerKey: authorityKey, validDays: validDays,
                extensions: [(NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                             (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, names),
                             (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")])
            defer { X509_free(server) }
            return TLSIdentity(certificatePEM: try TLSCertificates.pem(certificate: server),
                               privateKeyPEM: try TLSCertificates.pem(key: serverKey),
                               authorityCertificatePEM: try TLSCertificates.pem(certificate: authority))
        }

        /// Writes the authority's certificate to a file (what `curl --cacert` reads) and returns
        /// its URL.
        /// - Thread: any
        public func writeAuthorityCertificate(to url: URL) throws {
            guard let authorityCertificatePEM else { throw LoopbackServerError("this identity has no authority certificate") }
            try Data(authorityCertificatePEM.utf8).write(to: url)
        }
    }
}

/// OpenSSL's certificate calls, each failure turned into an error with OpenSSL's reason.
enum TLSCertificates {
    static func failure(_ what: String) -> LoopbackServerError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return LoopbackServerError("OpenSSL: \(what) failed" + (reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")))
    }

    static func makeKey() throws -> OpaquePointer {
        guard let key = tessera_ec_p256_key() else { throw failure("making an EC P-256 key") }
        return key
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// A version 3 certificate for `key`, signed by `issuerKey`: self-signed when `issuer` is nil.
    static func makeCertificate(commonName: String, key: OpaquePointer, issuer: OpaquePointer?, issuerKey: OpaquePointer,
                                validDays: Int, extensions: [(Int32, String)]) throws -> OpaquePointer {
        guard let certificate = X509_new() else { throw failure("X509_new") }
        var finished = false
        defer { if !finished { X509_free(certificate) } }
        guard X509_set_version(certificate, 2) == 1,
              ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), UInt64.random(in: 1...UInt64(Int64.max))) == 1,
              X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
              X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86_400) != nil,
              X509_set_pubkey(certificate, key) == 1 else { throw failure("filling in a certificate") }
        let subject = X509_get_subject_name(certificate)
        guard X509_NAME_add_entry_by_txt(subject, "CN", TESSERA_MBSTRING_ASC, commonName, -1, -1, 0) == 1 else {
            throw failure("naming a certificate")
        }
        let issuerName = issuer.map { X509_get_subject_name($0) } ?? subject
        guard X509_set_issuer_name(certificate, issuerName) == 1 else { throw failure("naming the issuer") }
        for (nid, value) in extensions {
            guard tessera_x509_add_extension(certificate, issuer ?? certificate, nid, value) == 1 else {
                throw failure("adding the extension \(value)")
            }
        }
        guard X509_sign(certificate, issuerKey, EVP_sha256()) > 0 else { throw failure("signing a certificate") }
        finished = true
        return certificate
    }

    static func pem(certificate: OpaquePointer) throws -> String {
        try withMemoryBIO("writing a certificate") { PEM_write_bio_X509($0, certificate) }
    }

    static func pem(key: OpaquePointer) throws -> String {
        try withMemoryBIO("writing a key") { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    }

    private static func withMemoryBIO(_ what: String, _ write: (OpaquePointer) -> Int32) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure(what) }
        var data: UnsafeMutablePointer<CChar>?
        let length = tessera_bio_contents(bio, &data)
        guard let data, length > 0 else { throw failure(what) }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// Reads the first certificate and the key of PEM text.
    static func read(certificatePEM: String, keyPEM: String) throws -> (certificate: OpaquePointer, key: OpaquePointer) {
        func bio(_ text: String) throws -> OpaquePointer {
            let bytes = Array(text.utf8)
            guard let bio = BIO_new(BIO_s_mem()), bytes.withUnsafeBytes({ BIO_write(bio, $0.baseAddress, Int32($0.count)) }) == bytes.count else {
                throw failure("reading PEM")
            }
            return bio
        }
        let certificateBIO = try bio(certificatePEM)
        defer { BIO_free(certificateBIO) }
        guard let certificate = PEM_read_bio_X509(certificateBIO, nil, nil, nil) else { throw failure("reading the certificate PEM") }
        let keyBIO = try bio(keyPEM)
        defer { BIO_free(keyBIO) }
        guard let key = PEM_read_bio_PrivateKey(keyBIO, nil, nil, nil) else {
            X509_free(certificate)
            throw failure("reading the private key PEM")
        }
        return (certificate, key)
    }
}
