/* Speculative direct access (tagg/callplan.h): the shapes of a rank's own
 * requests that the plan sent direct by cost, per direction, most recent
 * first. Pure: the engine asks before its describe gather and tells after the
 * plan. */
#include "tagg/callplan.h"

#include <string.h>

/* Same shape, wherever it lies: tagg_req_same_shape on one row. */
static int same(const tagg_req_desc_t *a, const tagg_req_desc_t *b)
{
  int64_t delta;
  return tagg_req_same_shape(a, b, 1, &delta);
}

static int find(const tagg_spec_t *s, int read, const tagg_req_desc_t *mine)
{
  for (int i = 0; i < s->n[read]; i++)
    if (same(&s->shape[read][i], mine)) return i;
  return -1;
}

static int usable(const tagg_req_desc_t *mine)
{
  /* raw data only: the plan sends file metadata and overlapping runs direct
   * for other reasons, and a failed row is not a shape */
  return mine->lo != UINT64_MAX && mine->bytes &&
         (mine->flags & (TAGG_REQ_RAW | TAGG_REQ_OVERLAP | TAGG_REQ_FAILED)) == TAGG_REQ_RAW;
}

int tagg_spec_guess(const tagg_spec_t *s, int read, const tagg_req_desc_t *mine)
{
  read = read != 0;
  return s && mine && usable(mine) && find(s, read, mine) >= 0;
}

void tagg_spec_learn(tagg_spec_t *s, int read, const tagg_req_desc_t *mine, const tagg_call_plan_t *plan)
{
  if (!s || !mine || !plan) return;
  read = read != 0;
  tagg_req_desc_t q = *mine;
  q.flags &= ~TAGG_REQ_DONE;
  if (!usable(&q)) return;
  int i = find(s, read, &q);
  int keep = plan->action == TAGG_CALL_DIRECT && (plan->all_done ? plan->spec_verdict == TAGG_SPEC_DIRECT : plan->by_cost);
  int wrong = plan->action == TAGG_CALL_AGGREGATE || (plan->all_done && plan->spec_verdict == TAGG_SPEC_AGGREGATE);
  if (wrong && i >= 0) { /* guessed wrong, or would have: forget it */
    memmove(&s->shape[read][i], &s->shape[read][i + 1], (size_t)(s->n[read] - 1 - i) * sizeof q);
    s->n[read]--;
    return;
  }
  if (!keep) return;
  if (i < 0) i = s->n[read] < TAGG_SPEC_SHAPES ? s->n[read]++ : TAGG_SPEC_SHAPES - 1; /* the oldest goes */
  memmove(&s->shape[read][1], &s->shape[read][0], (size_t)i * sizeof q); /* most recent first */
  s->shape[read][0] = q;
}
