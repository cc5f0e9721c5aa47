/* tagg VOL connector: committed-datatype callbacks, passed to the connector underneath. */
#include "vol_internal.h"

void *tagg_vol_datatype_commit(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t type_id,
                               hid_t lcpl_id, hid_t tcpl_id, hid_t tapl_id, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLdatatype_commit(o->under, loc_params, o->under_id, name, type_id, lcpl_id,
                                                tcpl_id, tapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

void *tagg_vol_datatype_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t tapl_id,
                             hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLdatatype_open(o->under, loc_params, o->under_id, name, tapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

herr_t tagg_vol_datatype_get(void *dt, H5VL_datatype_get_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = dt;
    return tagg_vol_req(H5VLdatatype_get(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

/* A refresh may close and reopen the object: keep the connector id aside. */
herr_t tagg_vol_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o        = obj;
    hid_t           under_id = o->under_id;
    return tagg_vol_req(H5VLdatatype_specific(o->under, under_id, args, dxpl_id, req), under_id, req);
}

herr_t tagg_vol_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLdatatype_optional(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_datatype_close(void *dt, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o   = dt;
    herr_t          ret = tagg_vol_req(H5VLdatatype_close(o->under, o->under_id, dxpl_id, req), o->under_id, req);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}
