/* tagg VOL connector: dataset callbacks.
 *
 * H5Dwrite / H5Dread (and their _multi forms) arrive in tagg_vol_dataset_write
 * and tagg_vol_dataset_read, which unwrap the datasets and call one hook per
 * direction: tagg_vol_dataset_write_hook and tagg_vol_dataset_read_hook. */
#include "vol_internal.h"

#include <stdlib.h>

/* Fills under[] with the objects underneath the count wrapped datasets dset[]
 * and returns their connector id. All must share one connector (H5Dwrite_multi
 * may span files, never connectors). Returns H5I_INVALID_HID with an error pushed. */
static hid_t unwrap_datasets(size_t count, void *dset[], void *under[])
{
    if (count == 0 || !dset || !dset[0]) {
        TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "dataset I/O with no dataset");
        return H5I_INVALID_HID;
    }
    hid_t under_id = ((tagg_vol_obj_t *)dset[0])->under_id;
    for (size_t i = 0; i < count; i++) {
        const tagg_vol_obj_t *d = dset[i];
        if (!d || d->under_id != under_id) {
            TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "datasets of one multi-dataset I/O call sit on different connectors");
            return H5I_INVALID_HID;
        }
        under[i] = d->under;
    }
    return under_id;
}

/* Array of count object pointers: local storage for one, heap for more. */
static void **under_array(size_t count, void **local)
{
    if (count <= 1)
        return local;
    void **a = malloc(count * sizeof *a);
    if (!a)
        TAGG_VOL_ERR(TAGG_VOL_E_NOMEM, "cannot allocate %zu dataset pointers", count);
    return a;
}

/* THE WRITE HOOK. Every H5Dwrite / H5Dwrite_multi of a file opened through tagg
 * reaches this function whole, before HDF5 has chosen collective or independent
 * I/O, type conversion or selection I/O. It passes the call on unchanged, the
 * transfer mode included: the aggregation engine takes the raw data in the
 * tagg VFD underneath (tagg_io_write, core/src/io.h), where each rank's
 * selection arrives as file extents and a collective call stays collective.
 *
 * Why a collective call is never turned into an independent one here (session
 * 38, local disk, 2 ranks, h5bench's CONTIG read, 2 x 15 repetitions): the
 * same reads made independent ran at 0.96-1.07x of independent MPI-IO,
 * against 0.84-0.88x collective; but then a rank whose read fails is the only
 * one to know, and one agreement after each independent read (an allreduce of
 * the error) brought them back to 0.87-0.89x. What a collective call costs on
 * that disk is the ranks waiting for each other once per call, not the number
 * of synchronising calls; tagg keeps the agreement (every rank sees a failed
 * collective call fail). */
static herr_t tagg_vol_dataset_write_hook(size_t count, void *under[], hid_t under_id, hid_t mem_type_id[],
                                          hid_t mem_space_id[], hid_t file_space_id[], hid_t dxpl_id,
                                          const void *buf[], void **req)
{
    return H5VLdataset_write(count, under, under_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf,
                             req);
}

/* THE READ HOOK: the same for H5Dread / H5Dread_multi (tagg_io_read). */
static herr_t tagg_vol_dataset_read_hook(size_t count, void *under[], hid_t under_id, hid_t mem_type_id[],
                                         hid_t mem_space_id[], hid_t file_space_id[], hid_t dxpl_id, void *buf[],
                                         void **req)
{
    return H5VLdataset_read(count, under, under_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf,
                            req);
}

herr_t tagg_vol_dataset_write(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                              hid_t file_space_id[], hid_t dxpl_id, const void *buf[], void **req)
{
    void  *local = NULL;
    void **under = under_array(count, &local);
    if (!under)
        return -1;
    herr_t ret      = -1;
    hid_t  under_id = unwrap_datasets(count, dset, under);
    if (under_id >= 0) {
        ret = tagg_vol_dataset_write_hook(count, under, under_id, mem_type_id, mem_space_id, file_space_id,
                                          dxpl_id, buf, req);
        ret = tagg_vol_req(ret, under_id, req);
    }
    if (under != &local)
        free(under);
    return ret;
}

herr_t tagg_vol_dataset_read(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                             hid_t file_space_id[], hid_t dxpl_id, void *buf[], void **req)
{
    void  *local = NULL;
    void **under = under_array(count, &local);
    if (!under)
        return -1;
    herr_t ret      = -1;
    hid_t  under_id = unwrap_datasets(count, dset, under);
    if (under_id >= 0) {
        ret = tagg_vol_dataset_read_hook(count, under, under_id, mem_type_id, mem_space_id, file_space_id,
                                         dxpl_id, buf, req);
        ret = tagg_vol_req(ret, under_id, req);
    }
    if (under != &local)
        free(under);
    return ret;
}

void *tagg_vol_dataset_create(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t lcpl_id,
                              hid_t type_id, hid_t space_id, hid_t dcpl_id, hid_t dapl_id, hid_t dxpl_id,
                              void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLdataset_create(o->under, loc_params, o->under_id, name, lcpl_id, type_id,
                                               space_id, dcpl_id, dapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

void *tagg_vol_dataset_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t dapl_id,
                            hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLdataset_open(o->under, loc_params, o->under_id, name, dapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

herr_t tagg_vol_dataset_get(void *dset, H5VL_dataset_get_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = dset;
    return tagg_vol_req(H5VLdataset_get(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

/* A refresh may close and reopen the object: keep the connector id aside. */
herr_t tagg_vol_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o        = obj;
    hid_t           under_id = o->under_id;
    return tagg_vol_req(H5VLdataset_specific(o->under, under_id, args, dxpl_id, req), under_id, req);
}

herr_t tagg_vol_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLdataset_optional(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_dataset_close(void *dset, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o   = dset;
    herr_t          ret = tagg_vol_req(H5VLdataset_close(o->under, o->under_id, dxpl_id, req), o->under_id, req);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}
