/* tagg VOL connector: attribute callbacks, passed to the connector underneath. */
#include "vol_internal.h"

void *tagg_vol_attr_create(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t type_id,
                           hid_t space_id, hid_t acpl_id, hid_t aapl_id, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLattr_create(o->under, loc_params, o->under_id, name, type_id, space_id, acpl_id,
                                            aapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

void *tagg_vol_attr_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t aapl_id,
                         hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLattr_open(o->under, loc_params, o->under_id, name, aapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

herr_t tagg_vol_attr_read(void *attr, hid_t mem_type_id, void *buf, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = attr;
    return tagg_vol_req(H5VLattr_read(o->under, o->under_id, mem_type_id, buf, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_attr_write(void *attr, hid_t mem_type_id, const void *buf, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = attr;
    return tagg_vol_req(H5VLattr_write(o->under, o->under_id, mem_type_id, buf, dxpl_id, req), o->under_id,
                        req);
}

herr_t tagg_vol_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLattr_get(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_attr_specific(void *obj, const H5VL_loc_params_t *loc_params, H5VL_attr_specific_args_t *args,
                              hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLattr_specific(o->under, loc_params, o->under_id, args, dxpl_id, req), o->under_id,
                        req);
}

herr_t tagg_vol_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLattr_optional(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_attr_close(void *attr, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o   = attr;
    herr_t          ret = tagg_vol_req(H5VLattr_close(o->under, o->under_id, dxpl_id, req), o->under_id, req);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}
