/* redis-lite: the floating point half of Redis's util.c, in C on purpose.
 *
 * INCRBYFLOAT and HINCRBYFLOAT parse with strtold(), add in `long double`
 * and print with "%.17Lf". On x86_64 `long double` is the 80-bit x87
 * extended type (64-bit mantissa, exponent up to ~1e4932), which Rust does
 * not have, and glibc's strtod()/strtold() accept a grammar (hex floats,
 * "infinity", denormals with ERANGE, ...) that Rust's parser does not match
 * exactly. So the few functions whose answers clients can see are here, with
 * the same libc calls Redis makes:
 *
 *   rl_string2d    util.c string2d      (getDoubleFromObject: ZADD, ...)
 *   rl_string2ld   util.c string2ld     (getLongDoubleFromObject)
 *   rl_ld2string   util.c ld2string     (createStringObjectFromLongDouble)
 *   rl_ld_*        the arithmetic INCRBYFLOAT does on a long double
 *
 * Rust holds a long double as 16 opaque, 16-aligned bytes (LongDouble in
 * util.rs) and only ever passes pointers to it. */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rust reserves 16 bytes aligned to 16: enough for x87 extended (x86_64),
 * IEEE quad (aarch64 Linux) and plain double (macOS, MSVC). */
_Static_assert(sizeof(long double) <= 16, "long double does not fit in 16 bytes");
_Static_assert(_Alignof(long double) <= 16, "long double alignment above 16");

/* MAX_LONG_DOUBLE_CHARS: the buffer string2ld copies into and ld2string
 * prints into; longer inputs are not a valid float. "%.17Lf" of the largest
 * x87 value is about 4950 characters, so 5k always fits. */
#define MAX_LONG_DOUBLE_CHARS (5 * 1024)

/* Short strings are copied to the stack to add the NUL strtod() needs. */
#define STRTOD_STACK_BUF 128

/* string2d: the whole buffer must be one strtod() number. Rejected: empty,
 * leading space (strtod would skip it), trailing bytes (an embedded NUL
 * included), overflow to +-HUGE_VAL, underflow to 0, and NaN. Accepted:
 * "inf"/"infinity" in any case, hex floats, a leading '+', denormals. */
int rl_string2d(const char *s, size_t slen, double *dp) {
    char stackbuf[STRTOD_STACK_BUF];
    char *buf = stackbuf;
    char *eptr;
    double value;
    int ok;

    if (slen == 0 || isspace((unsigned char)s[0])) return 0;
    if (slen >= sizeof(stackbuf)) {
        buf = malloc(slen + 1);
        if (buf == NULL) return 0;
    }
    memcpy(buf, s, slen);
    buf[slen] = '\0';

    errno = 0;
    value = strtod(buf, &eptr);
    ok = !((size_t)(eptr - buf) != slen ||
           (errno == ERANGE &&
            (value == HUGE_VAL || value == -HUGE_VAL || fpclassify(value) == FP_ZERO)) ||
           isnan(value));
    if (buf != stackbuf) free(buf);
    if (ok) *dp = value;
    return ok;
}

/* string2ld: as string2d, with strtold(), and a length limit: inputs of
 * MAX_LONG_DOUBLE_CHARS bytes or more are refused before parsing. */
int rl_string2ld(const char *s, size_t slen, long double *dp) {
    char buf[MAX_LONG_DOUBLE_CHARS];
    char *eptr;
    long double value;

    if (slen == 0 || slen >= sizeof(buf)) return 0;
    memcpy(buf, s, slen);
    buf[slen] = '\0';

    errno = 0;
    value = strtold(buf, &eptr);
    if (isspace((unsigned char)buf[0]) || eptr[0] != '\0' || (size_t)(eptr - buf) != slen ||
        (errno == ERANGE &&
         (value == HUGE_VALL || value == -HUGE_VALL || fpclassify(value) == FP_ZERO)) ||
        isnan(value))
        return 0;
    *dp = value;
    return 1;
}

/* ld2string modes, the values of util.h's ld2string_mode. */
#define LD_STR_AUTO 0  /* "%.17Lg" */
#define LD_STR_HUMAN 1 /* "%.17Lf", trailing zeroes removed */
#define LD_STR_HEX 2   /* "%La", exact */

/* ld2string: print `*value` into buf (len bytes, NUL-terminated); returns the
 * length, or 0 (and an empty string) if it did not fit or mode is unknown. */
int rl_ld2string(char *buf, size_t len, const long double *value, int mode) {
    size_t l = 0;
    long double v = *value;

    if (len == 0) return 0;
    if (isinf(v)) {
        /* Spelled out rather than trusting every libc's printf. */
        if (len < 5) goto err;
        if (v > 0) {
            memcpy(buf, "inf", 3);
            l = 3;
        } else {
            memcpy(buf, "-inf", 4);
            l = 4;
        }
    } else {
        switch (mode) {
        case LD_STR_AUTO:
            l = snprintf(buf, len, "%.17Lg", v);
            if (l + 1 > len) goto err;
            break;
        case LD_STR_HEX:
            l = snprintf(buf, len, "%La", v);
            if (l + 1 > len) goto err;
            break;
        case LD_STR_HUMAN:
            /* 17 digits after the point, then drop the zeroes (and a bare
             * point) at the end: 10.5 + 0.1 prints as "10.6". */
            l = snprintf(buf, len, "%.17Lf", v);
            if (l + 1 > len) goto err;
            if (strchr(buf, '.') != NULL) {
                char *p = buf + l - 1;
                while (*p == '0') {
                    p--;
                    l--;
                }
                if (*p == '.') l--;
            }
            /* A tiny negative result rounds to "-0": say "0". */
            if (l == 2 && buf[0] == '-' && buf[1] == '0') {
                buf[0] = '0';
                l = 1;
            }
            break;
        default:
            goto err;
        }
    }
    buf[l] = '\0';
    return (int)l;
err:
    buf[0] = '\0';
    return 0;
}

void rl_ld_from_ll(long long v, long double *out) { *out = (long double)v; }

void rl_ld_from_double(double v, long double *out) { *out = (long double)v; }

double rl_ld_to_double(const long double *v) { return (double)*v; }

/* value += incr, the INCRBYFLOAT arithmetic, in long double precision. */
void rl_ld_add(const long double *a, const long double *b, long double *out) { *out = *a + *b; }

/* isnan(value) || isinf(value): INCRBYFLOAT refuses to store such results. */
int rl_ld_is_nan_or_inf(const long double *v) { return isnan(*v) || isinf(*v); }
