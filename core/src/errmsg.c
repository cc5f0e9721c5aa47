#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void tagg_errmsg(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
