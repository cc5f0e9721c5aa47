/* tagg-tune-eval: the library's evaluator of tuning models, from the shell
 * (tests compare it with scikit-learn; users check a model file).
 *
 *   tagg-tune-eval MODEL          one line of TAGG_TV_COUNT_ numbers a record on
 *                                 stdin (the vocabulary's order, tagg/tune.h);
 *                                 prints "SECONDS LEAF0 LEAF1 ..." per line
 *   tagg-tune-eval --choose MODEL the same input; prints the chosen settings
 *                                 and their predicted seconds
 *   tagg-tune-eval --inside MODEL the same input; prints 1 when the row's pattern
 *                                 lies in the model's recorded domain, else 0
 *   tagg-tune-eval --record       the same input plus six numbers a line (cost_direct,
 *                                 cost_aggr, t_plan, t_move, t_fs, t_total); prints the
 *                                 records tagg would append
 *   tagg-tune-eval --check K CLOSE  the measured check (tune.h) replayed: a line
 *                                 "N C1..CN R1..RN" is the seconds call i would take
 *                                 running the choice (Ci) or the rival (Ri); the
 *                                 check runs as rank 0 runs it (one stage, K calls a
 *                                 round, CLOSE percent), call i taking Ci or Ri as it
 *                                 runs one or the other; prints "WINNER CALLS": 0 the
 *                                 choice or 1 the rival, and the calls it took to
 *                                 settle (WINNER -1 when N calls did not settle it)
 * Exit status 1 with a message for a bad model or bad input. */
#include "tagg/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_row(double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (scanf("%lf", &x[i]) != 1)
            return i == 0 ? 0 : -1;
    return 1;
}

/* --check: one replay a line, until the input ends. */
static int replay_checks(int k, double close)
{
    enum { MAXN = 4096 };
    static double c[MAXN], r[MAXN];
    int           n;
    while (scanf("%d", &n) == 1) {
        if (n < 0 || n > MAXN)
            return fprintf(stderr, "tagg-tune-eval: --check: N must be 0..%d\n", MAXN), 1;
        for (int i = 0; i < 2 * n; i++)
            if (scanf("%lf", i < n ? &c[i] : &r[i - n]) != 1)
                return fprintf(stderr, "tagg-tune-eval: --check: a line needs N and 2N seconds\n"), 1;
        double            t[2][TAGG_TUNE_CHECK_MAX];
        int               nt[2] = {0, 0}, i = 0;
        tagg_tune_check_t s     = TAGG_TUNE_CHECK_NONE;
        for (; i < n && s != TAGG_TUNE_CHECK_RIVAL && s != TAGG_TUNE_CHECK_CHOICE; i++) {
            tagg_tune_check_pick_t p = tagg_tune_check_pick(s, TAGG_TUNE_CHECK_NONE, 0);
            int                    a = p.arm - 1; /* 0 the choice, 1 the rival */
            if (a < 0 || a > 1)
                return fprintf(stderr, "tagg-tune-eval: --check: state %d times no candidate\n", (int)s), 1;
            if (nt[a] < TAGG_TUNE_CHECK_MAX)
                t[a][nt[a]++] = a ? r[i] : c[i];
            s = tagg_tune_check_next(s, t[0], nt[0], t[1], nt[1], k, close / 100.0);
        }
        int settled = s == TAGG_TUNE_CHECK_RIVAL || s == TAGG_TUNE_CHECK_CHOICE;
        printf("%d %d\n", settled ? s == TAGG_TUNE_CHECK_RIVAL : -1, i);
    }
    return feof(stdin) ? 0 : (fprintf(stderr, "tagg-tune-eval: --check: N expected\n"), 1);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--check") == 0) {
        char  *e1, *e2;
        long   k     = strtol(argv[2], &e1, 10);
        double close = strtod(argv[3], &e2);
        if (*e1 || *e2 || k < 1 || k > TAGG_TUNE_CHECK_MAX || !(close >= 0 && close <= 100000)) {
            fprintf(stderr, "tagg-tune-eval: --check K CLOSE: K 1..%d, CLOSE 0..100000 (percent)\n", TAGG_TUNE_CHECK_MAX);
            return 2;
        }
        return replay_checks((int)k, close);
    }
    int choose = argc == 3 && strcmp(argv[1], "--choose") == 0;
    int inside = argc == 3 && strcmp(argv[1], "--inside") == 0;
    int record = argc == 2 && strcmp(argv[1], "--record") == 0;
    if (!record && argc != 2 + (choose || inside)) {
        fprintf(stderr, "usage: tagg-tune-eval [--choose|--inside] MODEL < rows | tagg-tune-eval --record < rows | "
                        "tagg-tune-eval --check K CLOSE < replays\n");
        return 2;
    }
    double x[TAGG_TV_COUNT_ + 6];
    int    rc;
    if (record) {
        char line[4096];
        while ((rc = read_row(x, TAGG_TV_COUNT_ + 6)) > 0) {
            tagg_tune_record_t r;
            const double      *t = x + TAGG_TV_COUNT_;
            memcpy(r.v, x, sizeof r.v);
            r.cost_direct = t[0], r.cost_aggr = t[1];
            r.t_plan = t[2], r.t_move = t[3], r.t_fs = t[4], r.t_total = t[5];
            if (tagg_tune_record_format(&r, "write", "a \"quoted\"\\name\n.h5", line, sizeof line) < 0)
                return fprintf(stderr, "tagg-tune-eval: record too long\n"), 1;
            fputs(line, stdout);
        }
        return rc < 0 ? (fprintf(stderr, "tagg-tune-eval: a row needs %d numbers\n", TAGG_TV_COUNT_ + 6), 1) : 0;
    }
    char               err[1024];
    tagg_tune_model_t *m = NULL;
    if (tagg_tune_load(argv[argc - 1], &m, err, sizeof err) < 0) {
        fprintf(stderr, "tagg-tune-eval: %s\n", err);
        return 1;
    }
    int *leaves = malloc(sizeof *leaves * (size_t)tagg_tune_trees(m));
    while (leaves && (rc = read_row(x, TAGG_TV_COUNT_)) > 0) {
        if (inside) {
            printf("%d\n", tagg_tune_inside(m, x));
            continue;
        }
        if (choose) {
            int    forced[TAGG_TV_COUNT_] = {0};
            double t                      = tagg_tune_choose(m, x, forced);
            printf("%.17g", t);
            for (int v = TAGG_TV_FIRST_SETTING; v < TAGG_TV_COUNT_; v++)
                printf(" %s=%.17g", tagg_tune_var_name(v), x[v]);
            printf("\n");
            continue;
        }
        printf("%.17g", tagg_tune_predict(m, x, leaves));
        for (int t = 0; t < tagg_tune_trees(m); t++)
            printf(" %d", leaves[t]);
        printf("\n");
    }
    free(leaves);
    tagg_tune_free(m);
    if (rc < 0) {
        fprintf(stderr, "tagg-tune-eval: a row needs %d numbers\n", TAGG_TV_COUNT_);
        return 1;
    }
    return 0;
}
