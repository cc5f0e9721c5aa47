/* tagg VOL connector: group callbacks, passed to the connector underneath. */
#include "vol_internal.h"

void *tagg_vol_group_create(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t lcpl_id,
                            hid_t gcpl_id, hid_t gapl_id, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLgroup_create(o->under, loc_params, o->under_id, name, lcpl_id, gcpl_id, gapl_id,
                                             dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

void *tagg_vol_group_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t gapl_id,
                          hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLgroup_open(o->under, loc_params, o->under_id, name, gapl_id, dxpl_id, req);
    return tagg_vol_wrap_result(under, o->under_id, req);
}

herr_t tagg_vol_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLgroup_get(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

/* Mounting hands us the child file as one of our objects: the connector
 * underneath needs its own. A refresh may replace the object: keep the id. */
herr_t tagg_vol_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t            *o        = obj;
    hid_t                      under_id = o->under_id;
    H5VL_group_specific_args_t down     = *args;
    if (args->op_type == H5VL_GROUP_MOUNT)
        down.args.mount.child_file = tagg_vol_under(args->args.mount.child_file);
    return tagg_vol_req(H5VLgroup_specific(o->under, under_id, &down, dxpl_id, req), under_id, req);
}

herr_t tagg_vol_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLgroup_optional(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_group_close(void *grp, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o   = grp;
    herr_t          ret = tagg_vol_req(H5VLgroup_close(o->under, o->under_id, dxpl_id, req), o->under_id, req);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}
