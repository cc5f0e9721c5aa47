/* tagg errors: pushed on the HDF5 error stack under tagg's own error class.
 * Each plugin (it links core statically) registers the class once. */
#ifndef TAGG_CORE_ERROR_H
#define TAGG_CORE_ERROR_H

#include <hdf5.h>

/* Minor kinds of tagg errors. */
typedef enum { TAGG_E_CONFIG, TAGG_E_MPI, TAGG_E_IO, TAGG_E_ARGS, TAGG_E_NOMEM, TAGG_E_COUNT_ } tagg_err_kind_t;

/* Pushes "fmt ..." on the default error stack (class "tagg"). */
void tagg_err_push(const char *file, const char *func, unsigned line, tagg_err_kind_t kind, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Pushes an MPI error with the MPI library's own text. */
void tagg_err_push_mpi(const char *file, const char *func, unsigned line, const char *what, int mpi_code);
/* Background threads must not touch HDF5 (not thread-safe): a thread that
 * installs a sink gets the text of its TAGG_ERR calls collected there instead
 * of pushed (the first message whole, later ones appended while room lasts).
 * NULL restores pushing. Thread-local. */
typedef struct tagg_err_sink {
    char     msg[1024];
    unsigned count;
} tagg_err_sink_t;
void tagg_err_capture(tagg_err_sink_t *sink);

/* Releases the error class (plugin terminate). */
void tagg_err_term(void);

#define TAGG_ERR(kind, ...) tagg_err_push(__FILE__, __func__, __LINE__, kind, __VA_ARGS__)
#define TAGG_ERR_MPI(what, code) tagg_err_push_mpi(__FILE__, __func__, __LINE__, what, code)

/* GOTO-style helpers: set ret, push, jump to done. */
#define TAGG_GOTO(kind, ret, ...)                                                                           \
    do {                                                                                                \
        TAGG_ERR(kind, __VA_ARGS__);                                                                    \
        ret_value = (ret);                                                                              \
        goto done;                                                                                      \
    } while (0)

#endif
