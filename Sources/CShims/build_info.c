#include "CShims.h"

// The Makefile's release build defines it (`-Xcc -DEMOJIART_SYNC_COMMIT="..."`, from `git describe`); a plain
// `swift build` does not.
#ifndef EMOJIART_SYNC_COMMIT
#define EMOJIART_SYNC_COMMIT ""
#endif

const char *emojiart_build_commit(void) {
    return EMOJIART_SYNC_COMMIT;
}
