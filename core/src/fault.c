#include "fault.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TAGG_FAULT_INJECTION
bool tagg_fault(const char *op, int rank)
{
    static long            calls;
    static char            last[128];
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* asynchronous mode: worker threads ask too */
    const char *spec = getenv("TAGG_FAULT");
    char        want[64];
    int         r     = -1;
    long        after = 0;
    if (!spec || sscanf(spec, "%63[^:]:rank=%d:after=%ld", want, &r, &after) < 2)
        return false;
    pthread_mutex_lock(&mu);
    if (strncmp(spec, last, sizeof last)) { /* a new switch: count from zero */
        snprintf(last, sizeof last, "%s", spec);
        calls = 0;
    }
    bool hit = !strcmp(want, op) && r == rank && calls++ == after;
    pthread_mutex_unlock(&mu);
    return hit;
}
#else
bool tagg_fault(const char *op, int rank)
{
    (void)op, (void)rank;
    return false;
}
#endif
