/* tagg-codec: measures the stripe codecs on data shaped like the seeds'
 * kernels, to choose the codec by measurement (issue 15).
 *   tagg-codec [--stripe BYTES] [--reps N]
 * Prints, per data kind and codec setting: stored/logical ratio, compression
 * and decompression throughput of one thread (MB/s of logical bytes, median
 * of the repetitions), and checks every round trip byte for byte. */
#include "codec.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t stripe = 4u << 20;
    int    reps   = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stripe") == 0 && i + 1 < argc)
            stripe = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: tagg-codec [--stripe BYTES] [--reps N]\n");
            return 2;
        }
    }
    if (stripe < 4096 || reps < 1 || reps > 99) {
        fprintf(stderr, "tagg-codec: --stripe >= 4096, --reps 1..99\n");
        return 2;
    }
    const char *kinds[] = {"hacc", "s3d", "random"};
    struct {
        const char    *codec;
        tagg_shuffle_t sh;
        size_t         ts;
        int            level;
    } set[] = {
        {"lz4", TAGG_SHUFFLE_NONE, 1, 1},       {"zstd", TAGG_SHUFFLE_NONE, 1, 1},
        {"zstd", TAGG_SHUFFLE_NONE, 1, 3},      {"blosc-lz4", TAGG_SHUFFLE_BYTE, 4, 5},
        {"blosc-lz4", TAGG_SHUFFLE_BYTE, 8, 5}, {"blosc-lz4", TAGG_SHUFFLE_BIT, 4, 5},
        {"blosc-zstd", TAGG_SHUFFLE_BYTE, 4, 1}, {"blosc-zstd", TAGG_SHUFFLE_BYTE, 8, 1},
        {"blosc-zstd", TAGG_SHUFFLE_BIT, 4, 1},
    };
    unsigned char *src = malloc(stripe), *back = malloc(stripe);
    int            bad = 0;
    printf("%-7s %-11s %-7s %2s %5s %8s %10s %10s\n", "data", "codec", "shuffle", "ts", "level", "ratio", "comp MB/s",
           "decomp MB/s");
    for (size_t k = 0; k < 3; k++) {
        tagg_data_fill(kinds[k], src, stripe, 1);
        for (size_t s = 0; s < sizeof set / sizeof set[0]; s++) {
            const tagg_codec_t *c = tagg_codec_find(set[s].codec);
            tagg_codec_opts_t   o;
            tagg_codec_opts_default(&o);
            o.shuffle = set[s].sh, o.typesize = set[s].ts, o.level = set[s].level;
            size_t         cap = c->bound(stripe), stored = 0;
            unsigned char *dst = malloc(cap);
            double         tc[99], td[99];
            char           err[256];
            for (int r = 0; r < reps; r++) {
                double t0 = now();
                if (c->encode(&o, src, stripe, dst, cap, &stored, err, sizeof err) < 0) {
                    fprintf(stderr, "%s\n", err), bad = 1;
                    break;
                }
                double t1 = now();
                if (c->decode(dst, stored, back, stripe, err, sizeof err) < 0 || memcmp(src, back, stripe)) {
                    fprintf(stderr, "%s: round trip differs\n", c->name), bad = 1;
                    break;
                }
                tc[r] = t1 - t0, td[r] = now() - t1;
            }
            qsort(tc, (size_t)reps, sizeof *tc, cmpd), qsort(td, (size_t)reps, sizeof *td, cmpd);
            printf("%-7s %-11s %-7s %2zu %5d %8.3f %10.0f %10.0f\n", kinds[k], c->name,
                   o.shuffle == TAGG_SHUFFLE_BIT ? "bit" : o.shuffle == TAGG_SHUFFLE_BYTE ? "byte" : "none",
                   strncmp(c->name, "blosc", 5) ? (size_t)0 : o.typesize, o.level, (double)stored / (double)stripe,
                   stripe / tc[reps / 2] / 1e6, stripe / td[reps / 2] / 1e6);
            free(dst);
        }
    }
    free(src), free(back);
    return bad;
}
