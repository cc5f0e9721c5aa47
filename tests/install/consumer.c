/* A program built against an installed tagg, through find_package(tagg) or
 * pkg-config: it parses a configuration with the installed library. */
#include <stdio.h>
#include <string.h>

#include "config.h"

int main(void)
{
    tagg_config_t cfg;
    char          err[256], out[256];
    if (tagg_config_build(&cfg, NULL, "verbose=1", err, sizeof err) < 0) {
        fprintf(stderr, "consumer: %s\n", err);
        return 1;
    }
    tagg_config_format(&cfg, out, sizeof out);
    tagg_config_clear(&cfg);
    printf("consumer: %s\n", out);
    return strstr(out, "verbose=1") ? 0 : 1;
}
