#ifndef EMOJIART_CSHIMS_H
#define EMOJIART_CSHIMS_H
#include <stddef.h>
#include <stdint.h>

/// renameat2(2) with RENAME_NOREPLACE: rename `from` to `to` only if `to` does not exist.
/// Returns 0, or -1 with errno set (EEXIST when `to` exists). The corresponding C function is `renameat2`.
int emojiart_rename_noreplace(int olddirfd, const char *from, int newdirfd, const char *to);

#endif
