#ifndef EMOJIART_TEST_FAULT_H
#define EMOJIART_TEST_FAULT_H

/// The test-only fault switches the C shims obey, named in the environment variable EMOJIART_SYNC_TEST_FAULT
/// (a comma-separated list; the Swift side reads the others, TestFaultSwitch.swift).
enum emojiart_c_fault {
    /// `renameat2-einval`: every renameat2 fails with EINVAL (rename.c).
    EMOJIART_FAULT_RENAMEAT2_EINVAL = 1 << 0,
    /// `o-tmpfile-eopnotsupp`: every O_TMPFILE open fails with EOPNOTSUPP (unnamed_file.c).
    EMOJIART_FAULT_NO_UNNAMED_FILES = 1 << 1,
    /// `fanotify-eperm`: the listing monitor cannot start, with EPERM (directory_listing.c).
    EMOJIART_FAULT_NO_FANOTIFY = 1 << 2,
};

/// Whether the fault `fault` was asked for; the variable is read once per process.
int emojiart_c_fault_on(enum emojiart_c_fault fault);

#endif
