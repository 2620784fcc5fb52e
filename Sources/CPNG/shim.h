#ifndef EMOJIART_CPNG_SHIM_H
#define EMOJIART_CPNG_SHIM_H
#include <png.h>
#include <zlib.h>
#endif
