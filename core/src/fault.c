#include "fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TAGG_FAULT_INJECTION
bool tagg_fault(const char *op, int rank)
{
    static long calls;
    static char last[128];
    const char *spec = getenv("TAGG_FAULT");
    char        want[64];
    int         r     = -1;
    long        after = 0;
    if (!spec || sscanf(spec, "%63[^:]:rank=%d:after=%ld", want, &r, &after) < 2)
        return false;
    if (strncmp(spec, last, sizeof last)) { /* a new switch: count from zero */
        snprintf(last, sizeof last, "%s", spec);
        calls = 0;
    }
    if (strcmp(want, op) || r != rank)
        return false;
    return calls++ == after;
}
#else
bool tagg_fault(const char *op, int rank)
{
    (void)op, (void)rank;
    return false;
}
#endif
