/* tagg VOL connector: the class table, plugin entry points, initialize and
 * terminate, the error class, wrapper objects and the wrap callbacks.
 * The info callbacks live in vol_info.c, the data-model callbacks in one file
 * per HDF5 object class. */
#include "vol_internal.h"

#include <H5PLextern.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- errors -------------------------------------------------------------- */

static hid_t tagg_err_cls = H5I_INVALID_HID;               /* the "tagg" error class */
static hid_t tagg_err_maj = H5I_INVALID_HID;               /* its one major message */
static hid_t tagg_err_min[TAGG_VOL_E_COUNT_];              /* minor messages, by code */
static const char *const tagg_err_min_text[TAGG_VOL_E_COUNT_] = {
    [TAGG_VOL_E_INFO]  = "bad connector info string",
    [TAGG_VOL_E_VFD]   = "cannot install the tagg VFD",
    [TAGG_VOL_E_ARGS]  = "bad argument",
    [TAGG_VOL_E_NOMEM] = "out of memory",
    [TAGG_VOL_E_CALL]  = "HDF5 call failed",
};

herr_t tagg_vol_errors_open(void)
{
    if (tagg_err_cls >= 0)
        return 0;
    hid_t cls = H5Eregister_class("tagg", "tagg VOL connector", "0.1");
    if (cls < 0)
        return -1;
    hid_t maj = H5Ecreate_msg(cls, H5E_MAJOR, "tagg VOL connector");
    if (maj < 0) {
        H5Eunregister_class(cls);
        return -1;
    }
    for (int i = 0; i < TAGG_VOL_E_COUNT_; i++) {
        tagg_err_min[i] = H5Ecreate_msg(cls, H5E_MINOR, tagg_err_min_text[i]);
        if (tagg_err_min[i] < 0) {
            H5Eunregister_class(cls); /* also closes the messages created so far */
            return -1;
        }
    }
    tagg_err_cls = cls;
    tagg_err_maj = maj;
    return 0;
}

void tagg_vol_errors_close(void)
{
    if (tagg_err_cls < 0)
        return;
    /* Unregistering the class closes its messages too. Entries already on the
     * error stack hold their own references, so they still print; but the call
     * would clear the stack, and HDF5 terminates the connector right after a
     * failed info string: keep the stack. */
    hid_t saved = tagg_vol_stack_save();
    H5Eunregister_class(tagg_err_cls);
    tagg_vol_stack_restore(saved);
    tagg_err_cls = tagg_err_maj = H5I_INVALID_HID;
    for (int i = 0; i < TAGG_VOL_E_COUNT_; i++)
        tagg_err_min[i] = H5I_INVALID_HID;
}

void tagg_vol_error(const char *file, const char *func, unsigned line, tagg_vol_err_t code, const char *fmt, ...)
{
    char    msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    /* Registering the class clears the error stack: keep what is on it. */
    if (tagg_err_cls < 0) {
        hid_t saved = tagg_vol_stack_save();
        herr_t ok   = tagg_vol_errors_open();
        tagg_vol_stack_restore(saved);
        if (ok < 0) {
            /* No error class: fall back to the library's own one. */
            H5Epush2(H5E_DEFAULT, file, func, line, H5E_ERR_CLS, H5E_VOL, H5E_CANTINIT, "tagg VOL: %s",
                     msg);
            return;
        }
    }
    if ((int)code < 0 || (int)code >= TAGG_VOL_E_COUNT_)
        code = TAGG_VOL_E_CALL;
    H5Epush2(H5E_DEFAULT, file, func, line, tagg_err_cls, tagg_err_maj, tagg_err_min[code], "tagg VOL: %s",
             msg);
}

hid_t tagg_vol_stack_save(void)
{
    return H5Eget_current_stack();
}

void tagg_vol_stack_restore(hid_t saved)
{
    if (saved >= 0)
        H5Eset_current_stack(saved); /* also closes the saved stack's id */
}

void tagg_vol_quiet_begin(tagg_vol_quiet_t *q)
{
    q->func = NULL;
    q->data = NULL;
    q->ok   = H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) >= 0;
    if (q->ok)
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void tagg_vol_quiet_end(const tagg_vol_quiet_t *q)
{
    if (q->ok)
        H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* ---- wrapper objects ----------------------------------------------------- */

tagg_vol_obj_t *tagg_vol_obj_new(void *under, hid_t under_id)
{
    if (!under)
        return NULL;
    tagg_vol_obj_t *obj = calloc(1, sizeof *obj);
    if (!obj) {
        TAGG_VOL_ERR(TAGG_VOL_E_NOMEM, "cannot allocate an object wrapper");
        return NULL;
    }
    obj->under    = under;
    obj->under_id = under_id;
    H5Iinc_ref(under_id);
    return obj;
}

void tagg_vol_obj_free(tagg_vol_obj_t *obj)
{
    if (!obj)
        return;
    hid_t saved = tagg_vol_stack_save();
    H5Idec_ref(obj->under_id);
    tagg_vol_stack_restore(saved);
    free(obj);
}

herr_t tagg_vol_req(herr_t ret, hid_t under_id, void **req)
{
    if (req && *req) {
        tagg_vol_obj_t *wrapped = tagg_vol_obj_new(*req, under_id);
        if (!wrapped)
            return -1;
        *req = wrapped;
    }
    return ret;
}

void *tagg_vol_wrap_result(void *under, hid_t under_id, void **req)
{
    if (!under)
        return NULL;
    tagg_vol_obj_t *obj = tagg_vol_obj_new(under, under_id);
    if (!obj)
        return NULL; /* the object underneath stays open: nothing safe to do with it */
    if (tagg_vol_req(0, under_id, req) < 0) {
        tagg_vol_obj_free(obj);
        return NULL;
    }
    return obj;
}

void *tagg_vol_under(void *obj)
{
    return obj ? ((tagg_vol_obj_t *)obj)->under : NULL;
}

/* ---- wrap callbacks ------------------------------------------------------ */

void *tagg_vol_get_object(const void *obj)
{
    const tagg_vol_obj_t *o = obj;
    return H5VLget_object(o->under, o->under_id);
}

herr_t tagg_vol_get_wrap_ctx(const void *obj, void **wrap_ctx)
{
    const tagg_vol_obj_t *o   = obj;
    tagg_vol_wrap_ctx_t  *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        TAGG_VOL_ERR(TAGG_VOL_E_NOMEM, "cannot allocate a wrapping context");
        return -1;
    }
    ctx->under_id = o->under_id;
    H5Iinc_ref(ctx->under_id);
    if (H5VLget_wrap_ctx(o->under, o->under_id, &ctx->under_ctx) < 0) {
        tagg_vol_free_wrap_ctx(ctx);
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "the connector underneath gave no wrapping context");
        return -1;
    }
    *wrap_ctx = ctx;
    return 0;
}

void *tagg_vol_wrap_object(void *obj, H5I_type_t obj_type, void *wrap_ctx)
{
    tagg_vol_wrap_ctx_t *ctx   = wrap_ctx;
    void                *under = H5VLwrap_object(obj, obj_type, ctx->under_id, ctx->under_ctx);
    return tagg_vol_obj_new(under, ctx->under_id);
}

void *tagg_vol_unwrap_object(void *obj)
{
    tagg_vol_obj_t *o     = obj;
    void           *under = H5VLunwrap_object(o->under, o->under_id);
    if (under)
        tagg_vol_obj_free(o);
    return under;
}

herr_t tagg_vol_free_wrap_ctx(void *wrap_ctx)
{
    tagg_vol_wrap_ctx_t *ctx = wrap_ctx;
    if (!ctx)
        return 0;
    hid_t saved = tagg_vol_stack_save();
    if (ctx->under_ctx)
        H5VLfree_wrap_ctx(ctx->under_ctx, ctx->under_id);
    H5Idec_ref(ctx->under_id);
    tagg_vol_stack_restore(saved);
    free(ctx);
    return 0;
}

/* ---- initialize / terminate ---------------------------------------------- */

static herr_t tagg_vol_initialize(hid_t vipl_id)
{
    (void)vipl_id;
    if (tagg_vol_errors_open() < 0) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_VOL, H5E_CANTINIT,
                 "tagg VOL: cannot register the \"tagg\" error class");
        return -1;
    }
    return 0;
}

static herr_t tagg_vol_terminate(void)
{
    tagg_vol_errors_close();
    return 0;
}

/* ---- the class table ----------------------------------------------------- */

const H5VL_class_t tagg_vol_class = {
    .version      = H5VL_VERSION,     /* version of this struct's layout */
    .value        = TAGG_VOL_VALUE,   /* connector value (testing range) */
    .name         = TAGG_VOL_NAME,    /* name users give HDF5_VOL_CONNECTOR */
    .conn_version = TAGG_VOL_VERSION, /* version of the connector */
    .cap_flags    = H5VL_CAP_FLAG_NONE, /* real flags come from get_cap_flags (those underneath) */
    .initialize   = tagg_vol_initialize, /* registers the "tagg" error class */
    .terminate    = tagg_vol_terminate,  /* unregisters it */
    .info_cls =
        {
            .size     = sizeof(tagg_vol_info_t), /* size of the info struct */
            .copy     = tagg_vol_info_copy,      /* deep copy, under connector info included */
            .cmp      = tagg_vol_info_cmp,       /* under connector, its info, then config string */
            .free     = tagg_vol_info_free,      /* releases the under id, its info, the config */
            .to_str   = tagg_vol_info_to_str,    /* "under_vol=N;under_info={..}[;cfg]" */
            .from_str = tagg_vol_str_to_info,    /* parses and validates the same */
        },
    .wrap_cls =
        {
            .get_object    = tagg_vol_get_object,    /* innermost object, asked of the connector below */
            .get_wrap_ctx  = tagg_vol_get_wrap_ctx,  /* context to wrap objects HDF5 hands back */
            .wrap_object   = tagg_vol_wrap_object,   /* wraps below first, then in a tagg object */
            .unwrap_object = tagg_vol_unwrap_object, /* drops our wrapper, returns the one below */
            .free_wrap_ctx = tagg_vol_free_wrap_ctx, /* releases a wrapping context */
        },
    .attr_cls =
        {
            .create   = tagg_vol_attr_create,   /* H5Acreate* */
            .open     = tagg_vol_attr_open,     /* H5Aopen* */
            .read     = tagg_vol_attr_read,     /* H5Aread */
            .write    = tagg_vol_attr_write,    /* H5Awrite */
            .get      = tagg_vol_attr_get,      /* H5Aget_* */
            .specific = tagg_vol_attr_specific, /* delete, exists, iterate, rename */
            .optional = tagg_vol_attr_optional, /* connector-defined operations */
            .close    = tagg_vol_attr_close,    /* H5Aclose */
        },
    .dataset_cls =
        {
            .create   = tagg_vol_dataset_create,   /* H5Dcreate* */
            .open     = tagg_vol_dataset_open,     /* H5Dopen* */
            .read     = tagg_vol_dataset_read,     /* H5Dread(_multi): tagg_vol_dataset_read_hook */
            .write    = tagg_vol_dataset_write,    /* H5Dwrite(_multi): tagg_vol_dataset_write_hook */
            .get      = tagg_vol_dataset_get,      /* H5Dget_* */
            .specific = tagg_vol_dataset_specific, /* set_extent, flush, refresh */
            .optional = tagg_vol_dataset_optional, /* native extras (chunk I/O, offsets, ...) */
            .close    = tagg_vol_dataset_close,    /* H5Dclose */
        },
    .datatype_cls =
        {
            .commit   = tagg_vol_datatype_commit,   /* H5Tcommit* */
            .open     = tagg_vol_datatype_open,     /* H5Topen* */
            .get      = tagg_vol_datatype_get,      /* serialized form, tcpl */
            .specific = tagg_vol_datatype_specific, /* flush, refresh */
            .optional = tagg_vol_datatype_optional, /* connector-defined operations */
            .close    = tagg_vol_datatype_close,    /* H5Tclose of a committed type */
        },
    .file_cls =
        {
            .create   = tagg_vol_file_create,   /* H5Fcreate: MPI-IO redirected to the tagg VFD */
            .open     = tagg_vol_file_open,     /* H5Fopen: same redirect */
            .get      = tagg_vol_file_get,      /* H5Fget_* */
            .specific = tagg_vol_file_specific, /* flush, reopen, is_accessible, delete, is_equal */
            .optional = tagg_vol_file_optional, /* native extras */
            .close    = tagg_vol_file_close,    /* H5Fclose */
        },
    .group_cls =
        {
            .create   = tagg_vol_group_create,   /* H5Gcreate* */
            .open     = tagg_vol_group_open,     /* H5Gopen* */
            .get      = tagg_vol_group_get,      /* gcpl, info */
            .specific = tagg_vol_group_specific, /* mount, unmount, flush, refresh */
            .optional = tagg_vol_group_optional, /* native extras */
            .close    = tagg_vol_group_close,    /* H5Gclose */
        },
    .link_cls =
        {
            .create   = tagg_vol_link_create,   /* hard, soft, user-defined links */
            .copy     = tagg_vol_link_copy,     /* H5Lcopy */
            .move     = tagg_vol_link_move,     /* H5Lmove */
            .get      = tagg_vol_link_get,      /* info, name, value */
            .specific = tagg_vol_link_specific, /* delete, exists, iterate */
            .optional = tagg_vol_link_optional, /* connector-defined operations */
        },
    .object_cls =
        {
            .open     = tagg_vol_object_open,     /* H5Oopen* */
            .copy     = tagg_vol_object_copy,     /* H5Ocopy */
            .get      = tagg_vol_object_get,      /* file, name, type, info */
            .specific = tagg_vol_object_specific, /* refcount, exists, lookup, visit, flush, refresh */
            .optional = tagg_vol_object_optional, /* native extras (comments, ...) */
        },
    .introspect_cls =
        {
            .get_conn_cls  = tagg_vol_introspect_get_conn_cls,  /* us, or the terminal connector */
            .get_cap_flags = tagg_vol_introspect_get_cap_flags, /* those of the connector underneath */
            .opt_query     = tagg_vol_introspect_opt_query,     /* asked underneath */
        },
    .request_cls =
        {
            .wait     = tagg_vol_request_wait,     /* H5ESwait */
            .notify   = tagg_vol_request_notify,   /* completion callback */
            .cancel   = tagg_vol_request_cancel,   /* H5EScancel */
            .specific = tagg_vol_request_specific, /* error stack, execution time */
            .optional = tagg_vol_request_optional, /* connector-defined operations */
            .free     = tagg_vol_request_free,     /* release a request */
        },
    .blob_cls =
        {
            .put      = tagg_vol_blob_put,      /* store a blob (variable-length data, references) */
            .get      = tagg_vol_blob_get,      /* read it back */
            .specific = tagg_vol_blob_specific, /* delete, is-null, set-null */
            .optional = tagg_vol_blob_optional, /* connector-defined operations */
        },
    .token_cls =
        {
            .cmp      = tagg_vol_token_cmp,      /* compare object tokens */
            .to_str   = tagg_vol_token_to_str,   /* token -> string */
            .from_str = tagg_vol_token_from_str, /* string -> token */
        },
    .optional = tagg_vol_optional, /* catch-all for operations outside every class */
};

/* ---- plugin entry points ------------------------------------------------- */

H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_VOL;
}

const void *H5PLget_plugin_info(void)
{
    return &tagg_vol_class;
}
