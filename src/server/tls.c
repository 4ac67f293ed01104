/* TLS setup checks: the certificate and key are loaded once with OpenSSL before lws gets
 * them, so a bad file is a startup error naming the file and the reason (lws only fails
 * to make the vhost, and its log is not ours). Also: whether a listen address is loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"

/* A readable regular file, else why not (errno's words). */
static bool readable_file(const char *what, const char *path, char *why, size_t cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return snprintf(why, cap, "%s %s: %s", what, path, strerror(errno)), false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    char byte;
    ssize_t r = ok ? read(fd, &byte, 1) : 0;
    int e = errno;
    close(fd);
    if (!ok) return snprintf(why, cap, "%s %s: not a regular file", what, path), false;
    if (r < 0) return snprintf(why, cap, "%s %s: %s", what, path, strerror(e)), false;
    if (r == 0) return snprintf(why, cap, "%s %s: the file is empty", what, path), false;
    return true;
}

/* Why OpenSSL failed, in words a user can act on: its error queue (this thread's) is read
 * whole, since the first entry is the cause and the later ones only say where it surfaced
 * ("PEM lib"). *mismatch: the key is not the certificate's. */
static const char *ssl_reason(bool *mismatch) {
    const char *first = NULL;
    bool no_pem = false, encrypted = false;
    if (mismatch) *mismatch = false;
    for (unsigned long e; (e = ERR_get_error()) != 0;) {
        int lib = ERR_GET_LIB(e), reason = ERR_GET_REASON(e);
        if (!first) first = ERR_reason_error_string(e);
        if ((lib == ERR_LIB_PEM && reason == PEM_R_NO_START_LINE) ||
            (lib == ERR_LIB_OSSL_DECODER && reason == ERR_R_UNSUPPORTED))
            no_pem = true;
        if (lib == ERR_LIB_PEM && reason == PEM_R_BAD_PASSWORD_READ) encrypted = true;
        if (mismatch && lib == ERR_LIB_X509 && (reason == X509_R_KEY_VALUES_MISMATCH || reason == X509_R_KEY_TYPE_MISMATCH))
            *mismatch = true;
    }
    if (encrypted) return "it is encrypted; give an unencrypted key";
    if (no_pem) return "no PEM block of the expected kind in it";
    return first ? first : "unknown error";
}

/* An encrypted key is refused, not prompted for on the terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *user) {
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)user;
    return -1;
}

bool srv_tls_check(const char *cert, const char *key, char *why, size_t cap) {
    if (!cert || !cert[0] || !key || !key[0])
        return snprintf(why, cap, "TLS needs both a certificate and its private key"), false;
    if (!readable_file("TLS certificate", cert, why, cap) || !readable_file("TLS private key", key, why, cap))
        return false;
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) return snprintf(why, cap, "TLS: cannot make an OpenSSL context: %s", ssl_reason(NULL)), false;
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    bool ok = false, mismatch = false;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        snprintf(why, cap, "TLS certificate %s: not a usable PEM certificate (%s)", cert, ssl_reason(NULL));
    } else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        const char *r = ssl_reason(&mismatch);
        if (mismatch)
            snprintf(why, cap, "TLS private key %s does not match the certificate %s", key, cert);
        else
            snprintf(why, cap, "TLS private key %s: not a usable PEM private key (%s)", key, r);
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(why, cap, "TLS private key %s does not match the certificate %s (%s)", key, cert, ssl_reason(NULL));
    } else {
        ok = true;
    }
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

const char *srv_tls_library_version(void) { return OpenSSL_version(OPENSSL_VERSION_STRING); }

bool srv_host_is_loopback(const char *host) {
    if (!host) return false;
    if (strcasecmp(host, "localhost") == 0) return true;
    unsigned char a[16];
    if (inet_pton(AF_INET, host, a) == 1) return a[0] == 127;
    if (inet_pton(AF_INET6, host, a) == 1) {
        static const unsigned char loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        return memcmp(a, loop6, 16) == 0 || (memcmp(a, mapped, 12) == 0 && a[12] == 127);
    }
    return false; /* a name other than localhost, or an interface: may be reachable from elsewhere */
}
