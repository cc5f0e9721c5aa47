#include "h5ctx.h"

#include <hdf5.h>

/* Declared weak, with the signatures of HDF5 1.14's H5CXprivate.h: the plugin
 * links libhdf5, so they resolve there when the library exports them and are
 * NULL otherwise (a plugin loaded into an application whose HDF5 lacks them). */
extern herr_t H5CX_get_io_xfer_mode(H5FD_mpio_xfer_t *mode) __attribute__((weak));
extern herr_t H5CX_get_mpi_coll_datatypes(MPI_Datatype *btype, MPI_Datatype *ftype) __attribute__((weak));

bool tagg_h5ctx_available(void)
{
    return H5CX_get_io_xfer_mode != NULL && H5CX_get_mpi_coll_datatypes != NULL;
}

bool tagg_h5ctx_collective(void)
{
    H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
    if (!tagg_h5ctx_available() || H5CX_get_io_xfer_mode(&mode) < 0)
        return false;
    return mode == H5FD_MPIO_COLLECTIVE;
}

bool tagg_h5ctx_coll_types(MPI_Datatype *buf_type, MPI_Datatype *file_type)
{
    if (!tagg_h5ctx_available())
        return false;
    return H5CX_get_mpi_coll_datatypes(buf_type, file_type) >= 0;
}
