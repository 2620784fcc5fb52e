#include "CShims.h"
#include <sys/eventfd.h>

int emojiart_wake_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
