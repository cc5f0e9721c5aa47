/* Access to the transfer state that HDF5 keeps in its private API context.
 *
 * Whether a driver call is collective, and the MPI datatypes of a collective
 * transfer made with selection I/O off, live only in HDF5's API context
 * (H5CX_get_io_xfer_mode, H5CX_get_mpi_coll_datatypes), not in the dxpl the
 * driver receives. These functions are exported by libhdf5 (H5_DLL) but are not
 * public API: they are resolved at run time with dlsym, and when absent tagg
 * treats every call as independent (always correct, never collective). */
#ifndef TAGG_H5CTX_H
#define TAGG_H5CTX_H

#include <mpi.h>
#include <stdbool.h>

/* True when the current driver call is part of a collective transfer. */
bool tagg_h5ctx_collective(void);
/* For a collective plain write/read: the buffer and file MPI datatypes; returns
 * false when unavailable. */
bool tagg_h5ctx_coll_types(MPI_Datatype *buf_type, MPI_Datatype *file_type);
/* True when the context accessors were found (reported in the summary). */
bool tagg_h5ctx_available(void);

#endif
