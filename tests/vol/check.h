/* Minimal checks for the VOL test programs: report file:line and fail. */
#ifndef TAGG_TEST_VOL_CHECK_H
#define TAGG_TEST_VOL_CHECK_H

#include <stdio.h>
#include <stdlib.h>

extern int check_failures;

#define CHECK(cond)                                                                                      \
    do {                                                                                                 \
        if (!(cond)) {                                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
            check_failures++;                                                                            \
        }                                                                                                \
    } while (0)

/* For steps the rest of the test depends on. */
#define REQUIRE(cond)                                                                                    \
    do {                                                                                                 \
        if (!(cond)) {                                                                                   \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);                   \
            exit(EXIT_FAILURE);                                                                          \
        }                                                                                                \
    } while (0)

#endif
