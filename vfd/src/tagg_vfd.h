/* The tagg virtual file driver: public facts for applications and the VOL. */
#ifndef TAGG_VFD_H
#define TAGG_VFD_H

#define TAGG_VFD_NAME "tagg"
/* Driver value in the range HDF5 reserves for testing (256-511). */
#define TAGG_VFD_VALUE 510

/* ctl opcode (experimental range) returning the core per-file object
 * (tagg_file_t *) through *output; used by the tagg VOL connector. */
#define TAGG_VFD_CTL_GET_FILE (H5FD_CTL_OPC_EXPER_MIN + 0x7a)

#endif
