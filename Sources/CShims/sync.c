#define _GNU_SOURCE
#include "CShims.h"
#include <unistd.h>

int emojiart_syncfs(int fd) {
    return syncfs(fd);
}
