/* Waiting for an MPI request without holding a core.
 *
 * MPICH (ch4:ucx) waits by polling: a rank blocked in a collective or a
 * receive keeps its core busy. Where ranks share cores with others -- more
 * ranks than cores, a file-system client or server on the node (FUSE, the
 * GlusterFS testbed), the aggregator's own I/O threads -- every poll is time
 * taken from the rank that the others are waiting for. tagg's long waits
 * (the agreement after a call or a round, while aggregators write; the
 * throttle's token) therefore test the request in three phases:
 *   - the first 20 us: MPI_Test in a loop (a fast collective costs nothing more);
 *   - up to 2 ms: MPI_Test, then sched_yield(): a runnable process on this
 *     core runs first, and with none the call returns at once;
 *   - beyond: MPI_Test, then a 50 us sleep. Such a sleep lasts 0.14-0.25 ms
 *     on the virtual machine measured (nanosleep of 1 us took 138 us), so a
 *     wait may end that much after its request completed: 0.24 ms on average
 *     on a 3 ms wait. Yielding up to 10 ms instead was measured on the
 *     GlusterFS testbed (session 22, S3D 32^3, three alternating runs of 5):
 *     writes 103-116 against 108-115 MiB/s, reads 202-221 against 201-241,
 *     no gain: there the spinning rank competes with the file system's
 *     daemons for the node's two cores.
 * Progress is made by MPI_Test itself. */
#include "mpi_wait.h"

#include <sched.h>
#include <time.h>

/* The three phases; without `nap` the last one yields as the second does. */
static int wait_phases(MPI_Request *req, MPI_Status *st, int nap)
{
    int    done = 0, code;
    double t0   = 0;
    for (unsigned long n = 0;; n++) {
        if ((code = MPI_Test(req, &done, st)) != MPI_SUCCESS || done)
            return code;
        if (n == 0) {
            t0 = MPI_Wtime();
            continue;
        }
        double waited = MPI_Wtime() - t0;
        if (waited < 20e-6)
            continue;
        if (waited < 2e-3 || !nap) {
            sched_yield();
            continue;
        }
        struct timespec ns = {0, 50000};
        nanosleep(&ns, NULL);
    }
}

int tagg_mpi_wait(MPI_Request *req, MPI_Status *st)
{
    return wait_phases(req, st, 1);
}

/* A nonblocking collective just started (its code), waited for. */
static int started(int code, MPI_Request *req)
{
    return code != MPI_SUCCESS ? code : tagg_mpi_wait(req, MPI_STATUS_IGNORE);
}

int tagg_mpi_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Iallreduce(in, out, count, type, op, comm, &req), &req);
}

int tagg_mpi_allgather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Iallgather(in, n, t, out, m, u, comm, &req), &req);
}

int tagg_mpi_alltoall(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Ialltoall(in, n, t, out, m, u, comm, &req), &req);
}

int tagg_mpi_alltoallv(const void *in, const int *sc, const int *sd, MPI_Datatype t, void *out, const int *rc,
                       const int *rd, MPI_Datatype u, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Ialltoallv(in, sc, sd, t, out, rc, rd, u, comm, &req), &req);
}

int tagg_mpi_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Ibcast(buf, n, t, root, comm, &req), &req);
}

/* A large broadcast moves in pieces (MPICH here: 512 KiB, each copied by the
 * receiver with process_vm_readv when it tests the request), so its sides
 * are busy, not waiting for others: the naps of the third phase would add
 * 0.13-0.25 ms per piece (4 MiB: the root waited 5 ms, the copy took 3.5 ms
 * where it takes about 1). Yielding still gives the core to a runnable
 * process. */
int tagg_mpi_bcast_bulk(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    MPI_Request req;
    int         code = MPI_Ibcast(buf, n, t, root, comm, &req);
    return code != MPI_SUCCESS ? code : wait_phases(&req, MPI_STATUS_IGNORE, 0);
}

int tagg_mpi_barrier(MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Ibarrier(comm, &req), &req);
}

int tagg_mpi_gather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, int root, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Igather(in, n, t, out, m, u, root, comm, &req), &req);
}

int tagg_mpi_gatherv(const void *in, int n, MPI_Datatype t, void *out, const int *rc, const int *rd, MPI_Datatype u,
                     int root, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Igatherv(in, n, t, out, rc, rd, u, root, comm, &req), &req);
}

int tagg_mpi_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    MPI_Request req;
    return started(MPI_Ireduce(in, out, count, type, op, root, comm, &req), &req);
}
