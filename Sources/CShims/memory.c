#include <malloc.h>
#include "CShims.h"

int emojiart_release_free_heap(void) {
    return malloc_trim(0);
}
