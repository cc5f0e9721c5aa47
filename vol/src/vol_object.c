/* tagg VOL connector: generic object callbacks (H5O*), passed to the connector underneath. */
#include "vol_internal.h"

void *tagg_vol_object_open(void *obj, const H5VL_loc_params_t *loc_params, H5I_type_t *opened_type,
                           hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLobject_open(o->under, loc_params, o->under_id, opened_type, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

herr_t tagg_vol_object_copy(void *src_obj, const H5VL_loc_params_t *src_loc_params, const char *src_name,
                            void *dst_obj, const H5VL_loc_params_t *dst_loc_params, const char *dst_name,
                            hid_t ocpypl_id, hid_t lcpl_id, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *src = src_obj;
    herr_t ret = H5VLobject_copy(src->under, src_loc_params, src_name, tagg_vol_under(dst_obj), dst_loc_params,
                                 dst_name, src->under_id, ocpypl_id, lcpl_id, dxpl_id, req);
    return tagg_vol_req(ret, src->under_id, req);
}

/* H5VL_OBJECT_GET_FILE returns the innermost file object; HDF5 wraps it again
 * through our wrap callbacks, so nothing to do here. */
herr_t tagg_vol_object_get(void *obj, const H5VL_loc_params_t *loc_params, H5VL_object_get_args_t *args,
                           hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLobject_get(o->under, loc_params, o->under_id, args, dxpl_id, req), o->under_id,
                        req);
}

/* A refresh may close and reopen the object: keep the connector id aside. */
herr_t tagg_vol_object_specific(void *obj, const H5VL_loc_params_t *loc_params,
                                H5VL_object_specific_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o        = obj;
    hid_t           under_id = o->under_id;
    return tagg_vol_req(H5VLobject_specific(o->under, loc_params, under_id, args, dxpl_id, req), under_id, req);
}

herr_t tagg_vol_object_optional(void *obj, const H5VL_loc_params_t *loc_params, H5VL_optional_args_t *args,
                                hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLobject_optional(o->under, loc_params, o->under_id, args, dxpl_id, req), o->under_id,
                        req);
}
