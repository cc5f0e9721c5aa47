/* tagg VOL connector: file callbacks.
 *
 * The one place where the connector does more than pass through: a file
 * created or opened with the MPI-IO driver is redirected to the tagg VFD, so
 * that applications that call H5Pset_fapl_mpio themselves (h5bench, IOR,
 * netCDF, h5py driver='mpio') reach the aggregation layer unchanged. Every
 * other driver (sec2, core, stdio, family, subfiling, ...) passes untouched. */
#include "vol_internal.h"

#include "io.h"

#include <H5VLnative.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdlib.h>

/* On fapl_id (our private copy), replaces the MPI-IO driver by the tagg VFD
 * configured with cfg, keeping the application's communicator and MPI info.
 * Sets *redirected. Does nothing for other drivers. Returns 0 or -1 (error pushed). */
static herr_t redirect_mpio(hid_t fapl_id, const char *cfg, bool *redirected)
{
    *redirected = false;
    hid_t driver = H5Pget_driver(fapl_id); /* not to be closed */
    if (driver < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot read the driver of the file-access list");
        return -1;
    }
    if (driver != H5FD_MPIO)
        return 0;

    /* The communicator and info stay on the list: HDF5 1.14 keeps them in the
     * file-access list's MPI parameters, not in the MPI-IO driver's own info,
     * and changing the driver leaves them. (Reading and setting them again
     * would cost two MPI_Comm_dup, each a collective.) HDF5 functions below
     * clear the error stack on entry; note what failed and push our message
     * once everything is released. */
    const char        *failed = NULL;
    H5F_close_degree_t degree = H5F_CLOSE_DEFAULT; /* MPI-IO's default is semi: keep it */
    tagg_vol_quiet_t   quiet;
    tagg_vol_quiet_begin(&quiet);
    if (H5Pset_driver_by_name(fapl_id, TAGG_VOL_VFD_NAME, cfg) < 0)
        failed = "vfd";
    else if (H5Pget_fclose_degree(fapl_id, &degree) < 0 ||
             (degree == H5F_CLOSE_DEFAULT && H5Pset_fclose_degree(fapl_id, H5F_CLOSE_SEMI) < 0))
        failed = "degree";
    tagg_vol_quiet_end(&quiet);

    if (failed && failed[0] == 'v') {
        const char *path = getenv("HDF5_PLUGIN_PATH");
        TAGG_VOL_ERR(TAGG_VOL_E_VFD,
                     "cannot load the tagg VFD (H5Pset_driver_by_name(\"%s\", \"%s\") failed) for an MPI-IO "
                     "file; check HDF5_PLUGIN_PATH (now %s) names the directory holding the tagg plugins",
                     TAGG_VOL_VFD_NAME, cfg, path ? path : "unset");
        return -1;
    }
    if (failed) {
        TAGG_VOL_ERR(TAGG_VOL_E_VFD, "cannot set the close degree of a file redirected to the tagg VFD");
        return -1;
    }
    *redirected = true;
    return 0;
}

/* The file-access list for the connector underneath: a copy of fapl_id with
 * that connector set and, for MPI-IO, the tagg VFD. *info_out receives our
 * info (the caller frees it), *redirected whether MPI-IO was replaced.
 * H5I_INVALID_HID with an error pushed on failure. */
static hid_t file_fapl(hid_t fapl_id, tagg_vol_info_t **info_out, bool *redirected_out)
{
    tagg_vol_info_t *info = tagg_vol_info_from_fapl(fapl_id);
    if (!info)
        return H5I_INVALID_HID;
    hid_t under_fapl = tagg_vol_under_fapl(fapl_id, info);
    bool  redirected = false;
    if (under_fapl >= 0 && redirect_mpio(under_fapl, info->cfg, &redirected) < 0) {
        hid_t saved = tagg_vol_stack_save();
        H5Pclose(under_fapl);
        tagg_vol_stack_restore(saved);
        under_fapl = H5I_INVALID_HID;
    }
    if (under_fapl < 0) {
        tagg_vol_info_free(info);
        return H5I_INVALID_HID;
    }
    *info_out = info;
    if (redirected_out)
        *redirected_out = redirected;
    return under_fapl;
}

/* Releases what file_fapl returned, keeping the error stack. */
static void file_fapl_release(hid_t under_fapl, tagg_vol_info_t *info)
{
    hid_t saved = tagg_vol_stack_save();
    H5Pclose(under_fapl);
    tagg_vol_stack_restore(saved);
    tagg_vol_info_free(info);
}

void *tagg_vol_file_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id,
                           void **req)
{
    tagg_vol_info_t *info       = NULL;
    bool             redirected = false;
    hid_t            under_fapl = file_fapl(fapl_id, &info, &redirected);
    if (under_fapl < 0)
        return NULL;
    void           *under = H5VLfile_create(name, flags, fcpl_id, under_fapl, dxpl_id, req);
    tagg_vol_obj_t *file  = tagg_vol_wrap_result(under, info->under_id, req);
    if (file)
        file->redirected = redirected;
    file_fapl_release(under_fapl, info);
    return file;
}

void *tagg_vol_file_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req)
{
    tagg_vol_info_t *info       = NULL;
    bool             redirected = false;
    hid_t            under_fapl = file_fapl(fapl_id, &info, &redirected);
    if (under_fapl < 0)
        return NULL;
    void           *under = H5VLfile_open(name, flags, under_fapl, dxpl_id, req);
    tagg_vol_obj_t *file  = tagg_vol_wrap_result(under, info->under_id, req);
    if (file)
        file->redirected = redirected;
    file_fapl_release(under_fapl, info);
    return file;
}

/* The tagg file under a redirected file (the tagg VFD's handle), NULL with an
 * error pushed when it cannot be had. */
static tagg_file_t *redirected_tagg_file(tagg_vol_obj_t *o, hid_t dxpl_id)
{
    void                            *handle = NULL;
    H5VL_native_file_optional_args_t nargs;
    H5VL_optional_args_t             args;
    nargs.get_vfd_handle.fapl_id     = H5P_FILE_ACCESS_DEFAULT;
    nargs.get_vfd_handle.file_handle = &handle;
    args.op_type                     = H5VL_NATIVE_FILE_GET_VFD_HANDLE;
    args.args                        = &nargs;
    if (H5VLfile_optional(o->under, o->under_id, &args, dxpl_id, NULL) < 0 || !handle) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot reach the tagg VFD of a redirected MPI-IO file");
        return NULL;
    }
    return handle;
}

/* H5Fget_access_plist on a redirected file: the list the connector underneath
 * describes (cache, alignment, library bounds... as the file has them), with
 * the driver the application chose, MPI-IO on the file's communicator and
 * info, so H5Pget_driver says H5FD_MPIO and H5Pget_fapl_mpio works (h5py's
 * File.driver reads 'mpio'). Reopening with that list goes through this
 * connector again and is redirected again. */
static herr_t fapl_as_mpio(tagg_vol_obj_t *o, hid_t fapl_id, hid_t dxpl_id)
{
    tagg_file_t *tf = redirected_tagg_file(o, dxpl_id);
    if (!tf)
        return -1;
    tagg_vol_quiet_t quiet;
    tagg_vol_quiet_begin(&quiet);
    herr_t rc = H5Pset_fapl_mpio(fapl_id, tf->comm, tf->info);
    tagg_vol_quiet_end(&quiet);
    if (rc < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot describe a redirected file's access list as MPI-IO");
        return -1;
    }
    return 0;
}

herr_t tagg_vol_file_get(void *file, H5VL_file_get_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o   = file;
    herr_t          ret = H5VLfile_get(o->under, o->under_id, args, dxpl_id, req);
    ret                 = tagg_vol_req(ret, o->under_id, req);
    if (ret >= 0 && o->redirected && args->op_type == H5VL_FILE_GET_FAPL && !(req && *req) &&
        fapl_as_mpio(o, args->args.get_fapl.fapl_id, dxpl_id) < 0) {
        hid_t saved = tagg_vol_stack_save();
        H5Pclose(args->args.get_fapl.fapl_id);
        tagg_vol_stack_restore(saved);
        args->args.get_fapl.fapl_id = H5I_INVALID_HID;
        return -1;
    }
    return ret;
}

/* is_accessible and delete come without an object, with a file-access list
 * naming us: they go down with the connector underneath set on a copy, and an
 * MPI-IO driver on it redirected to the tagg VFD like an open: a subfiled file
 * is then recognised (H5Fis_accessible, h5py.is_hdf5, netCDF) and removed with
 * all its parts (H5Fdelete). The other operations act on an open file. */
herr_t tagg_vol_file_specific(void *file, H5VL_file_specific_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = file;

    if (args->op_type == H5VL_FILE_IS_ACCESSIBLE || args->op_type == H5VL_FILE_DELETE) {
        H5VL_file_specific_args_t down  = *args;
        hid_t                    *fapl  = args->op_type == H5VL_FILE_DELETE ? &down.args.del.fapl_id
                                                                            : &down.args.is_accessible.fapl_id;
        tagg_vol_info_t          *info  = tagg_vol_info_from_fapl(*fapl);
        if (!info)
            return -1;
        hid_t under_fapl = tagg_vol_under_fapl(*fapl, info);
        bool  redirected = false;
        if (under_fapl >= 0 && redirect_mpio(under_fapl, info->cfg, &redirected) < 0) {
            hid_t saved = tagg_vol_stack_save();
            H5Pclose(under_fapl);
            tagg_vol_stack_restore(saved);
            under_fapl = H5I_INVALID_HID;
        }
        if (under_fapl < 0) {
            tagg_vol_info_free(info);
            return -1;
        }
        *fapl      = under_fapl;
        herr_t ret = H5VLfile_specific(NULL, info->under_id, &down, dxpl_id, req);
        ret        = tagg_vol_req(ret, info->under_id, req);
        file_fapl_release(under_fapl, info);
        return ret;
    }

    hid_t  under_id = o->under_id;
    herr_t ret      = H5VLfile_specific(o->under, under_id, args, dxpl_id, req);
    ret             = tagg_vol_req(ret, under_id, req);
    /* A reopened file is a new object of the connector underneath: wrap it. */
    if (ret >= 0 && args->op_type == H5VL_FILE_REOPEN && *args->args.reopen.file) {
        tagg_vol_obj_t *wrapped = tagg_vol_obj_new(*args->args.reopen.file, under_id);
        if (!wrapped)
            return -1;
        wrapped->redirected     = o->redirected;
        *args->args.reopen.file = wrapped;
    }
    return ret;
}

/* MPI atomicity of a redirected file (H5Fset/get_mpi_atomicity, h5py's
 * File.atomic): HDF5's own code would call MPI_File_set_atomicity on the MPI-IO
 * driver's handle, which a tagg file does not have; tagg implements the mode
 * itself (tagg_file_set_atomic in core/src/io.h). Collective like the MPI call:
 * staged writes land and every rank switches before any returns. */
static herr_t redirected_atomicity(tagg_vol_obj_t *o, H5VL_optional_args_t *args, hid_t dxpl_id)
{
    H5VL_native_file_optional_args_t *nargs = args->args;
    tagg_file_t                      *tf    = redirected_tagg_file(o, dxpl_id);
    if (!tf)
        return -1;
    if (args->op_type == H5VL_NATIVE_FILE_GET_MPI_ATOMICITY) {
        *nargs->get_mpi_atomicity.flag = tf->atomic != 0;
        return 0;
    }
    if (tf->size > 1 && MPI_Barrier(tf->comm) != MPI_SUCCESS) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "MPI_Barrier failed while setting MPI atomicity");
        return -1;
    }
    tagg_file_set_atomic(tf, nargs->set_mpi_atomicity.flag);
    return 0;
}

herr_t tagg_vol_file_optional(void *file, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = file;
    if (o->redirected &&
        (args->op_type == H5VL_NATIVE_FILE_SET_MPI_ATOMICITY || args->op_type == H5VL_NATIVE_FILE_GET_MPI_ATOMICITY))
        return redirected_atomicity(o, args, dxpl_id);
    return tagg_vol_req(H5VLfile_optional(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_file_close(void *file, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o   = file;
    herr_t          ret = tagg_vol_req(H5VLfile_close(o->under, o->under_id, dxpl_id, req), o->under_id, req);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}
