#include "iothread.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct tagg_iothread {
    pthread_t       thread;
    pthread_mutex_t mu;
    pthread_cond_t  go, done;
    int (*fn)(void *);
    void           *arg;
    int             state; /* 0 idle, 1 a job waits or runs, 2 its result is ready, 3 stop */
    int             rc;
    tagg_err_sink_t sink;
};

static void *loop(void *p)
{
    tagg_iothread_t *t = p;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->state != 1 && t->state != 3)
            pthread_cond_wait(&t->go, &t->mu);
        if (t->state == 3)
            break;
        pthread_mutex_unlock(&t->mu);
        tagg_err_sink_t sink;
        memset(&sink, 0, sizeof sink);
        tagg_err_capture(&sink);
        int rc = t->fn(t->arg);
        tagg_err_capture(NULL);
        pthread_mutex_lock(&t->mu);
        t->rc = rc, t->sink = sink;
        if (t->state == 3) /* stopped while it ran (a caller that did not wait): end */
            break;
        t->state = 2;
        pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

tagg_iothread_t *tagg_iothread_new(void)
{
    tagg_iothread_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_cond_init(&t->done, NULL);
    if (pthread_create(&t->thread, NULL, loop, t) != 0) {
        pthread_cond_destroy(&t->done);
        pthread_cond_destroy(&t->go);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    return t;
}

void tagg_iothread_start(tagg_iothread_t *t, int (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&t->mu);
    t->fn = fn, t->arg = arg, t->state = 1;
    pthread_cond_signal(&t->go);
    pthread_mutex_unlock(&t->mu);
}

int tagg_iothread_wait(tagg_iothread_t *t, tagg_err_sink_t *sink)
{
    pthread_mutex_lock(&t->mu);
    while (t->state != 2)
        pthread_cond_wait(&t->done, &t->mu);
    t->state = 0;
    int rc = t->rc;
    *sink  = t->sink;
    pthread_mutex_unlock(&t->mu);
    return rc;
}

void tagg_iothread_free(tagg_iothread_t *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->state = 3;
    pthread_cond_signal(&t->go);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->go);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
