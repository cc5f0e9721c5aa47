/* tagg VOL connector: introspection, asynchronous requests, blobs, tokens and
 * the catch-all optional callback, passed to the connector underneath. */
#include "vol_internal.h"

/* ---- introspection ------------------------------------------------------- */

/* "Current" is us; "terminal" is asked down the stack. */
herr_t tagg_vol_introspect_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **conn_cls)
{
    tagg_vol_obj_t *o = obj;
    if (lvl == H5VL_GET_CONN_LVL_CURR) {
        *conn_cls = &tagg_vol_class;
        return 0;
    }
    return H5VLintrospect_get_conn_cls(o->under, o->under_id, lvl, conn_cls);
}

/* We add no capability and remove none: those of the connector underneath. */
herr_t tagg_vol_introspect_get_cap_flags(const void *info_in, uint64_t *cap_flags)
{
    const tagg_vol_info_t *info = info_in;
    if (!info) {
        /* HDF5_VOL_CONNECTOR="tagg" without info: native underneath. */
        return H5VLintrospect_get_cap_flags(NULL, H5VL_NATIVE, cap_flags);
    }
    herr_t ret = H5VLintrospect_get_cap_flags(info->under_info, info->under_id, cap_flags);
    if (ret >= 0)
        *cap_flags |= tagg_vol_class.cap_flags;
    return ret;
}

herr_t tagg_vol_introspect_opt_query(void *obj, H5VL_subclass_t cls, int opt_type, uint64_t *flags)
{
    tagg_vol_obj_t *o = obj;
    return H5VLintrospect_opt_query(o->under, o->under_id, cls, opt_type, flags);
}

/* ---- requests -------------------------------------------------------------
 * A request is wrapped like any object. Once it has completed, been cancelled
 * or been given a notify callback, the connector underneath is done with it
 * and our wrapper goes too. */

herr_t tagg_vol_request_wait(void *req, uint64_t timeout, H5VL_request_status_t *status)
{
    tagg_vol_obj_t *o   = req;
    herr_t          ret = H5VLrequest_wait(o->under, o->under_id, timeout, status);
    if (ret >= 0 && *status != H5VL_REQUEST_STATUS_IN_PROGRESS)
        tagg_vol_obj_free(o);
    return ret;
}

herr_t tagg_vol_request_notify(void *req, H5VL_request_notify_t cb, void *ctx)
{
    tagg_vol_obj_t *o   = req;
    herr_t          ret = H5VLrequest_notify(o->under, o->under_id, cb, ctx);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}

herr_t tagg_vol_request_cancel(void *req, H5VL_request_status_t *status)
{
    tagg_vol_obj_t *o   = req;
    herr_t          ret = H5VLrequest_cancel(o->under, o->under_id, status);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}

herr_t tagg_vol_request_specific(void *req, H5VL_request_specific_args_t *args)
{
    tagg_vol_obj_t *o = req;
    return H5VLrequest_specific(o->under, o->under_id, args);
}

herr_t tagg_vol_request_optional(void *req, H5VL_optional_args_t *args)
{
    tagg_vol_obj_t *o = req;
    return H5VLrequest_optional(o->under, o->under_id, args);
}

herr_t tagg_vol_request_free(void *req)
{
    tagg_vol_obj_t *o   = req;
    herr_t          ret = H5VLrequest_free(o->under, o->under_id);
    if (ret >= 0)
        tagg_vol_obj_free(o);
    return ret;
}

/* ---- blobs --------------------------------------------------------------- */

herr_t tagg_vol_blob_put(void *obj, const void *buf, size_t size, void *blob_id, void *ctx)
{
    tagg_vol_obj_t *o = obj;
    return H5VLblob_put(o->under, o->under_id, buf, size, blob_id, ctx);
}

herr_t tagg_vol_blob_get(void *obj, const void *blob_id, void *buf, size_t size, void *ctx)
{
    tagg_vol_obj_t *o = obj;
    return H5VLblob_get(o->under, o->under_id, blob_id, buf, size, ctx);
}

herr_t tagg_vol_blob_specific(void *obj, void *blob_id, H5VL_blob_specific_args_t *args)
{
    tagg_vol_obj_t *o = obj;
    return H5VLblob_specific(o->under, o->under_id, blob_id, args);
}

herr_t tagg_vol_blob_optional(void *obj, void *blob_id, H5VL_optional_args_t *args)
{
    tagg_vol_obj_t *o = obj;
    return H5VLblob_optional(o->under, o->under_id, blob_id, args);
}

/* ---- tokens -------------------------------------------------------------- */

herr_t tagg_vol_token_cmp(void *obj, const H5O_token_t *token1, const H5O_token_t *token2, int *cmp_value)
{
    tagg_vol_obj_t *o = obj;
    return H5VLtoken_cmp(o->under, o->under_id, token1, token2, cmp_value);
}

herr_t tagg_vol_token_to_str(void *obj, H5I_type_t obj_type, const H5O_token_t *token, char **token_str)
{
    tagg_vol_obj_t *o = obj;
    return H5VLtoken_to_str(o->under, obj_type, o->under_id, token, token_str);
}

herr_t tagg_vol_token_from_str(void *obj, H5I_type_t obj_type, const char *token_str, H5O_token_t *token)
{
    tagg_vol_obj_t *o = obj;
    return H5VLtoken_from_str(o->under, obj_type, o->under_id, token_str, token);
}

/* ---- catch-all ----------------------------------------------------------- */

herr_t tagg_vol_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    tagg_vol_obj_t *o = obj;
    return tagg_vol_req(H5VLoptional(o->under, o->under_id, args, dxpl_id, req), o->under_id, req);
}
