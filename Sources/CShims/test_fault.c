#include "test_fault.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t faults_once = PTHREAD_ONCE_INIT;
static int faults_on = 0;

static void read_faults(void) {
    const char *faults = getenv("EMOJIART_SYNC_TEST_FAULT");
    if (faults == NULL) return;
    if (strstr(faults, "renameat2-einval") != NULL) faults_on |= EMOJIART_FAULT_RENAMEAT2_EINVAL;
    if (strstr(faults, "o-tmpfile-eopnotsupp") != NULL) faults_on |= EMOJIART_FAULT_NO_UNNAMED_FILES;
    if (strstr(faults, "fanotify-eperm") != NULL) faults_on |= EMOJIART_FAULT_NO_FANOTIFY;
}

int emojiart_c_fault_on(enum emojiart_c_fault fault) {
    pthread_once(&faults_once, read_faults);
    return (faults_on & fault) != 0;
}
