/* Self-tuning models: parser and evaluator of `tagg-tune` model files
 * (format in tagg/tune.h).  Pure C, no MPI. */
#include "tagg/tune.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

static const char *const var_names[TAGG_TV_COUNT_] = {
    [TAGG_TV_RANKS] = "ranks",
    [TAGG_TV_NODES] = "nodes",
    [TAGG_TV_BYTES_PER_RANK] = "bytes_per_rank",
    [TAGG_TV_BYTES_SPREAD] = "bytes_spread",
    [TAGG_TV_PIECES_PER_RANK] = "pieces_per_rank",
    [TAGG_TV_CONTIGUITY] = "contiguity",
    [TAGG_TV_ALIGNED] = "aligned",
    [TAGG_TV_FS_KIND] = "fs_kind",
    [TAGG_TV_IS_READ] = "is_read",
    [TAGG_TV_PAST_END] = "past_end",
    [TAGG_TV_SETUP] = "setup",
    [TAGG_TV_REPEAT] = "repeat",
    [TAGG_TV_DIO_MIN] = "dio_min",
    [TAGG_TV_RESIDENT] = "resident",
    [TAGG_TV_IN_FLIGHT] = "in_flight",
    [TAGG_TV_FLIGHT_AHEAD] = "flight_ahead",
    [TAGG_TV_DIRECT] = "direct",
    [TAGG_TV_AGGREGATORS] = "aggregators",
    [TAGG_TV_BUFFER_SIZE] = "buffer_size",
    [TAGG_TV_BUFFERS] = "buffers",
    [TAGG_TV_LAYOUT] = "layout",
    [TAGG_TV_TIER] = "tier",
    [TAGG_TV_THROTTLE] = "throttle",
};

const char *tagg_tune_var_name(int v) { return v >= 0 && v < TAGG_TV_COUNT_ ? var_names[v] : NULL; }

int tagg_tune_var_of(const char *name)
{
    for (int v = 0; v < TAGG_TV_COUNT_; v++)
        if (strcmp(var_names[v], name) == 0)
            return v;
    return -1;
}

typedef struct {
    int    input; /* index into the model's inputs, -1: leaf */
    double threshold, value;
    int    left, right;
} node_t;

typedef struct {
    int     n;
    node_t *node;
} tree_t;

typedef struct {
    int     var;
    int     n;
    double *value;
} cand_t;

enum { KIND_TREE, KIND_FOREST, KIND_GBDT };
static const char *const kind_names[] = {"decision_tree", "random_forest", "gradient_boosting"};

/* One class of the recorded domain (tune.h 'domain'): fs_kind, is_read, ranks,
 * nodes, contiguous, spread, multi; then the ranges recorded in it. */
#define RANGE_CLASS 7
typedef struct {
    double cls[RANGE_CLASS];
    double bmin, bmax, pmin, pmax;
} range_t;

struct tagg_tune_model {
    int     kind;
    int     ninputs;
    int     input[TAGG_TV_COUNT_]; /* variable of each input */
    int     ncand;
    cand_t  cand[TAGG_TV_COUNT_];
    int     ncombo;     /* format 5: the combinations of candidate values the records held (0: every one) */
    double *combo;      /* ncombo x ncand values, in the order of cand */
    double  init, rate; /* gbdt */
    int     per_byte;   /* target log_seconds_per_byte: the trees predict ln(seconds / bytes of the call) */
    int     version;    /* file format: 2 to 6 see x through tagg_tune_effective */
    double  margin;     /* the predicted gain a choice needs over the cost model's (0: none) */
    int     nrange;     /* the recorded domain (format 6), nrange classes */
    range_t *range;
    uint64_t sum;       /* the 'end' line's checksum */
    int     ntrees;
    tree_t *tree;
};

void tagg_tune_free(tagg_tune_model_t *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->ncand; i++)
        free(m->cand[i].value);
    free(m->combo);
    free(m->range);
    for (int t = 0; m->tree && t < m->ntrees; t++)
        free(m->tree[t].node);
    free(m->tree);
    free(m);
}

const char *tagg_tune_kind(const tagg_tune_model_t *m) { return kind_names[m->kind]; }
int tagg_tune_trees(const tagg_tune_model_t *m) { return m->ntrees; }
uint64_t tagg_tune_sum(const tagg_tune_model_t *m) { return m->sum; }
int tagg_tune_inputs(const tagg_tune_model_t *m) { return m->ninputs; }
double tagg_tune_margin(const tagg_tune_model_t *m) { return m->margin; }
int tagg_tune_ranges(const tagg_tune_model_t *m) { return m->nrange; }

/* A pattern's class in the domain (tune.h 'domain'): the same in tagg-tune. */
static void class_of(const double x[TAGG_TV_COUNT_], double c[RANGE_CLASS])
{
    c[0] = x[TAGG_TV_FS_KIND], c[1] = x[TAGG_TV_IS_READ], c[2] = x[TAGG_TV_RANKS], c[3] = x[TAGG_TV_NODES];
    c[4] = x[TAGG_TV_CONTIGUITY] >= 0.999, c[5] = x[TAGG_TV_BYTES_SPREAD] > 0.01, c[6] = x[TAGG_TV_PIECES_PER_RANK] > 1;
}

/* Values compared as numbers (a file's -0 is 0). */
static int same_class(const double a[RANGE_CLASS], const double b[RANGE_CLASS])
{
    for (int i = 0; i < RANGE_CLASS; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

int tagg_tune_inside(const tagg_tune_model_t *m, const double x[TAGG_TV_COUNT_])
{
    if (!m->nrange)
        return 1;
    double c[RANGE_CLASS];
    class_of(x, c);
    double b = x[TAGG_TV_BYTES_PER_RANK], p = x[TAGG_TV_PIECES_PER_RANK];
    for (int i = 0; i < m->nrange; i++) {
        const range_t *r = &m->range[i];
        if (same_class(r->cls, c))
            return r->bmin <= b && b <= r->bmax && r->pmin <= p && p <= r->pmax;
    }
    return 0;
}

int tagg_tune_node(const tagg_tune_model_t *m, int t, int i, int *input, double *threshold, int *left, int *right,
                   double *value)
{
    if (t < 0 || t >= m->ntrees || i < 0 || i >= m->tree[t].n)
        return -1;
    const node_t *nd = &m->tree[t].node[i];
    *input = nd->input, *threshold = nd->threshold, *left = nd->left, *right = nd->right, *value = nd->value;
    return 0;
}

int tagg_tune_uses(const tagg_tune_model_t *m, int v)
{
    for (int i = 0; i < m->ninputs; i++)
        if (m->input[i] == v)
            return 1;
    return 0;
}

/* ---- parsing ------------------------------------------------------------- */

typedef struct {
    const char *p, *end; /* the unread text */
    int         line;    /* number of the line last taken */
    char        buf[4096];
    char       *err;
    size_t      errlen;
} reader_t;

static int fail(reader_t *r, const char *fmt, ...)
{
    if (r->err && r->errlen) {
        int     n = snprintf(r->err, r->errlen, "tuning model, line %d: ", r->line);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < r->errlen)
            vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Takes the next line into r->buf (without '\n'). 0, or -1 (message). */
static int next_line(reader_t *r)
{
    r->line++;
    if (r->p >= r->end)
        return fail(r, "the file ends early (truncated?)");
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!nl)
        return fail(r, "the last line has no newline (truncated?)");
    size_t n = (size_t)(nl - r->p);
    if (n >= sizeof r->buf)
        return fail(r, "line longer than %zu bytes", sizeof r->buf - 1);
    if (memchr(r->p, '\0', n))
        return fail(r, "NUL byte in the text");
    memcpy(r->buf, r->p, n);
    r->buf[n] = '\0';
    r->p = nl + 1;
    return 0;
}

/* Splits r->buf into at most max words (in place). */
static int words(char *s, char **w, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (n == max)
            return max + 1;
        w[n++] = t;
    }
    return n;
}

static int to_long(reader_t *r, const char *s, long lo, long hi, long *out, const char *what)
{
    char *end;
    errno   = 0;
    long v  = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return fail(r, "%s '%s' is not an integer in %ld..%ld", what, s, lo, hi);
    *out = v;
    return 0;
}

static int to_double(reader_t *r, const char *s, double *out, const char *what)
{
    char *end;
    errno    = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || *end || !isfinite(v))
        return fail(r, "%s '%s' is not a finite number", what, s);
    *out = v;
    return 0;
}

uint64_t tagg_tune_checksum(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* The fast path of node lines (a 100-tree forest is about 150,000 of them:
 * 85 ms through strtok_r, strtol and strtod on this machine, most of the
 * parse). It takes exactly what tagg-tune writes -- "node I INPUT THRESHOLD
 * LEFT RIGHT VALUE", single spaces, integers in decimal without leading
 * zeros, other numbers as Python's float.hex() writes a normal double
 * ([-]0x1.<13 hex digits>p<exponent>) -- and converts it exactly (the same
 * double strtod gives); any other line, or one whose fields are out of range,
 * goes through the general path, which names what is wrong. */
static const char *fast_int(const char *s, const char *e, long *out)
{
    int neg = s < e && *s == '-';
    s += neg;
    if (s >= e || *s < '0' || *s > '9' || (*s == '0' && s + 1 < e && s[1] >= '0' && s[1] <= '9'))
        return NULL;
    long v = 0;
    int  n = 0;
    for (; s < e && *s >= '0' && *s <= '9' && n < 15; s++, n++)
        v = v * 10 + (*s - '0');
    if ((s < e && *s >= '0' && *s <= '9') || (neg && v == 0))
        return NULL; /* more digits than the fast path takes; -0 (strtod's negative zero) */
    *out = neg ? -v : v;
    return s;
}

static int hexdigit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static const char *fast_num(const char *s, const char *e, double *out)
{
    long        iv;
    const char *t = fast_int(s, e, &iv);
    if (t && (t == e || *t != 'x')) { /* an integer (tagg-tune writes those below 2^53 so) */
        *out = (double)iv;
        return t;
    }
    int neg = s < e && *s == '-';
    s += neg;
    if (e - s < 21 || memcmp(s, "0x1.", 4) != 0) /* 0x1. + 13 digits + p + sign + digit */
        return NULL;
    s += 4;
    uint64_t mant = 1;
    for (int i = 0; i < 13; i++, s++) {
        int d = hexdigit(*s);
        if (d < 0)
            return NULL;
        mant = mant << 4 | (uint64_t)d;
    }
    if (*s++ != 'p' || (*s != '+' && *s != '-'))
        return NULL;
    int  eneg = *s++ == '-';
    long ex;
    if (!(s = fast_int(s, e, &ex)) || ex < 0) /* after the sign: digits only (strtod refuses "p--5") */
        return NULL;
    ex = eneg ? -ex : ex;
    if (ex < -1022 || ex > 1023)
        return NULL;
    double v = ldexp((double)mant, (int)ex - 52); /* mant < 2^53: exact */
    *out = neg ? -v : v;
    return s;
}

/* 1: node i of a tree of n nodes taken from the text (r advanced past its
 * line), into *nd with its fields; 0: nothing taken, the general path reads it. */
static int fast_node(reader_t *r, const tagg_tune_model_t *m, int i, int n, node_t *nd, long *input, long *left,
                     long *right)
{
    const char *s = r->p, *e = r->end;
    long        idx;
    double      thr, val;
    if (e - s < 16 || memcmp(s, "node ", 5) != 0)
        return 0;
    s += 5;
    if (!(s = fast_int(s, e, &idx)) || s >= e || *s++ != ' ' || idx != i)
        return 0;
    if (!(s = fast_int(s, e, input)) || s >= e || *s++ != ' ' || *input < -1 || *input > m->ninputs - 1)
        return 0;
    if (!(s = fast_num(s, e, &thr)) || s >= e || *s++ != ' ')
        return 0;
    if (!(s = fast_int(s, e, left)) || s >= e || *s++ != ' ' || *left < -1 || *left > n - 1)
        return 0;
    if (!(s = fast_int(s, e, right)) || s >= e || *s++ != ' ' || *right < -1 || *right > n - 1)
        return 0;
    if (!(s = fast_num(s, e, &val)) || s >= e || *s != '\n')
        return 0;
    nd->threshold = thr, nd->value = val;
    r->p = s + 1, r->line++;
    return 1;
}

/* One tree: its header is in r->buf already split. Checks that it is a tree. */
static int parse_tree(reader_t *r, const tagg_tune_model_t *m, tree_t *t)
{
    char *w[8];
    t->node = calloc((size_t)t->n, sizeof *t->node);
    char *seen = calloc((size_t)t->n, 1);
    if (!t->node || !seen) {
        free(seen);
        return fail(r, "out of memory");
    }
    int rc = 0;
    for (int i = 0; i < t->n && rc == 0; i++) {
        long    idx, input, left, right;
        node_t *nd = &t->node[i];
        if (fast_node(r, m, i, t->n, nd, &input, &left, &right))
            goto took;
        if ((rc = next_line(r)) < 0)
            break;
        if (words(r->buf, w, 7) != 7 || strcmp(w[0], "node") != 0) {
            rc = fail(r, "expected 'node INDEX INPUT THRESHOLD LEFT RIGHT VALUE'");
            break;
        }
        if (to_long(r, w[1], i, i, &idx, "node index") < 0 ||
            to_long(r, w[2], -1, m->ninputs - 1, &input, "input") < 0 ||
            to_double(r, w[3], &nd->threshold, "threshold") < 0 ||
            to_long(r, w[4], -1, t->n - 1, &left, "left child") < 0 ||
            to_long(r, w[5], -1, t->n - 1, &right, "right child") < 0 ||
            to_double(r, w[6], &nd->value, "value") < 0) {
            rc = -1;
            break;
        }
    took:
        nd->input = (int)input, nd->left = (int)left, nd->right = (int)right;
        if (input < 0 ? (left != -1 || right != -1) : (left <= i || right <= i || left == right)) {
            rc = fail(r, input < 0 ? "a leaf has children" : "children must be distinct nodes after their parent");
            break;
        }
        if (input >= 0) {
            if (seen[left] || seen[right]) {
                rc = fail(r, "node %ld reached twice: not a tree", seen[left] ? left : right);
                break;
            }
            seen[left] = seen[right] = 1;
        }
    }
    /* every node but the root has exactly one parent */
    for (int i = 1; rc == 0 && i < t->n; i++)
        if (!seen[i])
            rc = fail(r, "node %d of the tree is never reached", i);
    free(seen);
    return rc;
}

/* n lines of at least `least` bytes each (what, in the message) fit in what
 * is left: a count the rest cannot hold is a lie. */
static int count_fits(reader_t *r, long n, size_t least, const char *what)
{
    if ((size_t)n * least > (size_t)(r->end - r->p))
        return fail(r, "%ld %s cannot fit in the %zu bytes left (truncated?)", n, what, (size_t)(r->end - r->p));
    return 0;
}

/* The head of an optional section, "NAME N" (words w[0..nw)): a section of
 * format `since` or later, N in 1..max (what, in the message). */
static int section_head(reader_t *r, const tagg_tune_model_t *m, char **w, int nw, const char *name, int since,
                        long max, const char *what, long *n)
{
    if (m->version < since)
        return fail(r, "a '%s' section in a model of format %d (it came with format %d)", name, m->version, since);
    if (nw != 2)
        return fail(r, "expected '%s N'", name);
    return to_long(r, w[1], 1, max, n, what);
}

/* "combos N" (words w[0..nw)), then N lines "combo V1 .. Vk", k the
 * candidates lines, each value one of its setting's candidates. */
static int parse_combos(reader_t *r, tagg_tune_model_t *m, char **w, int nw)
{
    long n;
    if (section_head(r, m, w, nw, "combos", 5, TAGG_TUNE_MAX_COMBOS, "combination count", &n) < 0)
        return -1;
    if (m->ncand < 1)
        return fail(r, "combinations of no candidates");
    if (count_fits(r, n, 7, "combinations") < 0) /* each combo line is at least 7 bytes */
        return -1;
    m->combo = malloc(sizeof *m->combo * (size_t)n * (size_t)m->ncand);
    if (!m->combo)
        return fail(r, "out of memory");
    for (long c = 0; c < n; c++) {
        if (next_line(r) < 0)
            return -1;
        char *v[TAGG_TV_COUNT_ + 2];
        int   k = words(r->buf, v, TAGG_TV_COUNT_ + 2);
        if (k != m->ncand + 1 || strcmp(v[0], "combo") != 0)
            return fail(r, "expected 'combo' and %d value%s", m->ncand, m->ncand == 1 ? "" : "s");
        double *row = &m->combo[c * m->ncand];
        for (int i = 0; i < m->ncand; i++) {
            if (to_double(r, v[i + 1], &row[i], "combination value") < 0)
                return -1;
            int known = 0;
            for (int j = 0; j < m->cand[i].n && !known; j++)
                known = m->cand[i].value[j] == row[i];
            if (!known)
                return fail(r, "combination value %s of '%s' is not one of its candidates", v[i + 1],
                            tagg_tune_var_name(m->cand[i].var));
        }
        m->ncombo++;
    }
    return 0;
}

/* 'domain N' (in w) and its N 'range' lines: classes exact and each listed
 * once, values finite, every least value at most its largest. */
static int parse_domain(reader_t *r, tagg_tune_model_t *m, char **w, int nw)
{
    long n;
    if (section_head(r, m, w, nw, "domain", 6, TAGG_TUNE_MAX_RANGES, "domain class count", &n) < 0 ||
        count_fits(r, n, 24, "domain classes") < 0) /* each range line is at least 24 bytes */
        return -1;
    if (!(m->range = calloc((size_t)n, sizeof *m->range)))
        return fail(r, "out of memory");
    for (m->nrange = 0; m->nrange < (int)n; m->nrange++) {
        range_t *g = &m->range[m->nrange];
        char    *v[16];
        if (next_line(r) < 0)
            return -1;
        int k = words(r->buf, v, 14);
        if (k != 12 || strcmp(v[0], "range") != 0)
            return fail(r, "expected 'range FS_KIND IS_READ RANKS NODES CONTIGUOUS SPREAD MULTI BMIN BMAX PMIN PMAX'");
        double *out[11] = {&g->cls[0], &g->cls[1], &g->cls[2], &g->cls[3], &g->cls[4], &g->cls[5],
                           &g->cls[6], &g->bmin, &g->bmax, &g->pmin, &g->pmax};
        for (int i = 0; i < 11; i++)
            if (to_double(r, v[i + 1], out[i], "domain value") < 0)
                return -1;
        for (int i = 4; i < RANGE_CLASS; i++)
            if (g->cls[i] != 0 && g->cls[i] != 1)
                return fail(r, "contiguous, spread and multi are 0 or 1");
        if (!(g->bmin <= g->bmax && g->pmin <= g->pmax))
            return fail(r, "a least value above its largest");
        for (int j = 0; j < m->nrange; j++)
            if (same_class(m->range[j].cls, g->cls))
                return fail(r, "a domain class listed twice");
    }
    return 0;
}

int tagg_tune_parse(const char *text, size_t len, tagg_tune_model_t **out, char *err, size_t errlen)
{
    reader_t r = {.p = text, .end = text + len, .err = err, .errlen = errlen};
    char    *w[72];
    long     v;
    *out = NULL;
    if (len > TAGG_TUNE_MAX_BYTES)
        return fail(&r, "larger than %zu bytes: not a model file", TAGG_TUNE_MAX_BYTES);
    tagg_tune_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return fail(&r, "out of memory");
    int rc = -1;
#define TAKE()                                                                                                        \
    do {                                                                                                              \
        if (next_line(&r) < 0)                                                                                        \
            goto done;                                                                                                \
    } while (0)
    TAKE();
    if (strncmp(r.buf, TAGG_TUNE_MAGIC " ", sizeof TAGG_TUNE_MAGIC) != 0) {
        fail(&r, "not a tagg-tune model file (the first line must be '" TAGG_TUNE_MAGIC " %d')", TAGG_TUNE_VERSION);
        goto done;
    }
    if (to_long(&r, r.buf + sizeof TAGG_TUNE_MAGIC, 1, 1000000, &v, "format version") < 0)
        goto done;
    if (v < 1 || v > TAGG_TUNE_VERSION) {
        fail(&r, "format %ld, this tagg reads formats 1 to %d (refit with the matching tagg-tune)", v, TAGG_TUNE_VERSION);
        goto done;
    }
    m->version = (int)v;
    TAKE();
    int nw = words(r.buf, w, 4);
    m->kind = -1;
    for (int k = 0; nw == 2 && strcmp(w[0], "kind") == 0 && k < 3; k++)
        if (strcmp(w[1], kind_names[k]) == 0)
            m->kind = k;
    if (m->kind < 0) {
        fail(&r, "expected 'kind decision_tree|random_forest|gradient_boosting'");
        goto done;
    }
    TAKE();
    if (strcmp(r.buf, "target log_seconds_per_byte") == 0)
        m->per_byte = 1;
    else if (strcmp(r.buf, "target log_seconds") != 0) {
        fail(&r, "expected 'target log_seconds' or 'target log_seconds_per_byte'");
        goto done;
    }
    TAKE();
    nw = words(r.buf, w, 3);
    if (nw != 2 || strcmp(w[0], "inputs") != 0 || to_long(&r, w[1], 1, TAGG_TV_COUNT_, &v, "input count") < 0) {
        if (nw != 2 || strcmp(w[0], "inputs") != 0)
            fail(&r, "expected 'inputs N'");
        goto done;
    }
    for (int i = 0; i < (int)v; i++, m->ninputs++) {
        TAKE();
        nw = words(r.buf, w, 3);
        int var = nw == 2 && strcmp(w[0], "input") == 0 ? tagg_tune_var_of(w[1]) : -2;
        if (var == -2) {
            fail(&r, "expected 'input NAME'");
            goto done;
        }
        if (var < 0) {
            fail(&r, "unknown input '%s' (this tagg knows: ranks, nodes, bytes_per_rank, ... see tagg/tune.h)", w[1]);
            goto done;
        }
        if (tagg_tune_uses(m, var)) {
            fail(&r, "input '%s' listed twice", w[1]);
            goto done;
        }
        m->input[i] = var;
    }
    for (;;) {
        TAKE();
        nw = words(r.buf, w, 70);
        if (nw < 1 || strcmp(w[0], "candidates") != 0)
            break;
        if (nw < 3 || nw > 66) {
            fail(&r, "expected 'candidates SETTING V1 V2 ...' with 1 to 64 values");
            goto done;
        }
        int var = tagg_tune_var_of(w[1]);
        if (var < TAGG_TV_FIRST_SETTING) {
            fail(&r, "'%s' is not a setting the engine chooses", w[1]);
            goto done;
        }
        if (!tagg_tune_uses(m, var)) {
            fail(&r, "candidates for '%s', which is not an input of the model", w[1]);
            goto done;
        }
        for (int c = 0; c < m->ncand; c++)
            if (m->cand[c].var == var) {
                fail(&r, "candidates for '%s' given twice", w[1]);
                goto done;
            }
        cand_t *c = &m->cand[m->ncand];
        c->value  = malloc(sizeof *c->value * (size_t)(nw - 2));
        if (!c->value) {
            fail(&r, "out of memory");
            goto done;
        }
        m->ncand++;
        c->var = var;
        for (int i = 2; i < nw; i++)
            if (to_double(&r, w[i], &c->value[c->n++], "candidate value") < 0)
                goto done;
    }
    /* r.buf holds the combos line (format 5, optional) or the combine line */
    if (nw >= 1 && strcmp(w[0], "combos") == 0) {
        if (parse_combos(&r, m, w, nw) < 0)
            goto done;
        TAKE();
        nw = words(r.buf, w, 70);
    }
    if (nw == 2 && strcmp(w[0], "combine") == 0 && strcmp(w[1], "mean") == 0 && m->kind != KIND_GBDT) {
        m->init = 0, m->rate = 1;
    } else if (nw == 4 && strcmp(w[0], "combine") == 0 && strcmp(w[1], "gbdt") == 0 && m->kind == KIND_GBDT) {
        if (to_double(&r, w[2], &m->init, "initial value") < 0 || to_double(&r, w[3], &m->rate, "learning rate") < 0)
            goto done;
    } else {
        fail(&r, "expected '%s'", m->kind == KIND_GBDT ? "combine gbdt INIT RATE" : "combine mean");
        goto done;
    }
    TAKE();
    nw = words(r.buf, w, 3);
    if (nw >= 1 && strcmp(w[0], "margin") == 0) { /* optional */
        if (nw != 2 || to_double(&r, w[1], &m->margin, "margin") < 0)
            goto done;
        if (!(m->margin >= 0 && m->margin < 1)) {
            fail(&r, "margin %s: must be at least 0 and below 1", w[1]);
            goto done;
        }
        TAKE();
        nw = words(r.buf, w, 3);
    }
    if (nw >= 1 && strcmp(w[0], "domain") == 0) { /* optional, format 6 */
        if (parse_domain(&r, m, w, nw) < 0)
            goto done;
        TAKE();
        nw = words(r.buf, w, 3);
    }
    if (nw != 2 || strcmp(w[0], "trees") != 0) {
        fail(&r, "expected 'trees N'");
        goto done;
    }
    if (to_long(&r, w[1], 1, 100000, &v, "tree count") < 0)
        goto done;
    if (m->kind == KIND_TREE && v != 1) {
        fail(&r, "a decision_tree model has one tree, not %ld", v);
        goto done;
    }
    if (count_fits(&r, v, 14, "trees") < 0) /* each node line is at least 14 bytes */
        goto done;
    m->tree = calloc((size_t)v, sizeof *m->tree);
    if (!m->tree) {
        fail(&r, "out of memory");
        goto done;
    }
    m->ntrees = (int)v;
    for (int t = 0; t < m->ntrees; t++) {
        long idx, n;
        TAKE();
        nw = words(r.buf, w, 4);
        if (nw != 3 || strcmp(w[0], "tree") != 0) {
            fail(&r, "expected 'tree INDEX NODES'");
            goto done;
        }
        if (to_long(&r, w[1], t, t, &idx, "tree index") < 0 || to_long(&r, w[2], 1, 1L << 24, &n, "node count") < 0)
            goto done;
        if (count_fits(&r, n, 14, "nodes") < 0)
            goto done;
        m->tree[t].n = (int)n;
        if (parse_tree(&r, m, &m->tree[t]) < 0)
            goto done;
    }
    size_t covered = (size_t)(r.p - text);
    TAKE();
    nw = words(r.buf, w, 3);
    char *end;
    if (nw != 2 || strcmp(w[0], "end") != 0 || strlen(w[1]) != 16) {
        fail(&r, "expected 'end SUM' (16 hex digits)");
        goto done;
    }
    errno          = 0;
    uint64_t given = strtoull(w[1], &end, 16);
    if (errno || *end) {
        fail(&r, "expected 'end SUM' (16 hex digits)");
        goto done;
    }
    if (given != tagg_tune_checksum(text, covered)) {
        fail(&r, "checksum mismatch: the file was changed or damaged after tagg-tune wrote it");
        goto done;
    }
    m->sum = given;
    if (r.p != r.end) {
        r.line++;
        fail(&r, "text after the 'end' line");
        goto done;
    }
    rc = 0;
#undef TAKE
done:
    if (rc < 0)
        tagg_tune_free(m);
    else
        *out = m;
    return rc;
}

int tagg_tune_read(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    *text  = NULL, *len = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "tuning model %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > TAGG_TUNE_MAX_BYTES) {
        snprintf(err, errlen, "tuning model %s: not a regular file of at most %zu bytes", path, TAGG_TUNE_MAX_BYTES);
        close(fd);
        return -1;
    }
    size_t want = (size_t)st.st_size, got = 0;
    char  *buf  = malloc(want ? want : 1);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "tuning model %s: out of memory", path);
        return -1;
    }
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "tuning model %s: %s", path, strerror(errno));
            close(fd);
            free(buf);
            return -1;
        }
        if (n == 0)
            break; /* shorter than it was: the parse finds it truncated */
        got += (size_t)n;
    }
    close(fd);
    *text = buf, *len = got;
    return 0;
}

int tagg_tune_load(const char *path, tagg_tune_model_t **out, char *err, size_t errlen)
{
    char  *text;
    size_t len;
    *out = NULL;
    if (tagg_tune_read(path, &text, &len, err, errlen) < 0)
        return -1;
    char msg[512];
    int  rc = tagg_tune_parse(text, len, out, msg, sizeof msg);
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", path, msg);
    free(text);
    return rc;
}

/* ---- evaluation ---------------------------------------------------------- */

double tagg_tune_resident_step(double share)
{
    if (!(share > 0)) /* NaN too */
        return 0;
    if (share >= 1)
        return 1;
    return floor(share * TAGG_TUNE_RESIDENT_STEPS + 0.5) / TAGG_TUNE_RESIDENT_STEPS;
}

double tagg_tune_ahead_step(double per_byte)
{
    if (!(per_byte > 0)) /* NaN too */
        return 0;
    if (per_byte >= TAGG_TUNE_AHEAD_MAX)
        return TAGG_TUNE_AHEAD_MAX;
    return floor(per_byte * TAGG_TUNE_RESIDENT_STEPS + 0.5) / TAGG_TUNE_RESIDENT_STEPS;
}

double tagg_tune_call_bytes(const double x[TAGG_TV_COUNT_])
{
    double b = x[TAGG_TV_RANKS] * x[TAGG_TV_BYTES_PER_RANK];
    return b > 1.0 ? b : 1.0; /* also when NaN */
}

void tagg_tune_effective(double x[TAGG_TV_COUNT_], int version)
{
    double dmin = x[TAGG_TV_DIO_MIN], access;
    if (version < 2 || !(dmin > 0) || x[TAGG_TV_REPEAT] == 0)
        return;
    if (x[TAGG_TV_DIRECT] >= 0.5) {
        access = x[TAGG_TV_BYTES_PER_RANK] / (x[TAGG_TV_PIECES_PER_RANK] > 1 ? x[TAGG_TV_PIECES_PER_RANK] : 1);
        /* format 3: the read cache (rcache.h) serves such re-reads when it
         * holds the rank's runs: each under its largest cover, all within
         * its slots; format 4: from memory, as the page cache serves a
         * buffered re-read it holds (resident 1), though the page cache, the
         * only thing the engine's probe asks, holds none of a direct one */
        if (version >= 3 && access < (double)TAGG_TUNE_RCACHE_RUN &&
            x[TAGG_TV_BYTES_PER_RANK] <= (double)TAGG_TUNE_RCACHE_SLOTS * (double)TAGG_TUNE_RCACHE_RUN) {
            if (version >= 4 && access >= dmin)
                x[TAGG_TV_RESIDENT] = 1, x[TAGG_TV_IN_FLIGHT] = 0, x[TAGG_TV_FLIGHT_AHEAD] = 0;
            return;
        }
    }
    else {
        access = x[TAGG_TV_RANKS] * x[TAGG_TV_BYTES_PER_RANK] / (x[TAGG_TV_AGGREGATORS] > 1 ? x[TAGG_TV_AGGREGATORS] : 1);
        access = access < x[TAGG_TV_BUFFER_SIZE] ? access : x[TAGG_TV_BUFFER_SIZE];
    }
    if (access >= dmin)
        x[TAGG_TV_REPEAT] = 0;
}

double tagg_tune_predict(const tagg_tune_model_t *m, const double x0[TAGG_TV_COUNT_], int *leaves)
{
    float  in[TAGG_TV_COUNT_];
    double x[TAGG_TV_COUNT_];
    memcpy(x, x0, sizeof x);
    tagg_tune_effective(x, m->version);
    for (int i = 0; i < m->ninputs; i++)
        in[i] = (float)x[m->input[i]];
    double sum = 0;
    for (int t = 0; t < m->ntrees; t++) {
        const node_t *nd = m->tree[t].node;
        int           i  = 0;
        while (nd[i].input >= 0)
            i = (double)in[nd[i].input] <= nd[i].threshold ? nd[i].left : nd[i].right;
        if (leaves)
            leaves[t] = i;
        sum += nd[i].value;
    }
    double ln = m->kind == KIND_GBDT ? m->init + m->rate * sum : sum / m->ntrees;
    /* per byte: the bytes of the call are pattern, the same for every candidate
     * setting, so the choice's order is the trees' order either way */
    return m->per_byte ? exp(ln) * tagg_tune_call_bytes(x) : exp(ln);
}

double tagg_tune_choose(const tagg_tune_model_t *m, double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_])
{
    return tagg_tune_choose_within(m, x, forced, NULL);
}

double tagg_tune_choose_within(const tagg_tune_model_t *m, double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                               const double upper[TAGG_TV_COUNT_])
{
    return tagg_tune_choose_realized(m, x, forced, upper, NULL, NULL);
}

double tagg_tune_choose_realized(const tagg_tune_model_t *m, double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                                 const double upper[TAGG_TV_COUNT_], tagg_tune_realize_t realize, void *ctx)
{
    const cand_t *free_c[TAGG_TV_COUNT_];
    int           nfree = 0;
    for (int c = 0; c < m->ncand; c++)
        if (!forced[m->cand[c].var])
            free_c[nfree++] = &m->cand[c];
    if (nfree == 0)
        return -1;
    double try[TAGG_TV_COUNT_], best[TAGG_TV_COUNT_], best_t = INFINITY;
    int    pos[TAGG_TV_COUNT_] = {0}, aggr_free = 0;
    for (int i = 0; i < nfree; i++)
        aggr_free |= free_c[i]->var == TAGG_TV_AGGREGATORS;
    memcpy(try, x, sizeof try);
    memcpy(best, x, sizeof best);
    for (int combo = 0; combo < TAGG_TUNE_MAX_COMBOS; combo++) {
        if (m->ncombo) { /* format 5: the combinations the records held that agree with the forced settings */
            if (combo == m->ncombo)
                break;
            const double *row   = &m->combo[combo * m->ncand];
            int           match = 1;
            for (int c = 0; c < m->ncand && match; c++)
                match = !forced[m->cand[c].var] || row[c] == x[m->cand[c].var];
            if (!match)
                continue;
            for (int c = 0; c < m->ncand; c++)
                try[m->cand[c].var] = row[c];
        }
        else
            for (int i = 0; i < nfree; i++)
                try[free_c[i]->var] = free_c[i]->value[pos[i]];
        /* only combinations a call can have (records say so): a direct call
         * has 0 aggregators, an aggregated one at least 1 */
        int    ok = !aggr_free || (try[TAGG_TV_DIRECT] >= 0.5 ? try[TAGG_TV_AGGREGATORS] == 0
                                                             : try[TAGG_TV_AGGREGATORS] >= 1);
        for (int i = 0; ok && upper && i < nfree; i++) /* and within the caller's limits */
            ok = !(upper[free_c[i]->var] > 0) || try[free_c[i]->var] <= upper[free_c[i]->var];
        double run[TAGG_TV_COUNT_]; /* the candidate as the call would run it */
        memcpy(run, try, sizeof run);
        ok        = ok && (!realize || realize(ctx, run) >= 0);
        double t  = ok ? tagg_tune_predict(m, run, NULL) : INFINITY;
        if (t < best_t)
            best_t = t, memcpy(best, run, sizeof best);
        if (m->ncombo)
            continue;
        /* next combination of every candidate value (odometer) */
        int i = 0;
        while (i < nfree && ++pos[i] == free_c[i]->n)
            pos[i++] = 0;
        if (i == nfree)
            break;
    }
    if (best_t == INFINITY)
        return -1; /* no candidate a call can have */
    memcpy(x, best, sizeof best);
    return best_t;
}

/* ---- records ------------------------------------------------------------- */

int tagg_tune_record_format(const tagg_tune_record_t *r, const char *op, const char *file, char *buf, size_t len)
{
    size_t n = 0;
#define PUT(...)                                                                                                      \
    do {                                                                                                              \
        int k_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);                                               \
        if (k_ < 0)                                                                                                   \
            return -1;                                                                                                \
        n += (size_t)k_;                                                                                              \
    } while (0)
    PUT("{\"tagg_record\":%d,\"op\":\"%s\",\"file\":\"", TAGG_TUNE_RECORD_VERSION, op);
    for (const unsigned char *p = (const unsigned char *)(file ? file : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            PUT("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            PUT("\\u%04x", *p); /* bytes outside printable ASCII, one each */
        else
            PUT("%c", *p);
    }
    PUT("\"");
    for (int v = 0; v < TAGG_TV_COUNT_; v++)
        PUT(",\"%s\":%.17g", var_names[v], isfinite(r->v[v]) ? r->v[v] : 0.0);
    PUT(",\"cost_direct\":%.17g,\"cost_aggr\":%.17g", isfinite(r->cost_direct) ? r->cost_direct : 0.0,
        isfinite(r->cost_aggr) ? r->cost_aggr : 0.0);
    PUT(",\"t_plan\":%.17g,\"t_move\":%.17g,\"t_fs\":%.17g,\"t_total\":%.17g}\n", r->t_plan, r->t_move, r->t_fs,
        r->t_total);
#undef PUT
    return n < len ? (int)n : -1;
}

/* ---- the measured check (tune.h) ------------------------------------------ */

double tagg_tune_check_median(const double *v, int n)
{
    double s[TAGG_TUNE_CHECK_MAX];
    n = n < 1 ? 1 : n > TAGG_TUNE_CHECK_MAX ? TAGG_TUNE_CHECK_MAX : n;
    for (int i = 0; i < n; i++) { /* insertion sort: at most 16 */
        double t = v[i];
        int    j = i;
        for (; j > 0 && s[j - 1] > t; j--)
            s[j] = s[j - 1];
        s[j] = t;
    }
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int tagg_tune_check_close_call(double tc, double tr, double close)
{
    return close > 0 && fabs(tr - tc) < close * tc;
}

tagg_tune_check_t tagg_tune_check_next(tagg_tune_check_t state, const double *choice, int nc, const double *rival,
                                       int nr, int k, double close)
{
    if (state == TAGG_TUNE_CHECK_RIVAL || state == TAGG_TUNE_CHECK_CHOICE || k < 1)
        return state;
    if (state == TAGG_TUNE_CHECK_NONE || state == TAGG_TUNE_CHECK_AGAIN) /* the choice's round: k calls more */
        return nc >= nr + k || nc >= TAGG_TUNE_CHECK_MAX ? TAGG_TUNE_CHECK_TRY_RIVAL : state;
    if (state != TAGG_TUNE_CHECK_TRY_RIVAL || nr < k || (nr < nc && nr < TAGG_TUNE_CHECK_MAX))
        return state; /* the rival's round: as many calls as the choice's */
    if (nc < 1)
        return TAGG_TUNE_CHECK_CHOICE;
    double tc = tagg_tune_check_median(choice, nc), tr = tagg_tune_check_median(rival, nr);
    int    another = nc + k <= TAGG_TUNE_CHECK_MAX && nc < TAGG_TUNE_CHECK_ROUNDS * k;
    if (another && tagg_tune_check_close_call(tc, tr, close))
        return TAGG_TUNE_CHECK_AGAIN; /* a close call: another round of each */
    if (another && tr < tc)
        return TAGG_TUNE_CHECK_AGAIN; /* an overturn takes every round */
    return tr < tc ? TAGG_TUNE_CHECK_RIVAL : TAGG_TUNE_CHECK_CHOICE;
}

static int check_settled(tagg_tune_check_t s)
{
    return s == TAGG_TUNE_CHECK_RIVAL || s == TAGG_TUNE_CHECK_CHOICE;
}

tagg_tune_check_pick_t tagg_tune_check_pick(tagg_tune_check_t s0, tagg_tune_check_t s1, int challenger)
{
    tagg_tune_check_pick_t p = {.run = 0, .stage = 0, .pair = {0, 1}};
    tagg_tune_check_t      s = s0;
    if (check_settled(s0)) {
        int winner = s0 == TAGG_TUNE_CHECK_RIVAL;
        if (!challenger)
            return (tagg_tune_check_pick_t){.run = winner, .stage = -1, .pair = {0, 1}};
        p.stage = 1, p.pair[0] = winner, p.pair[1] = 2, s = s1;
    }
    switch (s) {
    case TAGG_TUNE_CHECK_TRY_RIVAL:
        p.run = p.pair[1], p.arm = 2;
        break;
    case TAGG_TUNE_CHECK_RIVAL:
        p.run = p.pair[1], p.stage = -1;
        break;
    case TAGG_TUNE_CHECK_CHOICE:
        p.run = p.pair[0], p.stage = -1;
        break;
    default: /* NONE, AGAIN, or a state no message sets: the stage's choice, timed */
        p.run = p.pair[0], p.arm = 1;
    }
    return p;
}
