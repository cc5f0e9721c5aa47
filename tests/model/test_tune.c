/* Unit tests of the tuning-model parser and evaluator (model/src/tune.c):
 * hand-made models whose predictions and choices are computed by hand, every
 * kind of bad file refused with the line named, and a bounded mutation fuzz
 * of the parser (no crash, no hang; ASan in the sanitizer build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tagg/tune.h"

/* CMocka 1.1 has no assert_double_equal. */
static void near(double got, double want, double eps, int line)
{
    if (!(fabs(got - want) <= eps))
        fail_msg("line %d: got %.17g, want %.17g", line, got, want);
}
#define assert_double_equal(a, b, eps) near((a), (b), (eps), __LINE__)

/* Appends the 'end' line to a model body. */
static char *seal(const char *body)
{
    size_t n   = strlen(body);
    char  *out = malloc(n + 32);
    assert_non_null(out);
    memcpy(out, body, n);
    snprintf(out + n, 32, "end %016llx\n", (unsigned long long)tagg_tune_checksum(body, n));
    return out;
}

/* A tree on (aggregators, bytes_per_rank): ln t =
 *   aggregators <= 1.5 ? (bytes <= 1e6 ? ln 0.5 : ln 4) : (bytes <= 1e6 ? ln 1 : ln 2) */
static const char *tree_body =
    "tagg-tune model 1\n"
    "kind decision_tree\n"
    "target log_seconds\n"
    "inputs 2\n"
    "input aggregators\n"
    "input bytes_per_rank\n"
    "candidates aggregators 1 2\n"
    "combine mean\n"
    "trees 1\n"
    "tree 0 7\n"
    "node 0 0 0x1.8p+0 1 4 0x0p+0\n"
    "node 1 1 1000000 2 3 0x0p+0\n"
    "node 2 -1 0 -1 -1 -0.69314718055994529\n"
    "node 3 -1 0 -1 -1 1.3862943611198906\n"
    "node 4 1 1000000 5 6 0x0p+0\n"
    "node 5 -1 0 -1 -1 0\n"
    "node 6 -1 0 -1 -1 0.69314718055994529\n";

static tagg_tune_model_t *load(const char *body)
{
    char              *text = seal(body);
    char               err[512];
    tagg_tune_model_t *m  = NULL;
    int                rc = tagg_tune_parse(text, strlen(text), &m, err, sizeof err);
    if (rc < 0)
        fail_msg("parse failed: %s", err);
    free(text);
    return m;
}

/* A model of format `version` with one split on `input`: ln(seconds) is
 * ln(10 ms) when the input is <= 0.5, else ln(1 ms). */
static tagg_tune_model_t *one_split(int version, const char *input)
{
    char text[1024];
    snprintf(text, sizeof text,
             "tagg-tune model %d\nkind decision_tree\ntarget log_seconds\ninputs 1\ninput %s\ncombine mean\ntrees 1\n"
             "tree 0 3\nnode 0 0 0.5 1 2 0\nnode 1 -1 0 -1 -1 -4.6051701859880918\n"
             "node 2 -1 0 -1 -1 -6.9077552789821368\n",
             version, input);
    return load(text);
}

static void test_predict_tree(void **state)
{
    (void)state;
    tagg_tune_model_t *m = load(tree_body);
    assert_string_equal(tagg_tune_kind(m), "decision_tree");
    assert_int_equal(tagg_tune_trees(m), 1);
    assert_int_equal(tagg_tune_inputs(m), 2);
    assert_true(tagg_tune_uses(m, TAGG_TV_AGGREGATORS));
    assert_false(tagg_tune_uses(m, TAGG_TV_RANKS));
    double x[TAGG_TV_COUNT_] = {0};
    int    leaf;
    x[TAGG_TV_AGGREGATORS] = 1, x[TAGG_TV_BYTES_PER_RANK] = 5e5;
    assert_double_equal(tagg_tune_predict(m, x, &leaf), 0.5, 1e-12);
    assert_int_equal(leaf, 2);
    x[TAGG_TV_BYTES_PER_RANK] = 4e6;
    assert_double_equal(tagg_tune_predict(m, x, &leaf), 4.0, 1e-12);
    assert_int_equal(leaf, 3);
    x[TAGG_TV_AGGREGATORS] = 2;
    assert_double_equal(tagg_tune_predict(m, x, &leaf), 2.0, 1e-12);
    assert_int_equal(leaf, 6);
    /* the threshold test is <= on the float32 value of the input */
    x[TAGG_TV_AGGREGATORS] = 1.5;
    tagg_tune_predict(m, x, &leaf);
    assert_int_equal(leaf, 3);
    tagg_tune_free(m);
}

/* tagg_tune_realize_t for the tests: a call whose span holds one domain runs
 * any aggregated candidate with one aggregator (ctx: the largest count it can
 * have, and how many candidates were realized); one of 0 refuses them all. */
struct domains {
    int most, seen;
};
static int one_domain(void *ctx, double x[TAGG_TV_COUNT_])
{
    struct domains *d = ctx;
    d->seen++;
    if (d->most < 1)
        return -1;
    if (x[TAGG_TV_AGGREGATORS] > d->most)
        x[TAGG_TV_AGGREGATORS] = d->most;
    return 0;
}

static void test_choose_realized(void **state)
{
    (void)state;
    tagg_tune_model_t *m                      = load(tree_body);
    double             x[TAGG_TV_COUNT_]      = {0};
    int                forced[TAGG_TV_COUNT_] = {0};
    /* large calls: 2 aggregators predicted 2 s, 1 aggregator 4 s */
    x[TAGG_TV_AGGREGATORS] = 1, x[TAGG_TV_BYTES_PER_RANK] = 8e6;
    struct domains two = {2, 0};
    assert_double_equal(tagg_tune_choose_realized(m, x, forced, NULL, one_domain, &two), 2.0, 1e-12);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 2, 0);
    assert_int_equal(two.seen, 2); /* each candidate realized once */
    /* a call that can have one aggregator only: 2 runs as 1, so it is predicted
     * as 1 (4 s), not as the 2 s of calls that had two */
    x[TAGG_TV_AGGREGATORS] = 1;
    struct domains one = {1, 0};
    assert_double_equal(tagg_tune_choose_realized(m, x, forced, NULL, one_domain, &one), 4.0, 1e-12);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 1, 0);
    /* without realize, as before: 2 */
    assert_double_equal(tagg_tune_choose_realized(m, x, forced, NULL, NULL, NULL), 2.0, 1e-12);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 2, 0);
    /* every candidate refused: -1, x unchanged */
    struct domains none = {0, 0};
    assert_double_equal(tagg_tune_choose_realized(m, x, forced, NULL, one_domain, &none), -1, 0);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 2, 0);
    assert_int_equal(none.seen, 2);
    tagg_tune_free(m);
}

static void test_choose(void **state)
{
    (void)state;
    tagg_tune_model_t *m                        = load(tree_body);
    double             x[TAGG_TV_COUNT_]        = {0};
    int                forced[TAGG_TV_COUNT_]   = {0};
    /* small calls: 1 aggregator (0.5 s) beats 2 (1 s) */
    x[TAGG_TV_AGGREGATORS] = 2, x[TAGG_TV_BYTES_PER_RANK] = 1000;
    assert_double_equal(tagg_tune_choose(m, x, forced), 0.5, 1e-12);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 1, 0);
    /* large calls: 2 aggregators (2 s) beat 1 (4 s) */
    x[TAGG_TV_AGGREGATORS] = 1, x[TAGG_TV_BYTES_PER_RANK] = 8e6;
    assert_double_equal(tagg_tune_choose(m, x, forced), 2.0, 1e-12);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 2, 0);
    /* a forced key stays forced: nothing else to choose */
    forced[TAGG_TV_AGGREGATORS] = 1;
    x[TAGG_TV_AGGREGATORS]      = 1;
    assert_double_equal(tagg_tune_choose(m, x, forced), -1, 0);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 1, 0);
    tagg_tune_free(m);
    /* direct and aggregators together: the model predicts aggregated calls with
     * 0 aggregators (a combination no call has) fastest; the choice must be a
     * possible one: direct with 0 aggregators (1.5 s) beats 2 aggregators (3 s) */
    m = load("tagg-tune model 1\nkind decision_tree\ntarget log_seconds\ninputs 2\ninput direct\n"
             "input aggregators\ncandidates direct 0 1\ncandidates aggregators 0 1 2\ncombine mean\ntrees 1\n"
             "tree 0 5\nnode 0 1 0x1p-1 1 2 0\nnode 1 0 0x1p-1 3 4 0\nnode 2 -1 0 -1 -1 0x1.193ea7aad030bp+0\n"
             "node 3 -1 0 -1 -1 -5\nnode 4 -1 0 -1 -1 0x1.9f323ecbf984cp-2\n");
    memset(forced, 0, sizeof forced);
    x[TAGG_TV_DIRECT] = 0, x[TAGG_TV_AGGREGATORS] = 1;
    assert_double_equal(tagg_tune_choose(m, x, forced), 1.5, 1e-12);
    assert_double_equal(x[TAGG_TV_DIRECT], 1, 0);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 0, 0);
    /* aggregation forced: only 1 or 2 aggregators (3 s) may be chosen */
    forced[TAGG_TV_DIRECT] = 1, x[TAGG_TV_DIRECT] = 0;
    assert_double_equal(tagg_tune_choose(m, x, forced), 3.0, 1e-12);
    assert_true(x[TAGG_TV_AGGREGATORS] >= 1);
    tagg_tune_free(m);
    /* limits: the larger the round buffer the faster (ln t = 2, 1, 0 for 1, 4,
     * 16 MiB); with the file's buffers at 4 MiB, 16 MiB may not be chosen */
    m = load("tagg-tune model 1\nkind decision_tree\ntarget log_seconds\ninputs 1\ninput buffer_size\n"
             "candidates buffer_size 1048576 4194304 16777216\ncombine mean\ntrees 1\ntree 0 5\n"
             "node 0 0 2097152 1 2 0\nnode 1 -1 0 -1 -1 2\nnode 2 0 8388608 3 4 0\nnode 3 -1 0 -1 -1 1\n"
             "node 4 -1 0 -1 -1 0\n");
    memset(forced, 0, sizeof forced);
    double upper[TAGG_TV_COUNT_] = {[TAGG_TV_BUFFER_SIZE] = 4194304};
    x[TAGG_TV_BUFFER_SIZE]       = 1048576;
    assert_double_equal(tagg_tune_choose_within(m, x, forced, NULL), 1.0, 1e-12);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 16777216, 0);
    assert_double_equal(tagg_tune_choose_within(m, x, forced, upper), exp(1.0), 1e-12);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 4194304, 0);
    upper[TAGG_TV_BUFFER_SIZE] = 1048576; /* exactly the smallest candidate: allowed */
    assert_double_equal(tagg_tune_choose_within(m, x, forced, upper), exp(2.0), 1e-12);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 1048576, 0);
    upper[TAGG_TV_BUFFER_SIZE] = 4096; /* below every candidate: nothing possible, x unchanged */
    assert_double_equal(tagg_tune_choose_within(m, x, forced, upper), -1, 0);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 1048576, 0);
    tagg_tune_free(m);
}

static void test_gbdt_and_forest(void **state)
{
    (void)state;
    /* gbdt: ln t = 0.5 + 0.1 * (leaf0 + leaf1) */
    tagg_tune_model_t *m = load("tagg-tune model 1\nkind gradient_boosting\ntarget log_seconds\ninputs 1\n"
                                "input direct\ncandidates direct 0 1\ncombine gbdt 0.5 0.1\ntrees 2\n"
                                "tree 0 3\nnode 0 0 0.5 1 2 0\nnode 1 -1 0 -1 -1 2\nnode 2 -1 0 -1 -1 -3\n"
                                "tree 1 1\nnode 0 -1 0 -1 -1 1\n");
    double x[TAGG_TV_COUNT_] = {0};
    assert_double_equal(tagg_tune_predict(m, x, NULL), exp(0.5 + 0.1 * 3), 1e-12);
    x[TAGG_TV_DIRECT] = 1;
    assert_double_equal(tagg_tune_predict(m, x, NULL), exp(0.5 + 0.1 * -2), 1e-12);
    int forced[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_DIRECT]          = 0;
    tagg_tune_choose(m, x, forced);
    assert_double_equal(x[TAGG_TV_DIRECT], 1, 0);
    tagg_tune_free(m);
    /* forest: mean of the trees */
    m = load("tagg-tune model 1\nkind random_forest\ntarget log_seconds\ninputs 1\ninput ranks\ncombine mean\n"
             "trees 2\ntree 0 1\nnode 0 -1 0 -1 -1 1\ntree 1 1\nnode 0 -1 0 -1 -1 3\n");
    assert_double_equal(tagg_tune_predict(m, x, NULL), exp(2.0), 1e-12);
    assert_double_equal(tagg_tune_choose(m, x, forced), -1, 0); /* no candidates: nothing to choose */
    tagg_tune_free(m);
}

/* Replaces the first occurrence of from in body by to, seals, parses; returns
 * the error message (static) or NULL when it parsed. */
static const char *try_edit(const char *body, const char *from, const char *to, int seal_it)
{
    static char err[512];
    const char *at = strstr(body, from);
    assert_non_null(at);
    size_t n   = strlen(body) + strlen(to) + 1;
    char  *ed  = malloc(n);
    assert_non_null(ed);
    snprintf(ed, n, "%.*s%s%s", (int)(at - body), body, to, at + strlen(from));
    char *text = seal_it ? seal(ed) : strdup(ed);
    if (!seal_it) { /* keep the original seal: the checksum must catch the edit */
        char *orig = seal(body);
        free(text);
        const char *end = strstr(orig, "end ");
        size_t      m   = strlen(ed) + strlen(end) + 1;
        text            = malloc(m);
        snprintf(text, m, "%s%s", ed, end);
        free(orig);
    }
    tagg_tune_model_t *m  = NULL;
    int                rc = tagg_tune_parse(text, strlen(text), &m, err, sizeof err);
    tagg_tune_free(m);
    free(text), free(ed);
    return rc < 0 ? err : NULL;
}

static void expect_error_in(const char *body, const char *from, const char *to, int seal_it, const char *msg)
{
    const char *err = try_edit(body, from, to, seal_it);
    if (!err)
        fail_msg("an edit of '%s' into '%s' was accepted", from, to);
    if (!strstr(err, msg))
        fail_msg("message '%s' lacks '%s'", err, msg);
}

/* Each edit {from, to, message} of body (sealed again) refused with its message. */
static void expect_errors_in(const char *body, const char *const (*edits)[3], size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_error_in(body, edits[i][0], edits[i][1], 1, edits[i][2]);
}

static void expect_error(const char *from, const char *to, int seal_it, const char *msg)
{
    expect_error_in(tree_body, from, to, seal_it, msg);
}

/* Format 5: the engine chooses among the combinations the records held. A
 * tree on (direct, buffer_size): direct calls predicted fastest with 1 MiB
 * rounds (0.5 s, a combination no record had: direct calls carry the file's
 * 4 MiB), then aggregated with 1 MiB (1 s), direct with 4 MiB (2 s), the rest
 * 4 s. Every combination of the values: the phantom; the listed ones: 1 MiB
 * aggregated; with a forced setting, only the combinations that have the
 * call's value of it. */
static const char *combos_body =
    "tagg-tune model 5\nkind decision_tree\ntarget log_seconds\ninputs 3\ninput direct\ninput aggregators\n"
    "input buffer_size\ncandidates direct 0 1\ncandidates aggregators 0 1\n"
    "candidates buffer_size 1048576 4194304\ncombos 3\ncombo 0 1 1048576\ncombo 0 1 4194304\n"
    "combo 1 0 4194304\ncombine mean\ntrees 1\ntree 0 7\n"
    "node 0 0 0x1p-1 1 4 0\nnode 1 2 2097152 2 3 0\nnode 2 -1 0 -1 -1 0\nnode 3 -1 0 -1 -1 0x1.62e42fefa39efp+0\n"
    "node 4 2 2097152 5 6 0\nnode 5 -1 0 -1 -1 -0x1.62e42fefa39efp-1\nnode 6 -1 0 -1 -1 0x1.62e42fefa39efp-1\n";

static void test_combos(void **state)
{
    (void)state;
    tagg_tune_model_t *m = load(combos_body);
    double x[TAGG_TV_COUNT_] = {0}, y[TAGG_TV_COUNT_];
    int    forced[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_BUFFER_SIZE] = 4194304;
    memcpy(y, x, sizeof y);
    y[TAGG_TV_BUFFER_SIZE] = 1048576;
    assert_double_equal(tagg_tune_predict(m, y, NULL), 0.5, 1e-12); /* the phantom, were it tried */
    assert_double_equal(tagg_tune_choose(m, x, forced), 1.0, 1e-12);
    assert_double_equal(x[TAGG_TV_DIRECT], 0, 0);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 1, 0);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 1048576, 0);
    /* round buffers limited to 1 MiB below: 4 MiB combinations are out, 1 MiB aggregated stays */
    double upper[TAGG_TV_COUNT_] = {[TAGG_TV_BUFFER_SIZE] = 2097152};
    assert_double_equal(tagg_tune_choose_within(m, x, forced, upper), 1.0, 1e-12);
    /* direct forced by the user (aggregators with it): only the combinations with the call's
     * values of both are tried, direct with 4 MiB (not the phantom with 1 MiB) */
    forced[TAGG_TV_DIRECT] = forced[TAGG_TV_AGGREGATORS] = 1;
    x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_AGGREGATORS] = 0, x[TAGG_TV_BUFFER_SIZE] = 1048576;
    assert_double_equal(tagg_tune_choose(m, x, forced), 2.0, 1e-12);
    assert_double_equal(x[TAGG_TV_DIRECT], 1, 0);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 4194304, 0);
    /* a forced value no combination has (2 aggregators): nothing to choose, x unchanged */
    x[TAGG_TV_DIRECT] = 0, x[TAGG_TV_AGGREGATORS] = 2, x[TAGG_TV_BUFFER_SIZE] = 1048576;
    assert_double_equal(tagg_tune_choose(m, x, forced), -1, 0);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 2, 0);
    assert_double_equal(x[TAGG_TV_BUFFER_SIZE], 1048576, 0);
    tagg_tune_free(m);
    /* a combination value that is not one of its setting's candidates, a short line, a lying count */
    const char *const edits[][3] = {
        {"combo 0 1 4194304\n", "combo 0 1 2097152\n", "combination value 2097152 of 'buffer_size' is not one of its candidates"},
        {"combo 0 1 4194304\n", "combo 0 1\n", "expected 'combo' and 3 values"},
        {"combos 3\n", "combos 0\n", "combination count '0' is not an integer in 1..65536"},
        {"combos 3\n", "combos 4\n", "expected 'combo' and 3 values"},
        {"combos 3\n", "combos 999999\n", "combination count '999999'"},
    };
    expect_errors_in(combos_body, edits, sizeof edits / sizeof edits[0]);
}

/* Format 6's recorded domain: a call whose class (fs_kind, is_read, ranks, nodes,
 * contiguous, uneven, several pieces) is listed and whose bytes and pieces per
 * rank lie in its ranges is inside; any other is outside; without a domain
 * every call is inside. */
static const char *domain_body =
    "tagg-tune model 6\n"
    "kind decision_tree\n"
    "target log_seconds\n"
    "inputs 1\n"
    "input aggregators\n"
    "candidates aggregators 1 2\n"
    "combine mean\n"
    "domain 2\n"
    "range 1 0 2 1 1 0 0 65536 0x1p+24 1 1\n"
    "range 3 1 2 1 1 0 1 524288 16777216 128 2048\n"
    "trees 1\n"
    "tree 0 3\n"
    "node 0 0 1.5 1 2 0\n"
    "node 1 -1 0 -1 -1 0\n"
    "node 2 -1 0 -1 -1 1\n";

static void test_domain(void **state)
{
    (void)state;
    tagg_tune_model_t *m = load(domain_body);
    assert_int_equal(tagg_tune_ranges(m), 2);
    double x[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_FS_KIND] = 1, x[TAGG_TV_IS_READ] = 0, x[TAGG_TV_RANKS] = 2, x[TAGG_TV_NODES] = 1;
    x[TAGG_TV_CONTIGUITY] = 1, x[TAGG_TV_BYTES_SPREAD] = 0, x[TAGG_TV_PIECES_PER_RANK] = 1;
    x[TAGG_TV_BYTES_PER_RANK] = 65536;
    assert_int_equal(tagg_tune_inside(m, x), 1); /* the least recorded */
    x[TAGG_TV_BYTES_PER_RANK] = 16777216;
    assert_int_equal(tagg_tune_inside(m, x), 1); /* the largest */
    x[TAGG_TV_BYTES_PER_RANK] = 16777217;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* past it */
    x[TAGG_TV_BYTES_PER_RANK] = 32768;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* below it */
    x[TAGG_TV_BYTES_PER_RANK] = 1048576;
    x[TAGG_TV_CONTIGUITY] = 0.9995;
    assert_int_equal(tagg_tune_inside(m, x), 1); /* contiguous from 0.999 */
    x[TAGG_TV_CONTIGUITY] = 0.5;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* with gaps: a class not recorded */
    x[TAGG_TV_CONTIGUITY] = 1, x[TAGG_TV_BYTES_SPREAD] = 0.5;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* uneven: not recorded */
    x[TAGG_TV_BYTES_SPREAD] = 0.005;
    assert_int_equal(tagg_tune_inside(m, x), 1); /* even up to 0.01 */
    x[TAGG_TV_RANKS] = 4;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* other ranks */
    x[TAGG_TV_RANKS] = 2, x[TAGG_TV_IS_READ] = 1;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* reads on fs_kind 1: not recorded */
    /* the second class: reads on fs_kind 3 in several pieces, both ranges */
    x[TAGG_TV_FS_KIND] = 3, x[TAGG_TV_PIECES_PER_RANK] = 64;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* fewer pieces than recorded */
    x[TAGG_TV_PIECES_PER_RANK] = 128;
    assert_int_equal(tagg_tune_inside(m, x), 1);
    x[TAGG_TV_PIECES_PER_RANK] = 1;
    assert_int_equal(tagg_tune_inside(m, x), 0); /* one piece: the other class, not recorded for reads here */
    tagg_tune_free(m);
    /* no domain: every pattern inside */
    m = load(tree_body);
    assert_int_equal(tagg_tune_ranges(m), 0);
    x[TAGG_TV_RANKS] = 99;
    assert_int_equal(tagg_tune_inside(m, x), 1);
    tagg_tune_free(m);
    /* hostile domains */
    const char *const edits[][3] = {
        {"domain 2\n", "domain 3\n", "expected 'range FS_KIND"},
        {"domain 2\n", "domain 0\n", "domain class count '0' is not an integer in 1..4096"},
        {"domain 2\n", "domain 99999\n", "domain class count '99999'"},
        {"domain 2\n", "domain 2 3\n", "expected 'domain N'"},
        {"range 1 0 2 1 1 0 0 65536", "range 1 0 2 1 2 0 0 65536", "contiguous, spread and multi are 0 or 1"},
        {"65536 0x1p+24 1 1", "65536 0x1p+24 1\n", "expected 'range FS_KIND"},
        {"65536 0x1p+24 1 1", "0x1p+25 0x1p+24 1 1", "a least value above its largest"},
        {"65536 0x1p+24 1 1", "65536 inf 1 1", "domain value 'inf' is not a finite number"},
        {"range 3 1 2 1 1 0 1", "range 1 0 2 1 1 0 0", "a domain class listed twice"},
    };
    expect_errors_in(domain_body, edits, sizeof edits / sizeof edits[0]);
}

static void test_bad_files(void **state)
{
    (void)state;
    expect_error("tagg-tune model 1", "hdf5 model 1", 1, "line 1: not a tagg-tune model file");
    expect_error("tagg-tune model 1", "tagg-tune model 7", 1, "format 7, this tagg reads formats 1 to 6");
    /* the recorded domain came with format 6 */
    expect_error("combine mean\n", "combine mean\ndomain 1\nrange 1 0 2 1 1 0 0 1 2 1 1\n", 1,
                 "line 9: a 'domain' section in a model of format 1");
    /* combinations came with format 5 */
    expect_error("combine mean\n", "combos 1\ncombo 2\ncombine mean\n", 1, "line 8: a 'combos' section in a model of format 1");
    expect_error("kind decision_tree", "kind svm", 1, "line 2: expected 'kind");
    expect_error("input bytes_per_rank", "input colour", 1, "line 6: unknown input 'colour'");
    expect_error("input bytes_per_rank", "input aggregators", 1, "listed twice");
    expect_error("candidates aggregators 1 2", "candidates ranks 1 2", 1, "not a setting");
    expect_error("candidates aggregators 1 2", "candidates throttle 1 2", 1, "not an input of the model");
    expect_error("candidates aggregators 1 2", "candidates aggregators 1 x", 1, "candidate value 'x'");
    expect_error("trees 1", "trees 2", 1, "one tree");
    expect_error("tree 0 7", "tree 0 99999", 1, "cannot fit");
    expect_error("node 0 0 0x1.8p+0 1 4", "node 0 0 0x1.8p+0 1 1", 1, "distinct nodes after their parent");
    expect_error("node 1 1 1000000 2 3", "node 1 1 1000000 0 3", 1, "after their parent"); /* a cycle */
    expect_error("node 1 1 1000000 2 3", "node 1 1 1000000 2 4", 1, "reached twice");
    expect_error("node 2 -1 0 -1 -1", "node 2 -1 0 5 -1", 1, "a leaf has children");
    expect_error("node 3 -1 0 -1 -1 1.3862943611198906", "node 3 -1 0 -1 -1 inf", 1, "not a finite number");
    expect_error("node 1 1 1000000", "node 1 7 1000000", 1, "input '7' is not an integer in -1..1");
    /* tagg-tune's own form of a number with a second sign in the exponent: the fast path declines
     * it, and the general path (strtod) names it */
    expect_error("node 0 0 0x1.8p+0 1 4 0x0p+0", "node 0 0 0x1.8000000000000p--1 1 4 0", 1,
                 "threshold '0x1.8000000000000p--1'");
    expect_error("node 0 0 0x1.8p+0 1 4 0x0p+0", "node 0 0 0x1.8000000000000p+-1 1 4 0", 1,
                 "threshold '0x1.8000000000000p+-1'");
    expect_error("node 5 -1 0 -1 -1 0", "node 5 -1 0 -1 -1 1", 0, "checksum mismatch");
    expect_error("combine mean", "combine gbdt 0 1", 1, "expected 'combine mean'");
    expect_error("target log_seconds", "target bandwidth", 1, "line 3: expected 'target log_seconds'");
    /* the optional margin: after combine, in [0, 1) */
    expect_error("combine mean\n", "combine mean\nmargin 1\n", 1, "line 9: margin 1: must be at least 0 and below 1");
    expect_error("combine mean\n", "combine mean\nmargin -0.1\n", 1, "must be at least 0 and below 1");
    expect_error("combine mean\n", "combine mean\nmargin nan\n", 1, "margin");
    expect_error("combine mean\n", "combine mean\nmargin 0.2 0.3\n", 1, "line 9");
    expect_error("combine mean\n", "combine mean\nmargin 0.2\nmargin 0.2\n", 1, "line 10: expected 'trees N'");
    tagg_tune_model_t *m = load(tree_body);
    assert_double_equal(tagg_tune_margin(m), 0, 0); /* absent: 0 */
    tagg_tune_free(m);
    const char *at = strstr(tree_body, "combine mean\n");
    char        with[4096];
    snprintf(with, sizeof with, "%.*scombine mean\nmargin 0x1.999999999999ap-3\n%s", (int)(at - tree_body), tree_body,
             at + strlen("combine mean\n"));
    m = load(with);
    assert_double_equal(tagg_tune_margin(m), 0.2, 0);
    tagg_tune_free(m);
}

/* target log_seconds_per_byte: seconds = exp(trees) * max(1, ranks * bytes_per_rank),
 * and the choice among settings is the trees' order (the bytes are the call's) */
static void test_per_byte(void **state)
{
    (void)state;
    /* ln(s/B) = -20 direct, -21 aggregated (aggregated is faster per byte) */
    tagg_tune_model_t *m = load("tagg-tune model 1\nkind decision_tree\ntarget log_seconds_per_byte\ninputs 1\n"
                                "input direct\ncandidates direct 0 1\ncombine mean\ntrees 1\n"
                                "tree 0 3\nnode 0 0 0.5 1 2 0\nnode 1 -1 0 -1 -1 -21\nnode 2 -1 0 -1 -1 -20\n");
    double x[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_RANKS] = 4, x[TAGG_TV_BYTES_PER_RANK] = 1.5e6, x[TAGG_TV_DIRECT] = 1;
    assert_double_equal(tagg_tune_call_bytes(x), 6e6, 0);
    assert_double_equal(tagg_tune_predict(m, x, NULL), exp(-20.0) * 6e6, 1e-18);
    int forced[TAGG_TV_COUNT_] = {0};
    assert_double_equal(tagg_tune_choose(m, x, forced), exp(-21.0) * 6e6, 1e-18);
    assert_double_equal(x[TAGG_TV_DIRECT], 0, 0);
    /* a call of no bytes counts as one byte: a prediction, not 0 */
    x[TAGG_TV_BYTES_PER_RANK] = 0;
    assert_double_equal(tagg_tune_call_bytes(x), 1, 0);
    assert_double_equal(tagg_tune_predict(m, x, NULL), exp(-21.0), 1e-18);
    tagg_tune_free(m);
}

/* Format 2: a repeat whose file accesses reach dio_min (O_DIRECT) is seen as
 * no repeat (tagg_tune_effective); format 1 sees the records as they are;
 * format 3 as format 2, but direct re-reads the read cache holds (runs under
 * 4 MiB, at most 16 MiB a rank) stay repeats; format 4: and are resident. */
static void test_effective_repeat(void **state)
{
    (void)state;
    /* repeat 1: 1 ms (a cache hit), else 10 ms */
    tagg_tune_model_t *m1 = one_split(1, "repeat"), *m2 = one_split(2, "repeat");
    double x[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_RANKS] = 2, x[TAGG_TV_BYTES_PER_RANK] = 1048576, x[TAGG_TV_PIECES_PER_RANK] = 1;
    x[TAGG_TV_REPEAT] = 1, x[TAGG_TV_DIO_MIN] = 1048576, x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_BUFFER_SIZE] = 4194304;
    assert_double_equal(tagg_tune_predict(m1, x, NULL), 1e-3, 1e-12);  /* format 1: as recorded */
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 10e-3, 1e-12); /* 1 MiB runs through O_DIRECT */
    assert_double_equal(x[TAGG_TV_REPEAT], 1, 0);                     /* x itself unchanged */
    x[TAGG_TV_PIECES_PER_RANK] = 2; /* 512 KiB runs: buffered, a cache may serve them */
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 1e-3, 1e-12);
    x[TAGG_TV_DIRECT] = 0, x[TAGG_TV_AGGREGATORS] = 1; /* one aggregator: 2 MiB of rounds, O_DIRECT */
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_AGGREGATORS] = 4; /* 512 KiB each */
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 1e-3, 1e-12);
    x[TAGG_TV_AGGREGATORS] = 1, x[TAGG_TV_BUFFER_SIZE] = 65536; /* rounds of one 64 KiB buffer */
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 1e-3, 1e-12);
    x[TAGG_TV_BUFFER_SIZE] = 4194304, x[TAGG_TV_DIO_MIN] = 0; /* no O_DIRECT */
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 1e-3, 1e-12);
    /* format 3 */
    tagg_tune_model_t *m3 = one_split(3, "repeat");
    x[TAGG_TV_DIO_MIN] = 1048576, x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_AGGREGATORS] = 0, x[TAGG_TV_PIECES_PER_RANK] = 1;
    assert_double_equal(tagg_tune_predict(m2, x, NULL), 10e-3, 1e-12); /* format 2: 1 MiB runs through O_DIRECT */
    assert_double_equal(tagg_tune_predict(m3, x, NULL), 1e-3, 1e-12);  /* format 3: the read cache holds them */
    x[TAGG_TV_BYTES_PER_RANK] = 4194304 - 1; /* the largest run under the cache's cover */
    assert_double_equal(tagg_tune_predict(m3, x, NULL), 1e-3, 1e-12);
    x[TAGG_TV_BYTES_PER_RANK] = 4194304; /* a 4 MiB run: larger than a cover once unaligned */
    assert_double_equal(tagg_tune_predict(m3, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_BYTES_PER_RANK] = 16 * 1048576, x[TAGG_TV_PIECES_PER_RANK] = 16; /* 16 runs of 1 MiB: 4 slots hold 16 MiB */
    assert_double_equal(tagg_tune_predict(m3, x, NULL), 1e-3, 1e-12);
    x[TAGG_TV_BYTES_PER_RANK] = 17 * 1048576, x[TAGG_TV_PIECES_PER_RANK] = 17; /* more than the slots hold */
    assert_double_equal(tagg_tune_predict(m3, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_BYTES_PER_RANK] = 1048576, x[TAGG_TV_PIECES_PER_RANK] = 1;
    x[TAGG_TV_DIRECT] = 0, x[TAGG_TV_AGGREGATORS] = 1; /* aggregators' rounds: no read cache, as format 2 */
    assert_double_equal(tagg_tune_predict(m3, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_AGGREGATORS] = 0, x[TAGG_TV_BUFFER_SIZE] = 4194304;
    tagg_tune_free(m3);
    /* format 4: those direct re-reads the read cache holds are also resident
     * (resident <= 0.5: 10 ms, else 1 ms; format 3 sees the probe's 0) */
    tagg_tune_model_t *n3 = one_split(3, "resident"), *n4 = one_split(4, "resident");
    x[TAGG_TV_RESIDENT] = 0;
    assert_double_equal(tagg_tune_predict(n3, x, NULL), 10e-3, 1e-12); /* format 3: as probed */
    assert_double_equal(tagg_tune_predict(n4, x, NULL), 1e-3, 1e-12);  /* 1 MiB runs, O_DIRECT, cached */
    assert_double_equal(x[TAGG_TV_RESIDENT], 0, 0);                    /* x itself unchanged */
    x[TAGG_TV_BYTES_PER_RANK] = 1048576 - 1; /* under dio_min: buffered, the probe tells */
    assert_double_equal(tagg_tune_predict(n4, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_BYTES_PER_RANK] = 4194304; /* larger than a cover: from the storage */
    assert_double_equal(tagg_tune_predict(n4, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_BYTES_PER_RANK] = 1048576, x[TAGG_TV_REPEAT] = 0; /* a first read */
    assert_double_equal(tagg_tune_predict(n4, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_REPEAT] = 1, x[TAGG_TV_DIRECT] = 0, x[TAGG_TV_AGGREGATORS] = 4; /* aggregated: as probed */
    assert_double_equal(tagg_tune_predict(n4, x, NULL), 10e-3, 1e-12);
    x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_AGGREGATORS] = 0;
    tagg_tune_free(n3), tagg_tune_free(n4);
    /* the choice sees it per candidate: direct (1 MiB runs, O_DIRECT, 10 ms)
     * against 2 aggregators (1 MiB each, 10 ms) or 4 (cached, 1 ms) */
    tagg_tune_free(m2);
    char v2[1024];
    snprintf(v2, sizeof v2, "tagg-tune model 2\nkind decision_tree\ntarget log_seconds\ninputs 3\ninput repeat\n"
                            "input direct\ninput aggregators\ncandidates direct 0 1\ncandidates aggregators 0 2 4\ncombine mean\ntrees 1\n"
                            "tree 0 3\nnode 0 0 0.5 1 2 0\nnode 1 -1 0 -1 -1 -4.6051701859880918\n"
                            "node 2 -1 0 -1 -1 -6.9077552789821368\n");
    m2 = load(v2);
    int forced[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_DIO_MIN] = 1048576, x[TAGG_TV_DIRECT] = 1, x[TAGG_TV_AGGREGATORS] = 0, x[TAGG_TV_PIECES_PER_RANK] = 1;
    assert_double_equal(tagg_tune_choose(m2, x, forced), 1e-3, 1e-12);
    assert_double_equal(x[TAGG_TV_DIRECT], 0, 0);
    assert_double_equal(x[TAGG_TV_AGGREGATORS], 4, 0);
    tagg_tune_free(m1), tagg_tune_free(m2);
}

/* resident: a pattern input (in records and models by name), in steps of
 * 1/8; a model on it chooses by the cache's state: a read the cache holds
 * goes direct, one it does not goes through aggregators. */
static void test_resident(void **state)
{
    (void)state;
    assert_int_equal(tagg_tune_var_of("resident"), TAGG_TV_RESIDENT);
    assert_string_equal(tagg_tune_var_name(TAGG_TV_RESIDENT), "resident");
    assert_int_equal(tagg_tune_var_of("in_flight"), TAGG_TV_IN_FLIGHT); /* record format 7 */
    assert_string_equal(tagg_tune_var_name(TAGG_TV_IN_FLIGHT), "in_flight");
    assert_true(TAGG_TV_RESIDENT < TAGG_TV_FIRST_SETTING);
    assert_int_equal(TAGG_TUNE_RESIDENT_STEPS, 8);
    assert_double_equal(tagg_tune_resident_step(0), 0, 0);
    assert_double_equal(tagg_tune_resident_step(0.0624), 0, 0);  /* 0.499 steps */
    assert_double_equal(tagg_tune_resident_step(0.0625), 0.125, 0); /* half a step rounds up */
    assert_double_equal(tagg_tune_resident_step(0.5), 0.5, 0);
    assert_double_equal(tagg_tune_resident_step(0.93), 0.875, 0);
    assert_double_equal(tagg_tune_resident_step(0.94), 1, 0);
    assert_double_equal(tagg_tune_resident_step(1.7), 1, 0);
    assert_double_equal(tagg_tune_resident_step(-0.2), 0, 0);
    assert_double_equal(tagg_tune_resident_step(NAN), 0, 0);
    /* flight_ahead (record format 8): per byte of the call, the same steps, up to 64 */
    assert_int_equal(tagg_tune_var_of("flight_ahead"), TAGG_TV_FLIGHT_AHEAD);
    assert_string_equal(tagg_tune_var_name(TAGG_TV_FLIGHT_AHEAD), "flight_ahead");
    assert_true(TAGG_TV_FLIGHT_AHEAD < TAGG_TV_FIRST_SETTING);
    assert_double_equal(tagg_tune_ahead_step(0), 0, 0);
    assert_double_equal(tagg_tune_ahead_step(0.0624), 0, 0);
    assert_double_equal(tagg_tune_ahead_step(0.0625), 0.125, 0);
    assert_double_equal(tagg_tune_ahead_step(6.93), 6.875, 0); /* not clamped at 1 */
    assert_double_equal(tagg_tune_ahead_step(7), 7, 0);
    assert_double_equal(tagg_tune_ahead_step(63.9), 63.875, 0);
    assert_double_equal(tagg_tune_ahead_step(64), TAGG_TUNE_AHEAD_MAX, 0);
    assert_double_equal(tagg_tune_ahead_step(1e9), TAGG_TUNE_AHEAD_MAX, 0);
    assert_double_equal(tagg_tune_ahead_step(-3), 0, 0);
    assert_double_equal(tagg_tune_ahead_step(NAN), 0, 0);
    /* ln t = resident <= 0.5 ? (direct <= 0.5 ? ln 1 : ln 3) : (direct <= 0.5 ? ln 2 : ln 0.5) */
    tagg_tune_model_t *m = load("tagg-tune model 3\n"
                                "kind decision_tree\n"
                                "target log_seconds\n"
                                "inputs 2\n"
                                "input resident\n"
                                "input direct\n"
                                "candidates direct 0 1\n"
                                "combine mean\n"
                                "trees 1\n"
                                "tree 0 7\n"
                                "node 0 0 0x1p-1 1 4 0x0p+0\n"
                                "node 1 1 0x1p-1 2 3 0x0p+0\n"
                                "node 2 -1 0 -1 -1 0\n"
                                "node 3 -1 0 -1 -1 1.0986122886681098\n"
                                "node 4 1 0x1p-1 5 6 0x0p+0\n"
                                "node 5 -1 0 -1 -1 0.69314718055994529\n"
                                "node 6 -1 0 -1 -1 -0.69314718055994529\n");
    assert_non_null(m);
    assert_true(tagg_tune_uses(m, TAGG_TV_RESIDENT));
    double x[TAGG_TV_COUNT_] = {0};
    int    forced[TAGG_TV_COUNT_] = {0};
    x[TAGG_TV_RANKS] = 2, x[TAGG_TV_BYTES_PER_RANK] = 1 << 20, x[TAGG_TV_IS_READ] = 1, x[TAGG_TV_AGGREGATORS] = 1;
    x[TAGG_TV_RESIDENT] = 0.125; /* little in the cache: aggregate (1 s against 3) */
    assert_double_equal(tagg_tune_choose(m, x, forced), 1, 1e-12);
    assert_double_equal(x[TAGG_TV_DIRECT], 0, 0);
    x[TAGG_TV_RESIDENT] = 0.875; /* most of it: direct (0.5 s against 2) */
    assert_double_equal(tagg_tune_choose(m, x, forced), 0.5, 1e-12);
    assert_double_equal(x[TAGG_TV_DIRECT], 1, 0);
    tagg_tune_free(m);
}

/* A number as tagg-tune writes it (Python's num(): an integer below 2^53 in
 * decimal, else float.hex(): [-]0x1.<13 hex digits>p<exponent> for a normal
 * double), or as %.17g (decimal: the parser's general path, strtod). */
static int put_num(char *buf, size_t n, double v, int python)
{
    if (!python)
        return snprintf(buf, n, "%.17g", v);
    if (v == floor(v) && fabs(v) < 9007199254740992.0 && !(v == 0 && signbit(v)))
        return snprintf(buf, n, "%lld", (long long)v);
    int    ex;
    double fr = frexp(fabs(v), &ex); /* [0.5, 1) */
    if (ex - 1 < -1022)
        return snprintf(buf, n, "%a", v); /* subnormal (none here: either path refuses them) */
    uint64_t mant = (uint64_t)ldexp(fr, 53) & ((1ull << 52) - 1);
    return snprintf(buf, n, "%s0x1.%013llxp%+d", v < 0 ? "-" : "", (unsigned long long)mant, ex - 1);
}

/* Random doubles of every magnitude, some integers, zeros and the extremes. */
static double some_double(unsigned *seed, int k)
{
    static const double edge[] = {0.0, 1.0, -1.0, 0.5, 1048576.0, -3.0, 1.7976931348623157e308, -2.2250738585072014e-308,
                                  9007199254740991.0, 9007199254740992.0, 1e-300, 123456789012345.0};
    if (k < (int)(sizeof edge / sizeof *edge))
        return edge[k];
    uint64_t bits = 0;
    for (int i = 0; i < 4; i++)
        bits = bits << 16 | (uint64_t)(rand_r(seed) & 0xffff);
    double v;
    memcpy(&v, &bits, sizeof v);
    if (!isfinite(v) || fpclassify(v) == FP_SUBNORMAL || rand_r(seed) % 4 == 0) /* also plain magnitudes, integers */
        v = (rand_r(seed) % 2 ? -1 : 1) * ldexp((double)(rand_r(seed) % 100000), rand_r(seed) % 60 - 30);
    return v;
}

/* The node lines' fast path (what tagg-tune writes, converted by hand) gives
 * the same model, bit for bit, as the general path (strtod, strtol) given the
 * same numbers in decimal with a second space that the fast path declines. */
static void test_fast_path_exact(void **state)
{
    (void)state;
    enum { NODES = 1023 }; /* a full tree: node i has children 2i+1, 2i+2 */
    unsigned seed = 37;
    double   thr[NODES], val[NODES];
    for (int i = 0; i < NODES; i++)
        thr[i] = some_double(&seed, i), val[i] = some_double(&seed, i + 3);
    char *text[2];
    for (int py = 0; py < 2; py++) {
        size_t cap = 200 + (size_t)NODES * 120, n = 0;
        char  *b   = malloc(cap);
        assert_non_null(b);
        n += (size_t)snprintf(b + n, cap - n,
                              "tagg-tune model 4\nkind decision_tree\ntarget log_seconds\ninputs 2\ninput "
                              "bytes_per_rank\ninput aggregators\ncombine mean\ntrees 1\ntree 0 %d\n",
                              NODES);
        for (int i = 0; i < NODES; i++) {
            int  leaf = 2 * i + 2 >= NODES;
            char t[64], v[64];
            put_num(t, sizeof t, leaf ? 0 : thr[i], py);
            put_num(v, sizeof v, val[i], py);
            n += (size_t)snprintf(b + n, cap - n, "node %s%d %d %s %d %d %s\n", py ? "" : " ", i, leaf ? -1 : i % 2, t,
                                  leaf ? -1 : 2 * i + 1, leaf ? -1 : 2 * i + 2, v);
        }
        text[py] = b;
    }
    tagg_tune_model_t *m[2];
    for (int py = 0; py < 2; py++)
        m[py] = load(text[py]), free(text[py]);
    int fast_exact = 0;
    for (int i = 0; i < NODES; i++) {
        int    in[2], l[2], r[2];
        double t[2], v[2];
        for (int py = 0; py < 2; py++)
            assert_int_equal(tagg_tune_node(m[py], 0, i, &in[py], &t[py], &l[py], &r[py], &v[py]), 0);
        assert_int_equal(in[0], in[1]);
        assert_int_equal(l[0], l[1]);
        assert_int_equal(r[0], r[1]);
        if (memcmp(&t[0], &t[1], sizeof t[0]) || memcmp(&v[0], &v[1], sizeof v[0]))
            fail_msg("node %d: general path %a %a, fast path %a %a", i, t[0], v[0], t[1], v[1]);
        fast_exact += !(2 * i + 2 >= NODES) && t[1] == thr[i];
    }
    assert_int_equal(fast_exact, NODES / 2); /* every split's threshold is the double written */
    assert_int_equal(tagg_tune_node(m[0], 0, NODES, &fast_exact, &thr[0], &fast_exact, &fast_exact, &val[0]), -1);
    tagg_tune_free(m[0]), tagg_tune_free(m[1]);
}

static void test_truncation_everywhere(void **state)
{
    (void)state;
    char  *text = seal(tree_body);
    size_t n    = strlen(text);
    char   err[512];
    for (size_t cut = 0; cut < n; cut++) {
        tagg_tune_model_t *m = NULL;
        if (tagg_tune_parse(text, cut, &m, err, sizeof err) == 0)
            fail_msg("a model cut at %zu of %zu bytes was accepted", cut, n);
        assert_null(m);
        assert_non_null(strstr(err, "tuning model, line "));
    }
    free(text);
}

/* Bounded mutation fuzz: random byte flips, insertions and deletions of a
 * valid file, resealed half of the time so the checks behind the checksum are
 * reached.  Every outcome must be a clean accept or a message. */
/* The measured check's states (tune.h): k calls of the choice move to a trial
 * of the rival, k of those settle it by the medians, settled states
 * stay, and the median is the middle of odd counts, the middle two's mean of
 * even ones, whatever the order. */
static void test_check_next(void **state)
{
    (void)state;
    const double slow[] = {3, 1, 2}, fast[] = {0.5, 0.9, 0.1}, same[] = {2, 2, 2};
    assert_double_equal(tagg_tune_check_median(slow, 3), 2, 0);
    assert_double_equal(tagg_tune_check_median(fast, 2), 0.7, 1e-15);
    assert_double_equal(tagg_tune_check_median((const double[]){4, 1, 3, 2}, 4), 2.5, 0);
    assert_double_equal(tagg_tune_check_median((const double[]){7}, 1), 7, 0);
    /* the choice's calls: not yet k of them, then k */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_NONE, slow, 2, NULL, 0, 3, 0), TAGG_TUNE_CHECK_NONE);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_NONE, slow, 3, NULL, 0, 3, 0), TAGG_TUNE_CHECK_TRY_RIVAL);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_NONE, slow, 1, NULL, 0, 1, 0), TAGG_TUNE_CHECK_TRY_RIVAL);
    /* the trial: not yet k rival calls; then a faster choice is kept at once, a tie keeps it too, and a
     * faster rival takes every round (k = 3: another round of each), then wins (k = 1: 3 calls are all 3
     * rounds) */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, slow, 3, fast, 2, 3, 0), TAGG_TUNE_CHECK_TRY_RIVAL);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, slow, 3, fast, 3, 3, 0), TAGG_TUNE_CHECK_AGAIN);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, slow, 3, fast, 3, 1, 0), TAGG_TUNE_CHECK_RIVAL);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, fast, 3, slow, 3, 3, 0), TAGG_TUNE_CHECK_CHOICE);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, same, 3, same, 3, 3, 0), TAGG_TUNE_CHECK_CHOICE);
    /* a rival runs as many calls as the choice ran (choice calls timed while the ranks' tables disagreed) */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, same, 3, slow + 2, 1, 1, 0), TAGG_TUNE_CHECK_TRY_RIVAL);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, same, 3, slow, 3, 1, 0), TAGG_TUNE_CHECK_CHOICE);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, same, 3, fast, 3, 1, 0), TAGG_TUNE_CHECK_RIVAL);
    /* one slow choice call among three does not decide: the medians do (1, 2, 30 against 1.5 x 3; k = 1,
     * the rounds done) */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, (const double[]){1, 30, 2}, 3,
                                          (const double[]){1.5, 1.5, 1.5}, 3, 1, 0),
                     TAGG_TUNE_CHECK_RIVAL);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, (const double[]){1, 30, 1.2}, 3,
                                          (const double[]){1.5, 1.5, 1.5}, 3, 1, 0),
                     TAGG_TUNE_CHECK_CHOICE);
    /* a trial whose choice times were lost (the process's trials given up): the choice */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_TRY_RIVAL, NULL, 0, fast, 3, 3, 0), TAGG_TUNE_CHECK_CHOICE);
    /* settled states stay, whatever comes */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_RIVAL, fast, 3, slow, 3, 3, 0), TAGG_TUNE_CHECK_RIVAL);
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_CHOICE, slow, 3, fast, 3, 3, 0), TAGG_TUNE_CHECK_CHOICE);
    /* a close call (medians within close x the choice's): another round, until they part or the rounds are
     * done; a rival ahead by more than that takes every round too (an overturn takes every round); the
     * rounds that do not fit in TAGG_TUNE_CHECK_MAX calls are not taken; counts at the maximum move on,
     * whatever the other's count (no state waits for ever). e9 against f9 is session 61's story: a rival
     * ahead in round 1 (1.5 against 2) and behind once the choice's later calls ran at their speed */
    const double c9[] = {1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.03, 0.97, 1.00};
    const double r9[] = {0.95, 0.96, 0.94, 0.95, 0.96, 0.94, 0.95, 0.96, 0.94};
    const double e9[] = {2, 2, 2, 1, 1, 1, 1, 1, 1}, f9[] = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5};
    double       c16[TAGG_TUNE_CHECK_MAX], r16[TAGG_TUNE_CHECK_MAX];
    for (int i = 0; i < TAGG_TUNE_CHECK_MAX; i++)
        c16[i] = 1, r16[i] = 0.99;
    enum { T = TAGG_TUNE_CHECK_TRY_RIVAL, A = TAGG_TUNE_CHECK_AGAIN, R = TAGG_TUNE_CHECK_RIVAL, C = TAGG_TUNE_CHECK_CHOICE };
    static const char *why[] = {"round 1 close", "close 4 %: the rival 5 % ahead, another round", "close 6 %",
                                "close 0: the rival ahead, another round", "AGAIN: 2 of 3 more",
                                "AGAIN: 3 more", "rival: 5 of 6", "round 2 close", "round 3 decides",
                                "round 3 decides (swapped)", "k 6: round 2 fits", "k 6: round 3 does not fit",
                                "k 16", "AGAIN at the maximum", "TRY_RIVAL at the maximum",
                                "the rival clear in round 1: another round", "the choice clear in round 1: kept",
                                "the choice clear in round 1, close 0: kept", "session 61, round 1: the rival ahead",
                                "session 61, round 3: the choice kept", "the rival ahead in round 3: it runs"};
    const struct {
        int           state;
        const double *c;
        int           nc;
        const double *r;
        int           nr, k;
        double        close;
        int           want;
    } cc[] = {
        {T, c9, 3, r9, 3, 3, 0.1, A},      {T, c9, 3, r9, 3, 3, 0.04, A},      {T, c9, 3, r9, 3, 3, 0.06, A},
        {T, c9, 3, r9, 3, 3, 0, A},        {A, c9, 5, r9, 3, 3, 0.1, A},       {A, c9, 6, r9, 3, 3, 0.1, T},
        {T, c9, 6, r9, 5, 3, 0.1, T},      {T, c9, 6, r9, 6, 3, 0.1, A},       {T, c9, 9, r9, 9, 3, 0.1, R},
        {T, r9, 9, c9, 9, 3, 0.1, C},      {T, c16, 6, r16, 6, 6, 0.1, A},     {T, c16, 12, r16, 12, 6, 0.1, R},
        {T, c16, 16, r16, 16, 16, 0.1, R}, {A, c16, 16, r16, 14, 3, 0.1, T},   {T, c16, 16, r16, 16, 3, 0.1, R},
        {T, slow, 3, fast, 3, 3, 0.1, A},  {T, fast, 3, slow, 3, 3, 0.1, C},   {T, fast, 3, slow, 3, 3, 0, C},
        {T, e9, 3, f9, 3, 3, 0.1, A},      {T, e9, 9, f9, 9, 3, 0.1, C},       {T, f9, 9, e9, 9, 3, 0.1, R},
    };
    assert_int_equal(sizeof why / sizeof why[0], sizeof cc / sizeof cc[0]);
    for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++) {
        int got = tagg_tune_check_next(cc[i].state, cc[i].c, cc[i].nc, cc[i].r, cc[i].nr, cc[i].k, cc[i].close);
        if (got != cc[i].want)
            fail_msg("close-call case %zu (%s): state %d, want %d", i, why[i], got, cc[i].want);
    }
    /* the close call itself: within the share of the choice's median, either side; a share of 0 never */
    assert_true(tagg_tune_check_close_call(1.0, 0.95, 0.1) && tagg_tune_check_close_call(1.0, 1.05, 0.1));
    assert_false(tagg_tune_check_close_call(1.0, 0.95, 0.04) || tagg_tune_check_close_call(1.0, 1.0, 0));
    /* k = 0: nothing moves */
    assert_int_equal(tagg_tune_check_next(TAGG_TUNE_CHECK_NONE, slow, 3, NULL, 0, 0, 0), TAGG_TUNE_CHECK_NONE);
}

/* The check's stages (tune.h "the challenger"): which candidate runs, which stage times it, as what. */
static void test_check_pick(void **state)
{
    (void)state;
    enum { N = TAGG_TUNE_CHECK_NONE, T = TAGG_TUNE_CHECK_TRY_RIVAL, R = TAGG_TUNE_CHECK_RIVAL,
           C = TAGG_TUNE_CHECK_CHOICE, A = TAGG_TUNE_CHECK_AGAIN };
    const struct {
        const char *why;
        int         s0, s1, challenger;
        int         run, stage, arm, p0, p1;
    } pc[] = {
        {"stage 0: the choice timed", N, N, 1, 0, 0, 1, 0, 1},
        {"stage 0: the rival timed", T, N, 1, 1, 0, 2, 0, 1},
        {"stage 0: a close call, the choice again", A, N, 1, 0, 0, 1, 0, 1},
        {"stage 0 ignores s1 (the rival timed)", T, R, 1, 1, 0, 2, 0, 1},
        {"no challenger: the rival settled", R, N, 0, 1, -1, 0, 0, 1},
        {"no challenger: the choice settled", C, T, 0, 0, -1, 0, 0, 1},
        {"stage 1: the winning rival timed again", R, N, 1, 1, 1, 1, 1, 2},
        {"stage 1: the winning choice timed again", C, N, 1, 0, 1, 1, 0, 2},
        {"stage 1: the challenger timed", C, T, 1, 2, 1, 2, 0, 2},
        {"stage 1: a close call, the winner again", R, A, 1, 1, 1, 1, 1, 2},
        {"stage 1: the challenger won", R, R, 1, 2, -1, 0, 1, 2},
        {"stage 1: the rival held", R, C, 1, 1, -1, 0, 1, 2},
        {"stage 1: the choice held", C, C, 1, 0, -1, 0, 0, 2},
        {"stage 1: the challenger beat the choice", C, R, 1, 2, -1, 0, 0, 2},
    };
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        tagg_tune_check_pick_t p = tagg_tune_check_pick(pc[i].s0, pc[i].s1, pc[i].challenger);
        if (p.run != pc[i].run || p.stage != pc[i].stage || p.arm != pc[i].arm || p.pair[0] != pc[i].p0 ||
            p.pair[1] != pc[i].p1)
            fail_msg("pick case %zu (%s): run %d stage %d arm %d pair %d,%d; want %d %d %d %d,%d", i, pc[i].why, p.run,
                     p.stage, p.arm, p.pair[0], p.pair[1], pc[i].run, pc[i].stage, pc[i].arm, pc[i].p0, pc[i].p1);
    }
}

static void test_fuzz(void **state)
{
    (void)state;
    char    *good = seal(tree_body);
    size_t   n    = strlen(good);
    uint64_t rnd  = 0x9e3779b97f4a7c15ull;
#define RND() (rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17, rnd)
    int iters = getenv("TAGG_FUZZ_ITERS") ? atoi(getenv("TAGG_FUZZ_ITERS")) : 20000, accepted = 0;
    char *buf = malloc(2 * n + 64);
    assert_non_null(buf);
    for (int it = 0; it < iters; it++) {
        size_t len = n;
        memcpy(buf, good, n);
        int edits = 1 + (int)(RND() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = len ? RND() % len : 0;
            switch (RND() % 3) {
            case 0: buf[at] = (char)RND(); break;
            case 1: if (len < 2 * n) { memmove(buf + at + 1, buf + at, len - at); buf[at] = "0123456789 -\nnx"[RND() % 15]; len++; } break;
            default: if (len) { memmove(buf + at, buf + at + 1, len - at - 1); len--; } break;
            }
        }
        if (RND() & 1) { /* reseal: strip from the last "end " and add a valid one */
            buf[len] = '\0';
            char *end = NULL;
            for (char *p = buf; (p = strstr(p, "\nend ")); p++)
                end = p + 1;
            if (end) {
                len = (size_t)(end - buf);
                len += (size_t)snprintf(buf + len, 64, "end %016llx\n",
                                        (unsigned long long)tagg_tune_checksum(buf, len));
            }
        }
        tagg_tune_model_t *m = NULL;
        char               err[512];
        if (tagg_tune_parse(buf, len, &m, err, sizeof err) == 0) {
            double x[TAGG_TV_COUNT_] = {1, 1, 1e6, 0, 1, 1, 1, 1, 0, 0, 2, 4194304, 2, 0, 0, 1};
            int    forced[TAGG_TV_COUNT_] = {0};
            double t = tagg_tune_predict(m, x, NULL);
            assert_true(t >= 0);
            tagg_tune_choose(m, x, forced);
            accepted++;
            tagg_tune_free(m);
        } else {
            assert_null(m);
            assert_true(strlen(err) > 0);
        }
    }
#undef RND
    print_message("fuzz: %d mutated files, %d accepted (valid variants), none crashed\n", iters, accepted);
    free(buf), free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_tree),    cmocka_unit_test(test_choose),
        cmocka_unit_test(test_choose_realized),
        cmocka_unit_test(test_gbdt_and_forest), cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_truncation_everywhere), cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_per_byte),        cmocka_unit_test(test_effective_repeat),
        cmocka_unit_test(test_resident),        cmocka_unit_test(test_fast_path_exact),
        cmocka_unit_test(test_combos),          cmocka_unit_test(test_domain),
        cmocka_unit_test(test_check_next),      cmocka_unit_test(test_check_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
