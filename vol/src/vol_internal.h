/* tagg VOL connector: shared declarations.
 *
 * The connector sits above another VOL connector (native by default) and hands
 * every operation down to it. Each HDF5 object it returns is a tagg_vol_obj_t
 * that remembers the object of the connector underneath and that connector's id.
 * Its one piece of behaviour today: files opened or created with the MPI-IO
 * driver are redirected to the tagg VFD (vol_file.c).
 *
 * One source file per HDF5 object class; this header declares what they share
 * and the callbacks that vol.c puts into the class table.
 */
#ifndef TAGG_VOL_INTERNAL_H
#define TAGG_VOL_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include <hdf5.h>
#include <H5VLconnector.h>
#include <H5VLconnector_passthru.h>

/* Identity of the connector (test range 256-511 of HDF5's connector values). */
#define TAGG_VOL_NAME    "tagg"
#define TAGG_VOL_VALUE   510
#define TAGG_VOL_VERSION 1

/* Name of the VFD plugin installed on MPI-IO file-access lists. */
#define TAGG_VOL_VFD_NAME "tagg"

/* A wrapped object (file, group, dataset, attribute, datatype, request...). */
typedef struct tagg_vol_obj {
    void *under;      /* the object of the connector underneath */
    hid_t under_id;   /* that connector's id; we hold one reference on it */
    int   redirected; /* a file the application opened with MPI-IO, now on the tagg VFD */
} tagg_vol_obj_t;

/* The connector's info: what "under_vol=..;under_info={..};key=value" holds. */
typedef struct tagg_vol_info {
    hid_t under_id;   /* connector underneath; we hold one reference */
    void *under_info; /* its info (may be NULL) */
    char *cfg;        /* tagg configuration "key=value;..." for the VFD; never NULL */
} tagg_vol_info_t;

/* Wrapping context handed out by get_wrap_ctx. */
typedef struct tagg_vol_wrap_ctx {
    hid_t under_id;  /* connector underneath; we hold one reference */
    void *under_ctx; /* its own wrapping context */
} tagg_vol_wrap_ctx_t;

/* ---- errors (vol.c) ------------------------------------------------------ */

/* Minor error codes of the "tagg" error class. */
typedef enum {
    TAGG_VOL_E_INFO = 0, /* bad connector info string */
    TAGG_VOL_E_VFD,      /* cannot install the tagg VFD */
    TAGG_VOL_E_ARGS,     /* bad argument or object */
    TAGG_VOL_E_NOMEM,    /* out of memory */
    TAGG_VOL_E_CALL,     /* an HDF5 call made by the connector failed */
    TAGG_VOL_E_COUNT_
} tagg_vol_err_t;

/* Pushes "tagg VOL: <message>" on the default HDF5 error stack under the
 * "tagg" error class. Never fails loudly (a connector must not abort). */
void tagg_vol_error(const char *file, const char *func, unsigned line, tagg_vol_err_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define TAGG_VOL_ERR(code, ...) tagg_vol_error(__FILE__, __func__, __LINE__, (code), __VA_ARGS__)

/* Registers / closes the error class (initialize / terminate). */
herr_t tagg_vol_errors_open(void);
void   tagg_vol_errors_close(void);

/* Takes the current error stack away so that HDF5 API calls made while
 * cleaning up (each of which clears the stack) cannot erase it; give it back
 * with tagg_vol_stack_restore. */
hid_t tagg_vol_stack_save(void);
void  tagg_vol_stack_restore(hid_t saved);

/* Public HDF5 calls made from inside a callback print their own error stack
 * when they fail. Around a call whose failure the connector reports itself,
 * switch that printing off, so that the application sees one complete stack
 * (the inner entries stay on it). */
typedef struct {
    H5E_auto2_t func;
    void       *data;
    int         ok;
} tagg_vol_quiet_t;
void tagg_vol_quiet_begin(tagg_vol_quiet_t *q);
void tagg_vol_quiet_end(const tagg_vol_quiet_t *q);

/* ---- wrapped objects (vol.c) --------------------------------------------- */

/* New wrapper around under (NULL when under is NULL or out of memory). */
tagg_vol_obj_t *tagg_vol_obj_new(void *under, hid_t under_id);
/* Releases a wrapper (not the object underneath); keeps the error stack. */
void tagg_vol_obj_free(tagg_vol_obj_t *obj);
/* After a callback that may have started an asynchronous operation underneath:
 * wraps the request token in *req. Returns ret, or -1 when wrapping failed. */
herr_t tagg_vol_req(herr_t ret, hid_t under_id, void **req);
/* After a callback that opens or creates an object: wraps the result and the
 * request token. Returns the wrapper, NULL when under is NULL. */
void *tagg_vol_wrap_result(void *under, hid_t under_id, void **req);
/* Object underneath a wrapper, NULL for NULL. */
void *tagg_vol_under(void *obj);

/* ---- connector info (vol.c) ---------------------------------------------- */

/* The connector info on a file-access list, or the default one (native, no
 * configuration) when the list carries none. The caller frees it with
 * tagg_vol_info_free. NULL with an error pushed on failure. */
tagg_vol_info_t *tagg_vol_info_from_fapl(hid_t fapl_id);
/* Copy of fapl_id set up for the connector underneath (its id and info).
 * H5I_INVALID_HID with an error pushed on failure. */
hid_t  tagg_vol_under_fapl(hid_t fapl_id, const tagg_vol_info_t *info);
herr_t tagg_vol_info_free(void *info);

/* ---- class table callbacks ----------------------------------------------- */

/* vol.c: info and wrap callbacks */
void  *tagg_vol_info_copy(const void *info);
herr_t tagg_vol_info_cmp(int *cmp_value, const void *info1, const void *info2);
herr_t tagg_vol_info_to_str(const void *info, char **str);
herr_t tagg_vol_str_to_info(const char *str, void **info);
void  *tagg_vol_get_object(const void *obj);
herr_t tagg_vol_get_wrap_ctx(const void *obj, void **wrap_ctx);
void  *tagg_vol_wrap_object(void *obj, H5I_type_t obj_type, void *wrap_ctx);
void  *tagg_vol_unwrap_object(void *obj);
herr_t tagg_vol_free_wrap_ctx(void *wrap_ctx);

/* vol_attr.c */
void  *tagg_vol_attr_create(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t type_id,
                            hid_t space_id, hid_t acpl_id, hid_t aapl_id, hid_t dxpl_id, void **req);
void  *tagg_vol_attr_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t aapl_id,
                          hid_t dxpl_id, void **req);
herr_t tagg_vol_attr_read(void *attr, hid_t mem_type_id, void *buf, hid_t dxpl_id, void **req);
herr_t tagg_vol_attr_write(void *attr, hid_t mem_type_id, const void *buf, hid_t dxpl_id, void **req);
herr_t tagg_vol_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_attr_specific(void *obj, const H5VL_loc_params_t *loc_params, H5VL_attr_specific_args_t *args,
                              hid_t dxpl_id, void **req);
herr_t tagg_vol_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_attr_close(void *attr, hid_t dxpl_id, void **req);

/* vol_dataset.c */
void  *tagg_vol_dataset_create(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t lcpl_id,
                               hid_t type_id, hid_t space_id, hid_t dcpl_id, hid_t dapl_id, hid_t dxpl_id,
                               void **req);
void  *tagg_vol_dataset_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t dapl_id,
                             hid_t dxpl_id, void **req);
herr_t tagg_vol_dataset_read(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                             hid_t file_space_id[], hid_t dxpl_id, void *buf[], void **req);
herr_t tagg_vol_dataset_write(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                              hid_t file_space_id[], hid_t dxpl_id, const void *buf[], void **req);
herr_t tagg_vol_dataset_get(void *dset, H5VL_dataset_get_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_dataset_close(void *dset, hid_t dxpl_id, void **req);

/* vol_datatype.c */
void  *tagg_vol_datatype_commit(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t type_id,
                                hid_t lcpl_id, hid_t tcpl_id, hid_t tapl_id, hid_t dxpl_id, void **req);
void  *tagg_vol_datatype_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t tapl_id,
                              hid_t dxpl_id, void **req);
herr_t tagg_vol_datatype_get(void *dt, H5VL_datatype_get_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_datatype_close(void *dt, hid_t dxpl_id, void **req);

/* vol_file.c */
void  *tagg_vol_file_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id,
                            void **req);
void  *tagg_vol_file_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req);
herr_t tagg_vol_file_get(void *file, H5VL_file_get_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_file_specific(void *file, H5VL_file_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_file_optional(void *file, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_file_close(void *file, hid_t dxpl_id, void **req);

/* vol_group.c */
void  *tagg_vol_group_create(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t lcpl_id,
                             hid_t gcpl_id, hid_t gapl_id, hid_t dxpl_id, void **req);
void  *tagg_vol_group_open(void *obj, const H5VL_loc_params_t *loc_params, const char *name, hid_t gapl_id,
                           hid_t dxpl_id, void **req);
herr_t tagg_vol_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_group_close(void *grp, hid_t dxpl_id, void **req);

/* vol_link.c */
herr_t tagg_vol_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc_params,
                            hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req);
herr_t tagg_vol_link_copy(void *src_obj, const H5VL_loc_params_t *loc_params1, void *dst_obj,
                          const H5VL_loc_params_t *loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                          void **req);
herr_t tagg_vol_link_move(void *src_obj, const H5VL_loc_params_t *loc_params1, void *dst_obj,
                          const H5VL_loc_params_t *loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                          void **req);
herr_t tagg_vol_link_get(void *obj, const H5VL_loc_params_t *loc_params, H5VL_link_get_args_t *args,
                         hid_t dxpl_id, void **req);
herr_t tagg_vol_link_specific(void *obj, const H5VL_loc_params_t *loc_params, H5VL_link_specific_args_t *args,
                              hid_t dxpl_id, void **req);
herr_t tagg_vol_link_optional(void *obj, const H5VL_loc_params_t *loc_params, H5VL_optional_args_t *args,
                              hid_t dxpl_id, void **req);

/* vol_object.c */
void  *tagg_vol_object_open(void *obj, const H5VL_loc_params_t *loc_params, H5I_type_t *opened_type,
                            hid_t dxpl_id, void **req);
herr_t tagg_vol_object_copy(void *src_obj, const H5VL_loc_params_t *src_loc_params, const char *src_name,
                            void *dst_obj, const H5VL_loc_params_t *dst_loc_params, const char *dst_name,
                            hid_t ocpypl_id, hid_t lcpl_id, hid_t dxpl_id, void **req);
herr_t tagg_vol_object_get(void *obj, const H5VL_loc_params_t *loc_params, H5VL_object_get_args_t *args,
                           hid_t dxpl_id, void **req);
herr_t tagg_vol_object_specific(void *obj, const H5VL_loc_params_t *loc_params,
                                H5VL_object_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t tagg_vol_object_optional(void *obj, const H5VL_loc_params_t *loc_params, H5VL_optional_args_t *args,
                                hid_t dxpl_id, void **req);

/* vol_misc.c: introspection, requests, blobs, tokens, catch-all optional */
herr_t tagg_vol_introspect_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **conn_cls);
herr_t tagg_vol_introspect_get_cap_flags(const void *info, uint64_t *cap_flags);
herr_t tagg_vol_introspect_opt_query(void *obj, H5VL_subclass_t cls, int opt_type, uint64_t *flags);
herr_t tagg_vol_request_wait(void *req, uint64_t timeout, H5VL_request_status_t *status);
herr_t tagg_vol_request_notify(void *req, H5VL_request_notify_t cb, void *ctx);
herr_t tagg_vol_request_cancel(void *req, H5VL_request_status_t *status);
herr_t tagg_vol_request_specific(void *req, H5VL_request_specific_args_t *args);
herr_t tagg_vol_request_optional(void *req, H5VL_optional_args_t *args);
herr_t tagg_vol_request_free(void *req);
herr_t tagg_vol_blob_put(void *obj, const void *buf, size_t size, void *blob_id, void *ctx);
herr_t tagg_vol_blob_get(void *obj, const void *blob_id, void *buf, size_t size, void *ctx);
herr_t tagg_vol_blob_specific(void *obj, void *blob_id, H5VL_blob_specific_args_t *args);
herr_t tagg_vol_blob_optional(void *obj, void *blob_id, H5VL_optional_args_t *args);
herr_t tagg_vol_token_cmp(void *obj, const H5O_token_t *token1, const H5O_token_t *token2, int *cmp_value);
herr_t tagg_vol_token_to_str(void *obj, H5I_type_t obj_type, const H5O_token_t *token, char **token_str);
herr_t tagg_vol_token_from_str(void *obj, H5I_type_t obj_type, const char *token_str, H5O_token_t *token);
herr_t tagg_vol_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);

/* The class table itself (vol.c); vol_misc.c hands it out in get_conn_cls. */
extern const H5VL_class_t tagg_vol_class;

#endif
