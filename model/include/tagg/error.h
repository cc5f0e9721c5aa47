/* tagg/error.h - status codes and the caller-supplied error buffer of libtagg_model.
 *
 * Every fallible function returns an int status (TAGG_OK or a negative TAGG_E*)
 * and, when the caller passes a non-NULL tagg_err_t, writes a readable message
 * into it.  The library never aborts or exits. */
#ifndef TAGG_ERROR_H
#define TAGG_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TAGG_OK = 0,
  TAGG_EINVAL = -1,  /* bad argument */
  TAGG_ENOMEM = -2,  /* allocation failed */
  TAGG_EIO = -3,     /* file could not be opened or read */
  TAGG_EPARSE = -4,  /* malformed topology / tier / pattern description */
  TAGG_ENOCAND = -5  /* no aggregator candidate satisfies capacity/persistency */
};

#define TAGG_ERR_MSG_MAX 512

typedef struct tagg_err {
  int code;                    /* last status written */
  char msg[TAGG_ERR_MSG_MAX];  /* NUL-terminated, possibly truncated message */
} tagg_err_t;

/* Short name of a status code ("TAGG_EPARSE"...). */
const char *tagg_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
