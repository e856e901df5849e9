/* jsontext: escaped NULs and UTF-8 in raw JSON text; see jsontext.h. */
#include "jsontext.h"

#include <stdint.h>

long jsontext_nul_escape(const char *text, size_t len)
{
    /* Outside strings valid JSON has no backslash, and inside one a backslash always starts a
     * two-character escape (or \uXXXX): skipping each escape's second character is enough for
     * "\\u0000" (a backslash, then the text u0000) not to count. */
    for (size_t i = 0; i + 1 < len; i++) {
        if (text[i] != '\\')
            continue;
        if (text[i + 1] == 'u' && i + 5 < len && text[i + 2] == '0' && text[i + 3] == '0' && text[i + 4] == '0' &&
            text[i + 5] == '0')
            return (long)i;
        i++;
    }
    return -1;
}

long jsontext_bad_utf8(const char *text, size_t len)
{
    const uint8_t *s = (const uint8_t *)text;
    for (size_t i = 0; i < len;) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!n || i + n > len)
            return (long)i;
        /* the second byte's range excludes overlongs (E0, F0), surrogates (ED) and > U+10FFFF (F4) */
        uint8_t lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return (long)i;
        for (size_t k = 2; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return (long)i;
        i += n;
    }
    return -1;
}
