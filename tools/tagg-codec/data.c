#include "data.h"

#include <math.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
static double unif(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }
static double gauss(uint64_t *s)
{
    double u = unif(s) + 1e-300, v = unif(s);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* SoA: the buffer holds consecutive variable arrays for np particles each,
 * with np chosen so that the 38 bytes of a particle fill it. */
static void hacc(unsigned char *b, size_t n, uint64_t seed)
{
    size_t   np = n / 38, off = 0;
    uint64_t s  = seed * 2654435761u + 1;
    enum { HALOS = 2000 };
    static float hc[HALOS][7]; /* centre xyz, radius, bulk v xyz */
    for (int h = 0; h < HALOS; h++) {
        for (int d = 0; d < 3; d++)
            hc[h][d] = (float)(unif(&s) * 256);
        hc[h][3] = (float)(0.5 + 2.5 * unif(&s));
        for (int d = 4; d < 7; d++)
            hc[h][d] = (float)(300 * gauss(&s));
    }
    float *pos = (float *)(b), *vel = pos + 3 * np, *phi = vel + 3 * np;
    for (size_t i = 0; i < np; i++) {
        int    h = (int)(next(&s) % HALOS), in = unif(&s) < 0.7;
        double p[3];
        for (int d = 0; d < 3; d++) {
            p[d] = in ? fmod(hc[h][d] + hc[h][3] * gauss(&s) + 256, 256) : unif(&s) * 256;
            pos[d * np + i] = (float)p[d];
            vel[d * np + i] = (float)((in ? hc[h][4 + d] : 0) + 100 * gauss(&s));
        }
        phi[i] = (float)(-1e4 * (1 + sin(p[0] / 40) * cos(p[1] / 40) * sin(p[2] / 40)));
    }
    off = 7 * np * sizeof(float);
    for (size_t i = 0; i < np; i++) {
        int64_t id = (int64_t)(seed * np + i);
        memcpy(b + off + 8 * i, &id, 8);
    }
    off += 8 * np;
    memset(b + off, 0, n - off); /* mask (uint16, 0) and the tail */
}

static void s3d(unsigned char *b, size_t n, uint64_t seed)
{
    size_t   cells = n / (11 * 8), side = (size_t)cbrt((double)cells) + 1;
    uint64_t s     = seed + 7;
    double  *v     = (double *)b;
    for (size_t c = 0; c < cells; c++) {
        double x = (double)(c % side) / side, y = (double)(c / side % side) / side, z = (double)(c / side / side) / side;
        for (int k = 0; k < 11; k++) {
            double f = 1.0 + 0.3 * sin(6.28 * (x + 0.1 * k)) * cos(6.28 * y * (1 + 0.05 * k)) + 0.2 * sin(12.5 * z + k);
            v[c * 11 + k] = f * (1 + 1e-6 * gauss(&s)) * (k < 5 ? 1.0 : 300.0 * k);
        }
    }
    memset(b + cells * 88, 0, n - cells * 88);
}

static void rnd(unsigned char *b, size_t n, uint64_t seed)
{
    uint64_t s = seed | 1;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t r = next(&s);
        memcpy(b + i, &r, 8);
    }
    for (size_t i = n & ~(size_t)7; i < n; i++)
        b[i] = (unsigned char)next(&s);
}

int tagg_data_fill(const char *kind, void *buf, size_t n, uint64_t seed)
{
    if (strcmp(kind, "hacc") == 0)
        hacc(buf, n, seed);
    else if (strcmp(kind, "s3d") == 0)
        s3d(buf, n, seed);
    else if (strcmp(kind, "random") == 0)
        rnd(buf, n, seed);
    else
        return -1;
    return 0;
}
