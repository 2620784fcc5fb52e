// libpng's classic read API behind a setjmp, so that Swift never sees a longjmp; from memory or from a file
// through a fixed buffer.
//
// libpng reports a fatal error by calling the error function and then longjmp-ing to the jump buffer set
// with setjmp(png_jmpbuf(png)). A longjmp across Swift frames skips their cleanup and is undefined, so every
// libpng call that can fail is made here, below the setjmp in `read_png`, and Swift gets a status code.
#include "CShims.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// The window a file is read through: libpng asks for a few bytes at a time (a chunk header, a slice of image
/// data), so the file is read in blocks of this size, whatever its own size.
#define EMOJIART_PNG_FILE_BLOCK (64 * 1024)

/// Everything one read needs. It lives in the frame of the entry point, above the setjmp, so its fields keep
/// their values across the longjmp (they are not locals of the function that calls setjmp).
///
/// libpng is served from `bytes[offset..<count]`: the whole PNG when it is in memory, the last block read when it
/// is in a file (`fd` >= 0), refilled from the file when used up.
typedef struct png_source_reader {
    const uint8_t *bytes;
    size_t count;
    size_t offset;
    /// The file read from, or -1 for bytes in memory.
    int fd;
    /// Where in the file the next block starts.
    off_t file_offset;
    /// The block buffer of a file read (EMOJIART_PNG_FILE_BLOCK bytes); freed by the entry point on every path.
    uint8_t *block;
    emojiart_png_read_result *result;
    /// The one row buffer for full decoding; freed by `read_from` on every path.
    png_bytep row;
    /// What `read_png` returns if libpng longjmps now.
    emojiart_png_status failure;
} png_source_reader;

static void copy_message(char *destination, size_t capacity, const char *message) {
    snprintf(destination, capacity, "%s", message != NULL ? message : "(no message)");
}

/// png_error_ptr: records the message and the chunk being read, then jumps back to `read_png`.
static void on_png_error(png_structp png, png_const_charp message) {
    png_source_reader *reader = (png_source_reader *)png_get_error_ptr(png);
    reader->result->failed_chunk = png_get_io_chunk_type(png);
    copy_message(reader->result->message, sizeof reader->result->message, message);
    png_longjmp(png, 1);
}

/// png_error_ptr for warnings: keeps the first one (the precise reason behind a later generic error).
static void on_png_warning(png_structp png, png_const_charp message) {
    png_source_reader *reader = (png_source_reader *)png_get_error_ptr(png);
    if (reader->result->first_warning[0] == '\0') {
        copy_message(reader->result->first_warning, sizeof reader->result->first_warning, message);
    }
}

/// Reads the file's next block into the reader's buffer. False at the end of the file, or when `pread` fails
/// (its errno kept in the result). Bytes in memory have no next block.
static int read_next_block(png_source_reader *reader) {
    if (reader->fd < 0) {
        return 0;
    }
    ssize_t count;
    do {
        count = pread(reader->fd, reader->block, EMOJIART_PNG_FILE_BLOCK, reader->file_offset);
    } while (count < 0 && errno == EINTR);
    if (count < 0) {
        reader->result->read_errno = errno;
        return 0;
    }
    reader->bytes = reader->block;
    reader->count = (size_t)count;
    reader->offset = 0;
    reader->file_offset += count;
    return count > 0;
}

/// png_rw_ptr: serves bytes from memory or from the file's blocks; asking past the end is a libpng error, not a
/// crash, and so is a failed read of the file.
static void read_from_source(png_structp png, png_bytep destination, size_t length) {
    png_source_reader *reader = (png_source_reader *)png_get_io_ptr(png);
    while (length > 0) {
        if (reader->offset == reader->count && !read_next_block(reader)) {
            png_error(png, reader->result->read_errno != 0 ? "reading the file failed"
                                                           : "read past the end of the data (truncated PNG)");
        }
        size_t available = reader->count - reader->offset;
        size_t taken = length < available ? length : available;
        memcpy(destination, reader->bytes + reader->offset, taken);
        reader->offset += taken;
        destination += taken;
        length -= taken;
    }
}

/// The libpng calls proper. Returns through the setjmp branch on any libpng error.
static emojiart_png_status read_png(png_structp png, png_infop info, png_source_reader *reader,
                                    const emojiart_png_read_options *options) {
    if (setjmp(png_jmpbuf(png))) {
        return reader->failure;
    }
    emojiart_png_read_result *result = reader->result;

    reader->failure = EMOJIART_PNG_INFO_FAILED;
    png_set_read_fn(png, reader, read_from_source);
    png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
#ifdef PNG_IGNORE_ADLER32
    // Keep zlib's Adler-32 check of the image data (the default, made explicit). png_set_option takes a
    // boolean: 0 is off. (Passing PNG_OPTION_OFF, which is 2, would turn the option, and so the skip, on.)
    png_set_option(png, PNG_IGNORE_ADLER32, 0);
#endif
    png_set_user_limits(png, options->max_width, options->max_height);
    png_set_chunk_malloc_max(png, options->max_chunk_malloc);
    png_set_chunk_cache_max(png, options->max_cached_chunks);

    png_read_info(png, info);
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace_method = 0;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace_method, NULL, NULL);
    result->width = width;
    result->height = height;
    result->bit_depth = (uint8_t)bit_depth;
    result->color_type = (uint8_t)color_type;
    result->interlace_method = (uint8_t)interlace_method;
    if (!options->decode_rows) {
        return EMOJIART_PNG_OK;
    }

    // Rows come out raw (no transformations): only de-interlacing, so one buffer of the full row width
    // serves every pass. libpng's own buffers are of the same order: memory does not grow with height.
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t row_bytes = png_get_rowbytes(png, info);
    reader->row = (png_bytep)malloc(row_bytes > 0 ? row_bytes : 1);
    if (reader->row == NULL) {
        snprintf(result->message, sizeof result->message, "malloc of the %zu-byte row buffer returned NULL", row_bytes);
        return EMOJIART_PNG_OUT_OF_MEMORY;
    }
    // From here on a damaged zlib stream must fail: libpng treats an Adler-32 mismatch, extra data and
    // "too much image data" as benign (warnings) unless benign errors are turned off.
    png_set_benign_errors(png, 0);
    reader->failure = EMOJIART_PNG_ROWS_FAILED;
    result->passes = (uint8_t)passes;
    for (int pass = 0; pass < passes; pass++) {
        for (png_uint_32 y = 0; y < height; y++) {
            png_read_row(png, reader->row, NULL);
            result->rows_decoded += 1;
        }
    }
    reader->failure = EMOJIART_PNG_END_FAILED;
    png_read_end(png, NULL);
    return EMOJIART_PNG_OK;
}

/// Creates the libpng structures, reads through `reader`, and frees everything on every path.
static emojiart_png_status read_from(png_source_reader *reader, const emojiart_png_read_options *options) {
    emojiart_png_read_result *result = reader->result;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, on_png_error, on_png_warning);
    if (png == NULL) {
        copy_message(result->message, sizeof result->message, "png_create_read_struct returned NULL");
        return EMOJIART_PNG_OUT_OF_MEMORY;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        copy_message(result->message, sizeof result->message, "png_create_info_struct returned NULL");
        return EMOJIART_PNG_OUT_OF_MEMORY;
    }
    emojiart_png_status status = read_png(png, info, reader, options);
    free(reader->row);
    reader->row = NULL;
    png_destroy_read_struct(&png, &info, NULL);
    if (status != EMOJIART_PNG_OK && result->read_errno != 0) {
        return EMOJIART_PNG_READ_FAILED;
    }
    return status;
}

emojiart_png_status emojiart_png_read(const uint8_t *bytes, size_t count,
                                      const emojiart_png_read_options *options,
                                      emojiart_png_read_result *result) {
    memset(result, 0, sizeof *result);
    png_source_reader reader = {
        .bytes = bytes, .count = count, .offset = 0, .fd = -1, .file_offset = 0, .block = NULL,
        .result = result, .row = NULL, .failure = EMOJIART_PNG_INFO_FAILED,
    };
    return read_from(&reader, options);
}

emojiart_png_status emojiart_png_read_file(int fd, const emojiart_png_read_options *options,
                                           emojiart_png_read_result *result) {
    memset(result, 0, sizeof *result);
    png_source_reader reader = {
        .bytes = NULL, .count = 0, .offset = 0, .fd = fd, .file_offset = 0, .block = NULL,
        .result = result, .row = NULL, .failure = EMOJIART_PNG_INFO_FAILED,
    };
    reader.block = (uint8_t *)malloc(EMOJIART_PNG_FILE_BLOCK);
    if (reader.block == NULL) {
        snprintf(result->message, sizeof result->message, "malloc of the %d-byte read buffer returned NULL",
                 EMOJIART_PNG_FILE_BLOCK);
        return EMOJIART_PNG_OUT_OF_MEMORY;
    }
    emojiart_png_status status = read_from(&reader, options);
    free(reader.block);
    return status;
}
