/* tagg configuration: parser, validation, environment and printing, all driven
 * by TAGG_CONFIG_TABLE in config.h. */
#include "errmsg.h"
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tagg_backend_names[]  = {"tapioca", "mpiio", NULL};
const char *const tagg_strategy_names[] = {"memory-aware", "topo-aware",     "shortest",
                                           "longest",      "first-per-node", "random", NULL};
const char *const tagg_layout_names[]   = {"shared", "subfiles", NULL};
const char *const tagg_aggr_tier_names[] = {"auto", "dram", "hbm", "nvr", "test", NULL};
const char *const tagg_persistency_names[] = {"none", "job", NULL};
const char *const tagg_aggregate_names[]   = {"auto", "always", "never", NULL};
const char *const tagg_fs_client_names[]   = {"auto", "serial", "parallel", NULL};
const char *const tagg_direct_io_names[]   = {"auto", "on", "off", "write", NULL};
const char *const tagg_file_io_names[]     = {"auto", "posix", "mpiio", NULL};
const char *const tagg_destination_names[] = {"pfs", "nvr", NULL};
const char *const tagg_drain_names[]       = {"none", "close", NULL};
const char *const tagg_compression_names[] = {"none", "lz4", "zstd", "blosc-lz4", "blosc-zstd", "auto", NULL};
const char *const tagg_cshuffle_names[]    = {"none", "byte", "bit", NULL};

typedef enum { K_BOOL, K_INT, K_SIZE, K_ENUM, K_STR } kind_t;

typedef struct {
    const char        *name;
    kind_t             kind;
    const char        *env;
    const char        *def;
    long long          lo, hi;
    const char *const *names;
    const char        *help;
    size_t             offset;
} key_t_;

#define K_BOOL_ K_BOOL
#define K_INT_ K_INT
#define K_SIZE_ K_SIZE
#define K_ENUM_ K_ENUM
#define K_STR_ K_STR
#define TAGG_KEY_ROW_(name, kind, ctype, env, def, lo, hi, names, help)                                   \
    {#name, K_##kind, env, def, lo, hi, names, help, offsetof(tagg_config_t, name)},
static const key_t_ keys[] = {TAGG_CONFIG_TABLE(TAGG_KEY_ROW_)};
#undef TAGG_KEY_ROW_
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
/* The bytes of list_keys' text: every name and its ", " (and the NUL) */
#define TAGG_KEY_LEN_(name, kind, ctype, env, def, lo, hi, names, help) +sizeof #name + 1
enum { KEYS_TEXT = 1 TAGG_CONFIG_TABLE(TAGG_KEY_LEN_) };
#undef TAGG_KEY_LEN_
_Static_assert(KEYS_TEXT + 256 <= TAGG_CONFIG_ERRLEN, "the unknown-key message must fit in TAGG_CONFIG_ERRLEN");

static void list_names(char *buf, size_t len, const char *const *names)
{
    size_t used = 0;
    buf[0]      = '\0';
    for (size_t i = 0; names[i]; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

static void list_keys(char *buf, size_t len)
{
    const char *names[NKEYS + 1];
    for (size_t i = 0; i < NKEYS; i++)
        names[i] = keys[i].name;
    names[NKEYS] = NULL;
    list_names(buf, len, names);
}

/* Parses a whole number with an optional K/M/G/T suffix (powers of 1024 for SIZE). */
static int parse_number(const key_t_ *k, const char *v, long long *out, char *err, size_t errlen)
{
    char     *end = NULL;
    long long x;
    errno = 0;
    x     = strtoll(v, &end, 10);
    if (end == v || errno == ERANGE) {
        tagg_errmsg(err, errlen, "tagg config: key '%s': '%s' is not a whole number", k->name, v);
        return -1;
    }
    if (k->kind == K_SIZE && *end) {
        long long mul = 1;
        switch (toupper((unsigned char)*end)) {
            case 'K': mul = 1LL << 10; break;
            case 'M': mul = 1LL << 20; break;
            case 'G': mul = 1LL << 30; break;
            case 'T': mul = 1LL << 40; break;
            default: mul = 0; break;
        }
        if (mul && (end[1] == '\0' || ((end[1] == 'i' || end[1] == 'I') && (end[2] == 'B' || end[2] == 'b') && !end[3]) ||
                    ((end[1] == 'B' || end[1] == 'b') && !end[2]))) {
            if (x > (long long)(INT64_MAX / mul)) {
                tagg_errmsg(err, errlen, "tagg config: key '%s': '%s' is too large", k->name, v);
                return -1;
            }
            x *= mul;
            end += strlen(end);
        }
    }
    if (*end) {
        tagg_errmsg(err, errlen, "tagg config: key '%s': '%s' is not a %s", k->name, v,
                k->kind == K_SIZE ? "size (a whole number with an optional K, M, G or T suffix)" : "whole number");
        return -1;
    }
    if (x < k->lo || x > k->hi) {
        tagg_errmsg(err, errlen, "tagg config: key '%s': %lld is out of range [%lld, %lld]", k->name, x, k->lo, k->hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int set_value(tagg_config_t *cfg, const key_t_ *k, const char *v, char *err, size_t errlen)
{
    char *field = (char *)cfg + k->offset;
    switch (k->kind) {
        case K_BOOL: {
            static const char *const yes[] = {"1", "true", "yes", "on", NULL};
            static const char *const no[]  = {"0", "false", "no", "off", NULL};
            for (int i = 0; yes[i]; i++)
                if (!strcmp(v, yes[i])) {
                    *(int *)field = 1;
                    return 0;
                }
            for (int i = 0; no[i]; i++)
                if (!strcmp(v, no[i])) {
                    *(int *)field = 0;
                    return 0;
                }
            tagg_errmsg(err, errlen, "tagg config: key '%s': '%s' is not a boolean (valid: 1, 0, true, false, yes, no, on, off)",
                    k->name, v);
            return -1;
        }
        case K_INT: {
            long long x;
            if (parse_number(k, v, &x, err, errlen) < 0)
                return -1;
            *(int *)field = (int)x;
            return 0;
        }
        case K_SIZE: {
            long long x;
            if (parse_number(k, v, &x, err, errlen) < 0)
                return -1;
            *(int64_t *)field = (int64_t)x;
            return 0;
        }
        case K_ENUM: {
            for (int i = 0; k->names[i]; i++)
                if (!strcmp(v, k->names[i])) {
                    *(int *)field = i;
                    return 0;
                }
            char valid[256];
            list_names(valid, sizeof valid, k->names);
            tagg_errmsg(err, errlen, "tagg config: key '%s': unknown value '%s' (valid: %s)", k->name, v, valid);
            return -1;
        }
        case K_STR: {
            char *dup = strdup(v);
            if (!dup) {
                tagg_errmsg(err, errlen, "tagg config: out of memory");
                return -1;
            }
            free(*(char **)field);
            *(char **)field = dup;
            return 0;
        }
    }
    return -1;
}

void tagg_config_init(tagg_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NKEYS; i++) {
        int rc = set_value(cfg, &keys[i], keys[i].def, NULL, 0);
        (void)rc; /* defaults are checked by the unit tests */
    }
}

void tagg_config_clear(tagg_config_t *cfg)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].kind == K_STR) {
            char **p = (char **)((char *)cfg + keys[i].offset);
            free(*p);
            *p = NULL;
        }
}

int tagg_config_copy(tagg_config_t *dst, const tagg_config_t *src)
{
    memcpy(dst, src, sizeof *dst);
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].kind == K_STR) {
            char **p = (char **)((char *)dst + keys[i].offset);
            if (*p && !(*p = strdup(*p))) {
                for (size_t j = 0; j < i; j++)
                    if (keys[j].kind == K_STR)
                        free(*(char **)((char *)dst + keys[j].offset));
                return -1;
            }
        }
    return 0;
}

static const key_t_ *find_key(const char *name, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
            return &keys[i];
    return NULL;
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

int tagg_config_apply_string(tagg_config_t *cfg, const char *str, char *err, size_t errlen)
{
    if (!str)
        return 0;
    const char *p = str;
    while (*p) {
        const char *end = strchr(p, ';');
        if (!end)
            end = p + strlen(p);
        const char *kb = p, *ke = end;
        trim(&kb, &ke);
        if (kb < ke) {
            const char *eq = memchr(kb, '=', (size_t)(ke - kb));
            if (!eq) {
                tagg_errmsg(err, errlen, "tagg config: '%.*s' is not of the form key=value", (int)(ke - kb), kb);
                return -1;
            }
            const char *nb = kb, *ne = eq, *vb = eq + 1, *ve = ke;
            trim(&nb, &ne);
            trim(&vb, &ve);
            const key_t_ *k = find_key(nb, (size_t)(ne - nb));
            if (!k) {
                char valid[KEYS_TEXT];
                list_keys(valid, sizeof valid);
                tagg_errmsg(err, errlen, "tagg config: unknown key '%.*s' (valid keys: %s)", (int)(ne - nb), nb, valid);
                return -1;
            }
            char  *val = strndup(vb, (size_t)(ve - vb));
            int    rc;
            if (!val) {
                tagg_errmsg(err, errlen, "tagg config: out of memory");
                return -1;
            }
            rc = set_value(cfg, k, val, err, errlen);
            free(val);
            if (rc < 0)
                return -1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

char *tagg_config_env_string(void)
{
    size_t cap = 256, used = 0;
    char  *s   = malloc(cap);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i <= NKEYS; i++) {
        const char *name = i < NKEYS ? keys[i].name : NULL;
        const char *v    = i < NKEYS ? (keys[i].env ? getenv(keys[i].env) : NULL) : getenv(TAGG_ENV_CONFIG);
        if (!v)
            continue;
        size_t need = used + (name ? strlen(name) + 1 : 0) + strlen(v) + 2;
        if (need > cap) {
            while (cap < need)
                cap *= 2;
            char *t = realloc(s, cap);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
        }
        used += (size_t)sprintf(s + used, "%s%s%s;", name ? name : "", name ? "=" : "", v);
    }
    return s;
}

int tagg_config_build(tagg_config_t *cfg, const char *env_str, const char *str, char *err, size_t errlen)
{
    tagg_config_init(cfg);
    if (tagg_config_apply_string(cfg, env_str, err, errlen) < 0) {
        /* Say that the value came from the environment. */
        if (err && errlen) {
            size_t n = strlen(err);
            snprintf(err + n, errlen - n, " [from the TAGG_* environment]");
        }
        tagg_config_clear(cfg);
        return -1;
    }
    if (tagg_config_apply_string(cfg, str, err, errlen) < 0) {
        tagg_config_clear(cfg);
        return -1;
    }
    /* Keys that only make sense together (checked once everything is applied). */
    const char *why = NULL;
    if (cfg->destination == TAGG_DEST_NVR && cfg->layout != TAGG_LAYOUT_SUBFILES)
        why = "destination=nvr needs layout=subfiles (node-local data is always subfiled: add layout=subfiles)";
    else if (cfg->destination == TAGG_DEST_NVR && cfg->subfiles != 0)
        why = "destination=nvr makes one subfile per node: subfiles must be 0";
    else if (cfg->destination == TAGG_DEST_NVR && cfg->backend != TAGG_BACKEND_TAPIOCA)
        why = "destination=nvr needs backend=tapioca (its aggregators are placed on the node that holds the data)";
    else if (cfg->compression != TAGG_COMP_NONE && cfg->layout != TAGG_LAYOUT_SUBFILES)
        why = "compression needs layout=subfiles (stripes are compressed where they are stored: add layout=subfiles, "
              "or compression=none)";
    else if (cfg->compression != TAGG_COMP_NONE && cfg->destination == TAGG_DEST_NVR)
        why = "compression is not supported with destination=nvr (node-local subfiles): use compression=none";
    if (why) {
        if (err && errlen)
            snprintf(err, errlen, "%s", why);
        tagg_config_clear(cfg);
        return -1;
    }
    return 0;
}

int tagg_config_format(const tagg_config_t *cfg, char *buf, size_t len)
{
    size_t used = 0;
    int    total = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        const key_t_ *k     = &keys[i];
        const char   *field = (const char *)cfg + k->offset;
        char          val[64];
        const char   *v = val;
        switch (k->kind) {
            case K_BOOL:
            case K_INT: snprintf(val, sizeof val, "%d", *(const int *)field); break;
            case K_SIZE: snprintf(val, sizeof val, "%lld", (long long)*(const int64_t *)field); break;
            case K_ENUM: v = k->names[*(const int *)field]; break;
            case K_STR: v = *(char *const *)field ? *(char *const *)field : ""; break;
        }
        int n = snprintf(buf ? buf + used : NULL, buf && used < len ? len - used : 0, "%s%s=%s", i ? ";" : "",
                         k->name, v);
        if (n < 0)
            return -1;
        total += n;
        used = (size_t)total < len ? (size_t)total : len;
    }
    return total;
}

void tagg_config_doc(void *stream)
{
    FILE *f = stream;
    fprintf(f, "| key | environment | default | values | meaning |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < NKEYS; i++) {
        const key_t_ *k = &keys[i];
        char          values[256];
        switch (k->kind) {
            case K_BOOL: snprintf(values, sizeof values, "0/1"); break;
            case K_INT: snprintf(values, sizeof values, "%lld..%lld", k->lo, k->hi); break;
            case K_SIZE: snprintf(values, sizeof values, "bytes, %lld..%lld, K/M/G suffix", k->lo, k->hi); break;
            case K_ENUM: list_names(values, sizeof values, k->names); break;
            case K_STR: snprintf(values, sizeof values, "text"); break;
        }
        fprintf(f, "| `%s` | %s%s%s | %s%s%s | %s | %s |\n", k->name, k->env ? "`" : "", k->env ? k->env : "-",
                k->env ? "`" : "", *k->def ? "`" : "", *k->def ? k->def : "(empty)", *k->def ? "`" : "", values,
                k->help);
    }
}
