/* tagg VOL connector: link callbacks, passed to the connector underneath.
 * Link calls may come with no object on one side (H5L_SAME_LOC): the
 * connector id is then taken from whichever side has one. */
#include "vol_internal.h"

/* Connector id of the first non-NULL of two wrapped objects. */
static hid_t under_id_of(const void *a, const void *b)
{
    if (a)
        return ((const tagg_vol_obj_t *)a)->under_id;
    if (b)
        return ((const tagg_vol_obj_t *)b)->under_id;
    TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "link operation with no object on either side");
    return H5I_INVALID_HID;
}

/* A hard link names its target as one of our objects: hand down the one underneath. */
herr_t tagg_vol_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc_params,
                            hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req)
{
    H5VL_link_create_args_t down   = *args;
    void                   *target = args->op_type == H5VL_LINK_CREATE_HARD ? args->args.hard.curr_obj : NULL;
    hid_t                   under_id = under_id_of(obj, target);
    if (under_id < 0)
        return -1;
    if (args->op_type == H5VL_LINK_CREATE_HARD)
        down.args.hard.curr_obj = tagg_vol_under(target);
    herr_t ret =
        H5VLlink_create(&down, tagg_vol_under(obj), loc_params, under_id, lcpl_id, lapl_id, dxpl_id, req);
    return tagg_vol_req(ret, under_id, req);
}

herr_t tagg_vol_link_copy(void *src_obj, const H5VL_loc_params_t *loc_params1, void *dst_obj,
                          const H5VL_loc_params_t *loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                          void **req)
{
    hid_t under_id = under_id_of(src_obj, dst_obj);
    if (under_id < 0)
        return -1;
    herr_t ret = H5VLlink_copy(tagg_vol_under(src_obj), loc_params1, tagg_vol_under(dst_obj), loc_params2,
                               under_id, lcpl_id, lapl_id, dxpl_id, req);
    return tagg_vol_req(ret, under_id, req);
}

herr_t tagg_vol_link_move(void *src_obj, const H5VL_loc_params_t *loc_params1, void *dst_obj,
                          const H5VL_loc_params_t *loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                          void **req)
{
    hid_t under_id = under_id_of(src_obj, dst_obj);
    if (under_id < 0)
        return -1;
    herr_t ret = H5VLlink_move(tagg_vol_under(src_obj), loc_params1, tagg_vol_under(dst_obj), loc_params2,
                               under_id, lcpl_id, lapl_id, dxpl_id, req);
    return tagg_vol_req(ret, under_id, req);
}

herr_t tagg_vol_link_get(void *obj, const H5VL_loc_params_t *loc_params, H5VL_link_get_args_t *args,
                         hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLlink_get(o->under, loc_params, o->under_id, args, dxpl_id, req), o->under_id, req);
}

herr_t tagg_vol_link_specific(void *obj, const H5VL_loc_params_t *loc_params, H5VL_link_specific_args_t *args,
                              hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLlink_specific(o->under, loc_params, o->under_id, args, dxpl_id, req), o->under_id,
                        req);
}

herr_t tagg_vol_link_optional(void *obj, const H5VL_loc_params_t *loc_params, H5VL_optional_args_t *args,
                              hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLlink_optional(o->under, loc_params, o->under_id, args, dxpl_id, req), o->under_id,
                        req);
}
