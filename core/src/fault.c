#include "fault.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void tagg_fault_sleep(const char *name)
{
    const char *v  = getenv(name);
    int         ms = v ? atoi(v) : 0;
    if (ms > 0)
        nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L}, NULL);
}
#else
bool tagg_fault(const char *op, int rank)
{
    (void)op, (void)rank;
    return false;
}

void tagg_fault_sleep(const char *name)
{
    (void)name;
}
#endif
