#ifndef EMOJIART_CCRYPTO_SHIM_H
#define EMOJIART_CCRYPTO_SHIM_H
/* OpenSSL's libcrypto, for SHA-256 only: the system already has it (libcurl links it), so the package does not
 * compile a second copy of a crypto library. */
#include <openssl/evp.h>
#endif
