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

int main(int argc, char **argv)
{
    int choose = argc == 3 && strcmp(argv[1], "--choose") == 0;
    int inside = argc == 3 && strcmp(argv[1], "--inside") == 0;
    int record = argc == 2 && strcmp(argv[1], "--record") == 0;
    if (!record && argc != 2 + (choose || inside)) {
        fprintf(stderr, "usage: tagg-tune-eval [--choose|--inside] MODEL < rows | tagg-tune-eval --record < rows\n");
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
