/* The round loop's helper thread (core/src/iothread.c): jobs run one at a
 * time on another thread, in order, with their results and their TAGG_ERR
 * text handed back to the owner; a helper can be stopped idle and after
 * many jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "error.h"
#include "iothread.h"

typedef struct {
    int       k;
    pthread_t ran_on;
    int      *seen; /* the job's k is written here: jobs run one after the other */
} job_t;

static int job(void *arg)
{
    job_t *j   = arg;
    j->ran_on  = pthread_self();
    *j->seen   = j->k;
    if (j->k % 3 == 0) {
        TAGG_ERR(TAGG_E_IO, "job %d failed", j->k);
        return -1;
    }
    return j->k;
}

static void test_jobs_in_order(void **state)
{
    (void)state;
    tagg_iothread_t *t = tagg_iothread_new();
    assert_non_null(t);
    int seen = -1;
    for (int k = 1; k <= 2000; k++) {
        job_t j = {.k = k, .seen = &seen};
        tagg_iothread_start(t, job, &j);
        tagg_err_sink_t sink;
        memset(&sink, 0x55, sizeof sink);
        int rc = tagg_iothread_wait(t, &sink);
        assert_int_equal(seen, k);
        assert_false(pthread_equal(j.ran_on, pthread_self()));
        if (k % 3 == 0) {
            assert_int_equal(rc, -1);
            assert_int_equal(sink.count, 1);
            char want[32];
            snprintf(want, sizeof want, "job %d failed", k);
            assert_string_equal(sink.msg, want);
        }
        else {
            assert_int_equal(rc, k);
            assert_int_equal(sink.count, 0);
        }
    }
    tagg_iothread_free(t);
}

static void test_free_idle(void **state)
{
    (void)state;
    tagg_iothread_free(NULL);
    for (int i = 0; i < 50; i++)
        tagg_iothread_free(tagg_iothread_new());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_in_order),
        cmocka_unit_test(test_free_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
