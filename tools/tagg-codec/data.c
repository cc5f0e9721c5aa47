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

/* HACC-like particles, SoA: the buffer holds consecutive variable arrays
 * (x y z vx vy vz phi as float32, id int64, mask uint16) for np particles,
 * np chosen so that the 38 bytes of a particle fill it. As in HACC, the rank
 * (seed) owns one cube of the simulation box (side 64 of a 256 box, 4 x 4 x 4
 * ranks, wrapping) and its particles lie in it; 70 % belong to halos (a
 * centre, a radius of 0.5-3, a bulk velocity), 30 % are spread uniformly, and
 * the particles are stored halo by halo, as a tree or friends-of-friends
 * ordering leaves them in memory. Velocities are a halo's bulk motion plus a
 * 100 km/s Gaussian dispersion, phi a smooth function of position, ids
 * sequential per rank, mask zero. The low mantissa bits of positions and
 * velocities are as random as a simulation's. */
static void hacc(unsigned char *b, size_t n, uint64_t seed)
{
    size_t   np = n / 38, off = 0;
    uint64_t s  = seed * 2654435761u + 1;
    enum { HALOS = 200 };
    static float hc[HALOS][7]; /* centre xyz, radius, bulk v xyz */
    double       org[3] = {(double)(seed % 4) * 64, (double)(seed / 4 % 4) * 64, (double)(seed / 16 % 4) * 64};
    for (int h = 0; h < HALOS; h++) {
        for (int d = 0; d < 3; d++)
            hc[h][d] = (float)(org[d] + 4 + unif(&s) * 56);
        hc[h][3] = (float)(0.5 + 2.5 * unif(&s));
        for (int d = 4; d < 7; d++)
            hc[h][d] = (float)(300 * gauss(&s));
    }
    float *pos = (float *)(b), *vel = pos + 3 * np, *phi = vel + 3 * np;
    size_t nin = np * 7 / 10;
    for (size_t i = 0; i < np; i++) {
        int    in = i < nin, h = in ? (int)(i * HALOS / (nin ? nin : 1)) : 0;
        double p[3];
        for (int d = 0; d < 3; d++) {
            p[d] = in ? hc[h][d] + hc[h][3] * gauss(&s) : org[d] + unif(&s) * 64;
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

/* S3D-like smooth fields: 11 float64 variables (5 of order 1, 6 of order
 * 300 k), each one array of its own over the rank's cells (S3D's Fortran
 * arrays have the variable index slowest), a smooth function of position
 * times (1 + 1e-6 noise): a solver's low-order bits are not smooth. */
static void s3d(unsigned char *b, size_t n, uint64_t seed)
{
    size_t   cells = n / (11 * 8), side = (size_t)cbrt((double)cells) + 1;
    uint64_t s     = seed + 7;
    double  *v     = (double *)b;
    for (int k = 0; k < 11; k++)
        for (size_t c = 0; c < cells; c++) {
            double x = (double)(c % side) / side, y = (double)(c / side % side) / side, z = (double)(c / side / side) / side;
            double f = 1.0 + 0.3 * sin(6.28 * (x + 0.1 * k)) * cos(6.28 * y * (1 + 0.05 * k)) + 0.2 * sin(12.5 * z + k);
            v[(size_t)k * cells + c] = f * (1 + 1e-6 * gauss(&s)) * (k < 5 ? 1.0 : 300.0 * k);
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
