/* Waiting for an MPI request without holding a core (mpi_wait.c). */
#ifndef TAGG_MPI_WAIT_H
#define TAGG_MPI_WAIT_H

#include <mpi.h>

/* MPI_Wait's contract (the request completes, *st if not MPI_STATUS_IGNORE),
 * but a long wait gives the core away: MPI_Test in a loop, spinning for the
 * first microseconds, then yielding the processor between tests, then
 * sleeping briefly. Returns an MPI error code. */
int tagg_mpi_wait(MPI_Request *req, MPI_Status *st);

/* MPI_Allreduce through MPI_Iallreduce + tagg_mpi_wait. */
int tagg_mpi_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

/* The same for MPI_Allgather, MPI_Alltoall, MPI_Alltoallv, MPI_Bcast,
 * MPI_Barrier, MPI_Gather, MPI_Gatherv and MPI_Reduce. */
int tagg_mpi_allgather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, MPI_Comm comm);
int tagg_mpi_alltoall(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, MPI_Comm comm);
int tagg_mpi_alltoallv(const void *in, const int *sc, const int *sd, MPI_Datatype t, void *out, const int *rc,
                       const int *rd, MPI_Datatype u, MPI_Comm comm);
int tagg_mpi_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm);
int tagg_mpi_barrier(MPI_Comm comm);
/* MPI_Bcast of a large buffer: the same without the sleeping phase (both
 * sides take part in moving it; mpi_wait.c). */
int tagg_mpi_bcast_bulk(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm);
int tagg_mpi_gather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, int root, MPI_Comm comm);
int tagg_mpi_gatherv(const void *in, int n, MPI_Datatype t, void *out, const int *rc, const int *rd, MPI_Datatype u,
                     int root, MPI_Comm comm);
int tagg_mpi_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);

#endif
