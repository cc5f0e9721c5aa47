/* The measured check of a tuning model's choices (tuning_check=K,
 * tune.h "the measured check"): the model proposes, the clock disposes.
 *
 * A pattern with a rival (tune.h: the model's choice and the cost
 * model's where they differ, or the model's best of the other kind where they
 * agree) runs its choice K times, then the rival K times, and from then on
 * the one whose calls took the smaller median; where the medians are close
 * (tuning_check_close), or the rival's is the smaller (an overturn takes
 * every round), both run K times more, up to three rounds. A pattern
 * with a challenger (tune.h) then times their winner against it, a second
 * stage with a trial and a verdict of its own (its key: stage_key). Only the file's rank 0 times
 * a call (from the call's start to the end of its error agreement, so the
 * slowest rank's time), with the file's collective reads after it that ask
 * the same bytes again (repeat), up to the next read of other bytes, a write
 * or the close: the call's window. A read that leaves the bytes the re-reads
 * ask for in the read cache, or not, makes them fast or slow, and that is its
 * doing (session 62, GlusterFS VPIC AoS 32K: aggregated reads of the first
 * two variables each beat direct ones by 0.3-0.5 ms and left the first
 * re-read 4.5 ms of disk reads, which direct reads had cached, so the checked
 * reads ran at 71 % of the unchecked). Only re-reads: a window that took in
 * every untimed read after it would grow as the file's other patterns settle
 * (HACC SoA's nine variables are each a pattern, timed side by side), so the
 * rounds run later would be charged more than the first. Every timed call's window is
 * its own (up to 4 open at once: a timed re-read opens one while the first
 * read's stays open); and only rank 0 can reach a verdict; yet every rank must
 * make the same choice, or the ranks would plan different calls. So:
 *
 * - the verdicts (pattern -> state) live in a table of the process, changed
 *   only by messages that ride in the describe rows: a rank 0 that reached a
 *   verdict puts it in its row of its next tuned call, and every rank of that
 *   call applies every row's message, in rank order, after the gather;
 * - each row also carries the fingerprint of its rank's table before the
 *   call; a call in which the fingerprints differ (ranks that took part in
 *   different files: split communicators) ignores the table, every rank
 *   alike, and the choice stands, as without the check;
 * - rank 0 keeps the times (trials) for itself: a lost message (a call that
 *   failed) is sent again at the pattern's next timed call.
 *
 * Writes (tuning_check_writes) are timed to their file's next sync or close:
 * a write's call time leaves out what it leaves to the page cache and the
 * flush (session 44: direct writes of column blocks took 7.6-8.3 ms in the
 * call and 9.5 ms more at close), so timing calls alone would take direct
 * writes for the fastest. A timed write's window is its call and its share,
 * by bytes among the file's collective writes since the last sync, of the
 * seconds of that sync or of the close (the write-behind's flush, the sync,
 * the store's close): the share tagg-tune's training gives each write call of
 * the rest of its file's write time (add_deferred_writes). Up to 16 write
 * windows are open at once; a 17th drops the oldest (its share unknown).
 * Asynchronous files plan on worker threads, in any order: not checked. */
#include "engine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CHECK_SLOTS 64 /* verdicts and trials a process keeps (the memo's size: engine_tune.c) */

typedef struct {
    uint64_t key;
    int      state; /* tagg_tune_check_t */
} verdict_t;

typedef struct {
    uint64_t key;
    int      n[2];     /* [0] the choice, [1] the rival */
    int      later[2]; /* the untimed reads their windows took in (the verbose line) */
    double   t[2][TAGG_TUNE_CHECK_MAX];
} trial_t;

static struct {
    pthread_mutex_t mu;
    verdict_t       v[CHECK_SLOTS]; /* a ring: the same messages in the same order, the same table */
    int             next;
    uint64_t        fp;             /* XOR of mix(key, state) over the table */
    verdict_t       pending;        /* this process's verdict for its next tuned call's row (key 0: none) */
    trial_t         tr[CHECK_SLOTS]; /* this process's times, as a file's rank 0 */
    int             tnext;
} check = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t mix(uint64_t key, int state)
{
    uint64_t z = key ^ ((uint64_t)(unsigned)state * 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Calls of this file take part in the check (the configuration is the same
 * on every rank, so every rank answers alike). */
static int check_on(const tagg_file_t *f, const tagg_engine_t *e)
{
    return e->tune && tagg_engine_check_reads(f);
}

int tagg_engine_check_reads(const tagg_file_t *f)
{
    return f->cfg.tuning_check > 0 && !f->cfg.async;
}

int tagg_engine_check_writes(const tagg_file_t *f)
{
    return tagg_engine_check_reads(f) && f->cfg.tuning_check_writes;
}

static int verdict_find(uint64_t key) /* slot, or -1; check.mu held */
{
    for (int i = 0; i < CHECK_SLOTS; i++)
        if (check.v[i].key == key)
            return i;
    return -1;
}

static void verdict_set(uint64_t key, int state) /* check.mu held */
{
    int i = verdict_find(key);
    if (i < 0)
        i = check.next, check.next = (check.next + 1) % CHECK_SLOTS;
    if (check.v[i].key)
        check.fp ^= mix(check.v[i].key, check.v[i].state);
    check.v[i].key = key, check.v[i].state = state;
    check.fp ^= mix(key, state);
}

void tagg_engine_check_row(const tagg_file_t *f, const tagg_engine_t *e, tagg_engine_row_t *row)
{
    if (!check_on(f, e))
        return; /* zeros: no message, and a message kept for a call that takes part */
    pthread_mutex_lock(&check.mu);
    row->check_fp = check.fp;
    row->check_key = check.pending.key, row->check_state = (uint32_t)check.pending.state;
    check.pending.key = 0;
    pthread_mutex_unlock(&check.mu);
}

void tagg_engine_check_apply(const tagg_file_t *f, tagg_engine_t *e)
{
    e->check_agreed = 0, e->check_arm = 0;
    if (!check_on(f, e))
        return;
    int same = 1;
    for (int r = 1; r < f->size; r++)
        same &= e->rows[r].check_fp == e->rows[0].check_fp;
    e->check_agreed = same;
    pthread_mutex_lock(&check.mu);
    for (int r = 0; r < f->size; r++) {
        uint32_t s = e->rows[r].check_state;
        if (e->rows[r].check_key && s >= TAGG_TUNE_CHECK_TRY_RIVAL && s <= TAGG_TUNE_CHECK_AGAIN)
            verdict_set(e->rows[r].check_key, (int)s);
    }
    pthread_mutex_unlock(&check.mu);
}

/* The verdict table's key of a pattern's second stage (its first: the
 * pattern's own key). */
static uint64_t stage_key(uint64_t key)
{
    uint64_t k = mix(key, 0x5eed);
    return k ? k : 1;
}

static int state_of(uint64_t key) /* check.mu held */
{
    int i = verdict_find(key);
    return i < 0 ? TAGG_TUNE_CHECK_NONE : check.v[i].state;
}

int tagg_engine_check_choose(const tagg_file_t *f, tagg_engine_t *e, uint64_t key, int challenger, tagg_dir_t dir)
{
    e->check_arm = 0;
    if (!check_on(f, e) || !key || (dir == TAGG_WRITE && !tagg_engine_check_writes(f)))
        return 0;
    int s0 = TAGG_TUNE_CHECK_NONE, s1 = TAGG_TUNE_CHECK_NONE;
    if (e->check_agreed) { /* else every rank ignores the table alike */
        pthread_mutex_lock(&check.mu);
        s0 = state_of(key), s1 = state_of(stage_key(key));
        pthread_mutex_unlock(&check.mu);
    }
    tagg_tune_check_pick_t p = tagg_tune_check_pick((tagg_tune_check_t)s0, (tagg_tune_check_t)s1, challenger);
    e->check_key = p.stage == 1 ? stage_key(key) : key;
    e->check_arm = p.arm, e->check_pair[0] = p.pair[0], e->check_pair[1] = p.pair[1];
    if (p.arm == 2)
        e->tune_trials++; /* a rival or the challenger, timed */
    else if (p.run != 0)
        e->tune_overruled++; /* it runs (and may be timed again) because it was timed faster */
    return p.run;
}

/* A timed call's window ends: its seconds (the call and what is charged to
 * it after it) are the trial's, and the state they lead to is this process's
 * next message. Rank 0 only. */
static void window_close(tagg_file_t *f, const tagg_check_win_t *win, tagg_dir_t dir)
{
    uint64_t key = win->key;
    int      a = win->arm - 1, k = f->cfg.tuning_check, later = win->later;
    double   t = win->t;
    if (!key || a < 0 || a > 1)
        return;
    pthread_mutex_lock(&check.mu);
    trial_t *tr = NULL;
    for (int i = 0; i < CHECK_SLOTS && !tr; i++)
        if (check.tr[i].key == key)
            tr = &check.tr[i];
    if (!tr) {
        tr = &check.tr[check.tnext], check.tnext = (check.tnext + 1) % CHECK_SLOTS;
        memset(tr, 0, sizeof *tr), tr->key = key;
    }
    if (tr->n[a] < TAGG_TUNE_CHECK_MAX)
        tr->t[a][tr->n[a]++] = t, tr->later[a] += later;
    int i = verdict_find(key), cur = i < 0 ? TAGG_TUNE_CHECK_NONE : check.v[i].state;
    tagg_tune_check_t next = tagg_tune_check_next((tagg_tune_check_t)cur, tr->t[0], tr->n[0], tr->t[1], tr->n[1], k,
                                                  f->cfg.tuning_check_close / 100.0);
    int say = (int)next != cur && next != TAGG_TUNE_CHECK_TRY_RIVAL && f->cfg.verbose >= 2;
    int    nc = tr->n[0], nr = tr->n[1], lc = tr->later[0], lr = tr->later[1]; /* for the verbose line */
    double tc = say && nc ? tagg_tune_check_median(tr->t[0], nc) : 0, trv = say && nr ? tagg_tune_check_median(tr->t[1], nr) : 0;
    if ((int)next != cur)
        check.pending.key = key, check.pending.state = (int)next;
    pthread_mutex_unlock(&check.mu);
    if (say) {
        const char *cn = win->name[0] ? win->name[0] : "the choice";
        const char *rn = win->name[1] ? win->name[1] : "the rival";
        char        then[160], with[96];
        if (next == TAGG_TUNE_CHECK_AGAIN && trv < tc && !tagg_tune_check_close_call(tc, trv, f->cfg.tuning_check_close / 100.0))
            snprintf(then, sizeof then, "%s ahead, another %d of each before it runs (an overturn takes every round)",
                     rn, k);
        else if (next == TAGG_TUNE_CHECK_AGAIN)
            snprintf(then, sizeof then, "a close call, another %d of each", k);
        else
            snprintf(then, sizeof then, "%s for this pattern from now on", next == TAGG_TUNE_CHECK_RIVAL ? rn : cn);
        if (dir == TAGG_READ)
            snprintf(with, sizeof with, "with %d and %d later reads of their files", lr, lc);
        else
            snprintf(with, sizeof with, "with their shares of %d and %d syncs or closes of their files", lr, lc);
        printf("tagg: tuning check: %s %s in %.6fs, %s in %.6fs (medians of %d and %d calls, %s): %s\n", rn,
               dir == TAGG_READ ? "read" : "wrote", trv, cn, tc, nr, nc, with, then);
        fflush(stdout);
    }
}

static void windows_close(tagg_file_t *f, tagg_engine_t *e)
{
    for (int w = 0; w < e->check_nwin; w++)
        window_close(f, &e->check_win[w], TAGG_READ);
    e->check_nwin = 0;
}

/* Opens a window for the call that just ended in wins (n slots, *nwin open):
 * where every slot is taken, the oldest ends first (a read's: counted; a
 * write's: dropped, its share of the sync unknown). */
static void window_open(tagg_file_t *f, tagg_engine_t *e, tagg_check_win_t *wins, int n, int *nwin, tagg_dir_t dir,
                        int arm, double t, uint64_t bytes)
{
    if (*nwin == n) {
        if (dir == TAGG_READ)
            window_close(f, &wins[0], dir);
        memmove(&wins[0], &wins[1], sizeof wins[0] * (size_t)(n - 1));
        (*nwin)--;
    }
    tagg_check_win_t *w = &wins[(*nwin)++];
    w->key = e->check_key, w->arm = arm, w->t = t, w->later = 0, w->bytes = bytes;
    w->name[0] = e->check_names[e->check_pair[0]], w->name[1] = e->check_names[e->check_pair[1]];
}

void tagg_engine_check_done(tagg_file_t *f, tagg_engine_t *e, tagg_dir_t dir, int rc)
{
    int arm = e->check_arm;
    e->check_arm = 0;
    if (f->rank != 0 || !check_on(f, e))
        return;
    if (rc < 0) { /* the windows' times are not whole: not counted (the messages are sent again later) */
        e->check_nwin = 0, e->check_nwwin = 0;
        return;
    }
    double t = MPI_Wtime() - e->rec_t0;
    if (dir == TAGG_READ && e->repeat)
        for (int w = 0; w < e->check_nwin; w++)
            e->check_win[w].t += t, e->check_win[w].later++;
    else
        windows_close(f, e); /* other bytes, or a write: what follows is not the timed reads' doing */
    uint64_t bytes = 0;
    if (dir == TAGG_WRITE) {
        for (int r = 0; r < f->size; r++)
            bytes += e->rows[r].req.bytes;
        e->check_wbytes += bytes;
    }
    if (!arm)
        return;
    if (dir == TAGG_READ)
        window_open(f, e, e->check_win, (int)(sizeof e->check_win / sizeof e->check_win[0]), &e->check_nwin, dir,
                    arm, t, 0);
    else
        window_open(f, e, e->check_wwin, (int)(sizeof e->check_wwin / sizeof e->check_wwin[0]), &e->check_nwwin,
                    dir, arm, t, bytes);
}

void tagg_engine_check_synced(tagg_file_t *f, tagg_engine_t *e, double seconds, int rc)
{
    if (!e || f->rank != 0)
        return;
    uint64_t all = e->check_wbytes;
    e->check_wbytes = 0;
    for (int w = 0; w < e->check_nwwin && rc == 0; w++) {
        tagg_check_win_t *win = &e->check_wwin[w];
        if (all && seconds > 0)
            win->t += seconds * ((double)win->bytes / (double)all);
        win->later++;
        window_close(f, win, TAGG_WRITE);
    }
    e->check_nwwin = 0;
}

void tagg_engine_check_close(tagg_file_t *f, tagg_engine_t *e)
{
    if (e && f->rank == 0)
        windows_close(f, e); /* the write windows ended at the close's synced call, before it */
}
