/* tagg VOL connector: the connector info and its string form.
 *
 *   under_vol=<value or name>;under_info={<info string of that connector>}[;key=value...]
 *
 * under_vol defaults to the native connector; under_info may nest braces; every
 * other key=value is tagg configuration (core/src/config.h), checked here and
 * handed to the tagg VFD when a file is redirected to it. */
#include "vol_internal.h"

#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small string helpers ------------------------------------------------ */

static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

static char *dup_range(const char *b, const char *e)
{
    size_t n = (size_t)(e - b);
    char  *s = malloc(n + 1);
    if (s) {
        memcpy(s, b, n);
        s[n] = '\0';
    }
    return s;
}

static char *dup_str(const char *s)
{
    return dup_range(s, s + strlen(s));
}

/* Appends "b..e" to *cfg, separated by ';'. Returns 0 or -1 (out of memory). */
static int cfg_append(char **cfg, const char *b, const char *e)
{
    size_t old = *cfg ? strlen(*cfg) : 0, add = (size_t)(e - b);
    char  *s   = realloc(*cfg, old + add + 2);
    if (!s)
        return -1;
    if (old)
        s[old++] = ';';
    memcpy(s + old, b, add);
    s[old + add] = '\0';
    *cfg         = s;
    return 0;
}

/* ---- the parser ---------------------------------------------------------- */

/* Pieces of an info string, before any connector is looked up. */
typedef struct {
    char *under_vol;  /* text of under_vol=, NULL when absent */
    char *under_info; /* text inside under_info={...}, NULL when absent */
    char *cfg;        /* the other key=value items joined by ';', NULL when none */
} pieces_t;

static void pieces_clear(pieces_t *p)
{
    free(p->under_vol);
    free(p->under_info);
    free(p->cfg);
    memset(p, 0, sizeof *p);
}

/* Splits str into items at ';' outside braces and sorts them into *out.
 * Returns 0, or -1 with a message in err. */
static int split_info(const char *str, pieces_t *out, char *err, size_t errlen)
{
    const char *p = str;
    memset(out, 0, sizeof *out);
    while (*p) {
        /* Find the end of this item: the first ';' at brace depth 0. */
        const char *q     = p;
        int         depth = 0;
        for (; *q && !(*q == ';' && depth == 0); q++) {
            if (*q == '{')
                depth++;
            else if (*q == '}' && --depth < 0) {
                snprintf(err, errlen, "unbalanced braces: '}' without '{' at offset %td of \"%s\"", q - str, str);
                return -1;
            }
        }
        if (depth > 0) {
            snprintf(err, errlen, "unbalanced braces: %d '{' not closed in \"%s\"", depth, str);
            return -1;
        }
        const char *b = p, *e = q;
        p = *q ? q + 1 : q;
        trim(&b, &e);
        if (b == e)
            continue; /* empty item, e.g. a trailing ';' */

        const char *eq = memchr(b, '=', (size_t)(e - b));
        if (!eq) {
            snprintf(err, errlen, "'%.*s' is not of the form key=value", (int)(e - b), b);
            return -1;
        }
        const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
        trim(&kb, &ke);
        trim(&vb, &ve);
        size_t klen = (size_t)(ke - kb);

        if (klen == 9 && !strncmp(kb, "under_vol", 9)) {
            if (out->under_vol) {
                snprintf(err, errlen, "under_vol given twice");
                return -1;
            }
            if (vb == ve) {
                snprintf(err, errlen, "under_vol is empty (give a connector value or name, e.g. 0 or native)");
                return -1;
            }
            if (!(out->under_vol = dup_range(vb, ve)))
                goto nomem;
        }
        else if (klen == 10 && !strncmp(kb, "under_info", 10)) {
            if (out->under_info) {
                snprintf(err, errlen, "under_info given twice");
                return -1;
            }
            /* The value must be one brace group: '{' ... its matching '}' at the end. */
            int         d   = 0;
            const char *end = NULL;
            for (const char *c = vb; c < ve; c++) {
                if (*c == '{')
                    d++;
                else if (*c == '}' && --d == 0) {
                    end = c;
                    break;
                }
            }
            if (vb == ve || *vb != '{' || end != ve - 1) {
                snprintf(err, errlen, "under_info must be one group in braces, e.g. under_info={...}, not '%.*s'",
                         (int)(ve - vb), vb);
                return -1;
            }
            const char *ib = vb + 1, *ie = ve - 1;
            trim(&ib, &ie);
            if (!(out->under_info = dup_range(ib, ie)))
                goto nomem;
        }
        else if (cfg_append(&out->cfg, b, e) < 0)
            goto nomem;
    }
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Registers (or finds) the connector named by text: a number is a connector
 * value, anything else a connector name. Returns its id (one reference). */
static hid_t resolve_under(const char *text, char *err, size_t errlen)
{
    char         *end = NULL;
    unsigned long v   = strtoul(text, &end, 10);
    bool          num = end != text && *end == '\0' && isdigit((unsigned char)text[0]);
    if ((num && v == TAGG_VOL_VALUE) || (!num && !strcmp(text, TAGG_VOL_NAME))) {
        snprintf(err, errlen, "under_vol=%s is the tagg connector itself; give the connector to stack on "
                              "(e.g. under_vol=0 for native)", text);
        return H5I_INVALID_HID;
    }
    if (num && v > (unsigned long)INT32_MAX) {
        snprintf(err, errlen, "under_vol=%s is not a valid connector value", text);
        return H5I_INVALID_HID;
    }
    tagg_vol_quiet_t quiet;
    tagg_vol_quiet_begin(&quiet);
    hid_t id = num ? H5VLregister_connector_by_value((H5VL_class_value_t)v, H5P_DEFAULT)
                   : H5VLregister_connector_by_name(text, H5P_DEFAULT);
    tagg_vol_quiet_end(&quiet);
    if (id < 0) {
        const char *path = getenv("HDF5_PLUGIN_PATH");
        snprintf(err, errlen,
                 "unknown under_vol=%s: no VOL connector with that %s is built in or found in "
                 "HDF5_PLUGIN_PATH (%s)",
                 text, num ? "value" : "name", path ? path : "unset");
    }
    return id;
}

herr_t tagg_vol_str_to_info(const char *str, void **info_out)
{
    char             err[TAGG_CONFIG_ERRLEN] = "";
    pieces_t         pc;
    tagg_vol_info_t *info = NULL;

    if (!info_out) {
        TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "no place to put the connector info");
        return -1;
    }
    *info_out = NULL;
    if (!str)
        str = "";
    if (split_info(str, &pc, err, sizeof err) < 0) {
        pieces_clear(&pc);
        TAGG_VOL_ERR(TAGG_VOL_E_INFO, "bad info string \"%s\": %s", str, err);
        return -1;
    }

    /* Validate the tagg configuration now, not at the first file open. */
    tagg_config_t cfg;
    int           bad = tagg_config_build(&cfg, NULL, pc.cfg, err, sizeof err);
    tagg_config_clear(&cfg);
    if (bad < 0) {
        pieces_clear(&pc);
        TAGG_VOL_ERR(TAGG_VOL_E_INFO, "bad tagg configuration in info string \"%s\": %s", str, err);
        return -1;
    }

    if (!(info = calloc(1, sizeof *info)) || !(info->cfg = dup_str(pc.cfg ? pc.cfg : ""))) {
        free(info);
        pieces_clear(&pc);
        TAGG_VOL_ERR(TAGG_VOL_E_NOMEM, "cannot allocate the connector info");
        return -1;
    }
    if (pc.under_vol)
        info->under_id = resolve_under(pc.under_vol, err, sizeof err);
    else if ((info->under_id = H5VL_NATIVE) < 0 || H5Iinc_ref(info->under_id) < 0) {
        info->under_id = H5I_INVALID_HID;
        snprintf(err, sizeof err, "cannot reference the native connector");
    }
    if (info->under_id < 0)
        goto fail;
    tagg_vol_quiet_t quiet;
    tagg_vol_quiet_begin(&quiet);
    herr_t under_ok = 0;
    if (pc.under_info && *pc.under_info)
        under_ok = H5VLconnector_str_to_info(pc.under_info, info->under_id, &info->under_info);
    tagg_vol_quiet_end(&quiet);
    if (under_ok < 0) {
        snprintf(err, sizeof err, "the connector under_vol=%s rejected under_info={%s}",
                 pc.under_vol ? pc.under_vol : "native", pc.under_info);
        info->under_info = NULL;
        goto fail;
    }
    pieces_clear(&pc);
    *info_out = info;
    return 0;

fail:
    pieces_clear(&pc);
    {
        hid_t saved = tagg_vol_stack_save();
        if (info->under_id >= 0)
            H5Idec_ref(info->under_id);
        tagg_vol_stack_restore(saved);
    }
    free(info->cfg);
    free(info);
    TAGG_VOL_ERR(TAGG_VOL_E_INFO, "bad info string \"%s\": %s", str, err);
    return -1;
}

/* ---- the other info callbacks -------------------------------------------- */

void *tagg_vol_info_copy(const void *info_in)
{
    const tagg_vol_info_t *src = info_in;
    if (!src) {
        TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "no connector info to copy");
        return NULL;
    }
    tagg_vol_info_t *dst = calloc(1, sizeof *dst);
    if (!dst || !(dst->cfg = dup_str(src->cfg ? src->cfg : ""))) {
        free(dst);
        TAGG_VOL_ERR(TAGG_VOL_E_NOMEM, "cannot copy the connector info");
        return NULL;
    }
    dst->under_id = src->under_id;
    if (H5Iinc_ref(dst->under_id) < 0) {
        free(dst->cfg);
        free(dst);
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "the connector underneath (id %lld) is not valid", (long long)src->under_id);
        return NULL;
    }
    if (src->under_info && H5VLcopy_connector_info(dst->under_id, &dst->under_info, src->under_info) < 0) {
        dst->under_info = NULL;
        tagg_vol_info_free(dst);
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot copy the info of the connector underneath");
        return NULL;
    }
    return dst;
}

herr_t tagg_vol_info_cmp(int *cmp_value, const void *info1, const void *info2)
{
    const tagg_vol_info_t *a = info1, *b = info2;
    if (!cmp_value) {
        TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "no place to put the comparison");
        return -1;
    }
    *cmp_value = 0;
    if (!a || !b) {
        *cmp_value = (a != NULL) - (b != NULL);
        return 0;
    }
    if (H5VLcmp_connector_cls(cmp_value, a->under_id, b->under_id) < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot compare the connectors underneath");
        return -1;
    }
    if (*cmp_value)
        return 0;
    if (H5VLcmp_connector_info(cmp_value, a->under_id, a->under_info, b->under_info) < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot compare the infos of the connectors underneath");
        return -1;
    }
    if (*cmp_value)
        return 0;
    *cmp_value = strcmp(a->cfg ? a->cfg : "", b->cfg ? b->cfg : "");
    return 0;
}

herr_t tagg_vol_info_free(void *info_in)
{
    tagg_vol_info_t *info = info_in;
    if (!info)
        return 0;
    hid_t saved = tagg_vol_stack_save();
    if (info->under_info)
        H5VLfree_connector_info(info->under_id, info->under_info);
    if (info->under_id >= 0)
        H5Idec_ref(info->under_id);
    tagg_vol_stack_restore(saved);
    free(info->cfg);
    free(info);
    return 0;
}

herr_t tagg_vol_info_to_str(const void *info_in, char **str)
{
    const tagg_vol_info_t *info  = info_in;
    H5VL_class_value_t     value = 0;
    char                  *under = NULL;

    if (!str) {
        TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "no place to put the info string");
        return -1;
    }
    *str = NULL;
    if (!info) {
        TAGG_VOL_ERR(TAGG_VOL_E_ARGS, "no connector info to print");
        return -1;
    }
    if (H5VLget_value(info->under_id, &value) < 0 ||
        H5VLconnector_info_to_str(info->under_info, info->under_id, &under) < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot describe the connector underneath");
        return -1;
    }
    const char *cfg = info->cfg ? info->cfg : "";
    const char *u   = under ? under : "";
    int         n   = snprintf(NULL, 0, "under_vol=%d;under_info={%s}%s%s", (int)value, u, *cfg ? ";" : "", cfg);
    char       *out = n < 0 ? NULL : H5allocate_memory((size_t)n + 1, false);
    if (out)
        snprintf(out, (size_t)n + 1, "under_vol=%d;under_info={%s}%s%s", (int)value, u, *cfg ? ";" : "", cfg);
    if (under)
        H5free_memory(under);
    if (!out) {
        TAGG_VOL_ERR(TAGG_VOL_E_NOMEM, "cannot allocate the info string");
        return -1;
    }
    *str = out;
    return 0;
}

/* ---- info on file-access lists ------------------------------------------- */

tagg_vol_info_t *tagg_vol_info_from_fapl(hid_t fapl_id)
{
    void *got = NULL;
    if (H5Pget_vol_info(fapl_id, &got) < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot read the connector info from the file-access list");
        return NULL;
    }
    if (got)
        return got;
    /* HDF5_VOL_CONNECTOR="tagg" alone: no info, stack on native, no configuration. */
    void *dflt = NULL;
    if (tagg_vol_str_to_info("", &dflt) < 0)
        return NULL;
    return dflt;
}

hid_t tagg_vol_under_fapl(hid_t fapl_id, const tagg_vol_info_t *info)
{
    hid_t copy = H5Pcopy(fapl_id);
    if (copy < 0) {
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot copy the file-access list");
        return H5I_INVALID_HID;
    }
    if (H5Pset_vol(copy, info->under_id, info->under_info) < 0) {
        hid_t saved = tagg_vol_stack_save();
        H5Pclose(copy);
        tagg_vol_stack_restore(saved);
        TAGG_VOL_ERR(TAGG_VOL_E_CALL, "cannot set the connector underneath on the file-access list");
        return H5I_INVALID_HID;
    }
    return copy;
}
