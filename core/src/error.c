#include "error.h"

#include <mpi.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The capturing sink of the calling thread (asynchronous workers). A POSIX
 * thread key, not ELF thread-local storage: HDF5 dlcloses plugins at H5close,
 * and a TLS block of an unloaded library stays in every thread's DTV, which
 * LeakSanitizer's exit scan then crashed on ("Tracer caught signal 11"). */
static pthread_key_t  sink_key;
static pthread_once_t sink_once = PTHREAD_ONCE_INIT;
static void           sink_key_make(void) { (void)pthread_key_create(&sink_key, NULL); }

static tagg_err_sink_t *sink_get(void)
{
    pthread_once(&sink_once, sink_key_make);
    return pthread_getspecific(sink_key);
}

void tagg_err_capture(tagg_err_sink_t *sink)
{
    pthread_once(&sink_once, sink_key_make);
    (void)pthread_setspecific(sink_key, sink);
}

static hid_t cls_g = H5I_INVALID_HID;
static hid_t maj_g = H5I_INVALID_HID;
static hid_t min_g[TAGG_E_COUNT_];
static const char *const min_text[TAGG_E_COUNT_] = {"bad configuration", "MPI call failed", "I/O failed",
                                                    "bad argument", "out of memory"};

static int ensure_class(void)
{
    if (cls_g != H5I_INVALID_HID)
        return 0;
    hid_t cls = H5Eregister_class("tagg", "tagg", "0.1");
    if (cls < 0)
        return -1;
    hid_t maj = H5Ecreate_msg(cls, H5E_MAJOR, "tagg");
    if (maj < 0)
        return -1;
    for (int i = 0; i < TAGG_E_COUNT_; i++)
        if ((min_g[i] = H5Ecreate_msg(cls, H5E_MINOR, min_text[i])) < 0)
            return -1;
    maj_g = maj;
    cls_g = cls;
    return 0;
}

void tagg_err_push(const char *file, const char *func, unsigned line, tagg_err_kind_t kind, const char *fmt, ...)
{
    char    msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tagg_err_sink_t *sink_tls = sink_get();
    if (sink_tls) {
        size_t used = strlen(sink_tls->msg);
        if (sink_tls->count++ == 0)
            snprintf(sink_tls->msg, sizeof sink_tls->msg, "%s", msg);
        else if (used + 3 < sizeof sink_tls->msg) { /* append what fits */
            size_t room = sizeof sink_tls->msg - used - 3, n = strlen(msg);
            memcpy(sink_tls->msg + used, "; ", 2);
            memcpy(sink_tls->msg + used + 2, msg, n < room ? n : room);
            sink_tls->msg[used + 2 + (n < room ? n : room)] = '\0';
        }
        return;
    }
    if (ensure_class() < 0) {
        fprintf(stderr, "tagg: %s\n", msg);
        return;
    }
    H5Epush2(H5E_DEFAULT, file, func, line, cls_g, maj_g, min_g[kind], "%s", msg);
}

void tagg_err_push_mpi(const char *file, const char *func, unsigned line, const char *what, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int  len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    tagg_err_push(file, func, line, TAGG_E_MPI, "%s failed: %s", what, text);
}

void tagg_err_term(void)
{
    if (cls_g == H5I_INVALID_HID)
        return;
    for (int i = 0; i < TAGG_E_COUNT_; i++)
        H5Eclose_msg(min_g[i]);
    H5Eclose_msg(maj_g);
    H5Eunregister_class(cls_g);
    cls_g = maj_g = H5I_INVALID_HID;
}
